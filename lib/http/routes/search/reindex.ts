/**
 * `POST /v1/search/reindex` (scope `admin`, issue 30 item 5): the index of one session, or of every
 * session of the tenant, dropped and rebuilt from the stored segments, queued (202) and done by the
 * indexer; `GET /v1/search/status` says when (`queued: 0`).
 */
import { requestReindex } from '../../../service/search/reindex.js';
import { parseInput } from '../../../service/shared/errors.js';
import { jsonBody } from '../../params.js';
import { AUTHED, defineRoute, JSON_BODY, json, WRITE_FAULTS } from '../../route.js';
import { ReindexAnswerDoc, ReindexInput } from './schemas.js';

/** What queueing a rebuild takes of the token's rate limit: it makes the indexer read segments again. */
export const REINDEX_COST = 10;

export const reindexRoute = defineRoute({
  route: {
    method: 'post',
    path: '/v1/search/reindex',
    operationId: 'reindexSearch',
    tags: ['search'],
    summary: 'Rebuild the search index from the stored segments',
    description: [
      'Queues the rebuild of one session (`{"sid": "s_…"}`; 404 when the tenant has no such session) or,',
      'with an empty body or `{}`, of every session of the tenant. The rebuild reads the stored segments',
      'and gives the same index as indexing them as they arrived; it is done once',
      '`GET /v1/search/status` answers `queued: 0`.',
    ].join(' '),
    responses: { 202: json('the rebuild is queued', ReindexAnswerDoc) },
  },
  auth: 'bearer',
  scopes: ['admin'],
  body: { contentType: 'application/json', schema: ReindexInput, optional: true },
  cost: REINDEX_COST,
  errors: [...JSON_BODY, ...AUTHED, 'not_found', 'search_unavailable', ...WRITE_FAULTS],
  handler: async (c) => {
    const body = parseInput(ReindexInput, await jsonBody(c, { emptyAs: {} }), 'the reindex request');
    return c.json(await requestReindex(c.get('ctx'), body.sid ?? null), 202);
  },
});
