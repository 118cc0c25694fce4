/**
 * The search routes' documented shapes (issue 30): the contract's schemas (lib/contract/search.ts) named
 * for the OpenAPI document, and the query and body the routes validate before the verb runs.
 */
import { z } from 'zod';
import {
  DEFAULT_SEARCH_LIMIT,
  MAX_SEARCH_LIMIT,
  ReindexAnswer,
  type ReindexRequest,
  SearchAnswer,
  SearchParams,
  SearchStatus,
} from '../../../contract/search.js';
import { SessionId } from '../../params.js';

export const SearchAnswerDoc = SearchAnswer.meta({
  id: 'SearchAnswer',
  description: 'a page of hits, best first, with the query as parsed and how far the index lags ingest',
});
export const SearchStatusDoc = SearchStatus.meta({
  id: 'SearchStatus',
  description: "how far the tenant's index is behind ingest, and its size",
});
export const ReindexAnswerDoc = ReindexAnswer.meta({
  id: 'ReindexAnswer',
  description: 'what a reindex queued; done once GET /v1/search/status answers queued 0',
});

/** `POST /v1/search/reindex`'s body: a session id of the right form, or nothing (every session). */
export const ReindexInput = z
  .strictObject({ sid: SessionId.optional().describe('only this session; absent: every session') })
  .meta({ id: 'ReindexRequest', description: 'which sessions to rebuild the index of' }) satisfies z.ZodType<
  ReindexRequest,
  unknown
>;

/**
 * `GET /v1/search`'s query string, as `SearchParams` but with `limit` read as digits only (as every
 * listing's, lib/http/params.ts: `z.coerce` would read '0x10' as 16 and ' 5' as 5).
 */
export const SearchQuery = z.object({
  q: SearchParams.shape.q.describe(
    'the query, as typed (docs/search.md): words, "phrases", -exclusions, filters',
  ),
  limit: z
    .string()
    .regex(/^\d{1,3}$/, `a limit is a whole number from 1 to ${MAX_SEARCH_LIMIT}`)
    .transform(Number)
    .pipe(z.number().int().min(1).max(MAX_SEARCH_LIMIT))
    .optional()
    .transform((v) => v ?? DEFAULT_SEARCH_LIMIT)
    .describe(`how many hits to answer, 1 to ${MAX_SEARCH_LIMIT} (default ${DEFAULT_SEARCH_LIMIT})`),
  cursor: SearchParams.shape.cursor.describe(
    'the `next_cursor` of the previous answer, to read the page after it; omit for the first page',
  ),
});
