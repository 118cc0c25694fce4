/**
 * `GET /v1/search?q=&limit=&cursor=` (issue 30 item 3; docs/search.md): the tenant's sessions searched,
 * best first, each hit with a marked snippet and the board's link to its timeline row. Scope `read` or
 * `board`; a token bound to a session searches that session only, whatever `session:` the query names.
 */
import type { Context } from 'hono';
import { SearchParams } from '../../../contract/search.js';
import { searchSessions } from '../../../service/search/search.js';
import { AppError } from '../../../service/shared/errors.js';
import type { AppEnv } from '../../auth.js';
import { AUTHED, defineRoute, json } from '../../route.js';
import { SearchAnswerDoc, SearchQuery } from './schemas.js';

/**
 * What a search takes of the token's rate limit, in requests' worth: a query reads an index (up to a few
 * seconds' work on a large tenant, `SearchDeps.timeoutMs`), not one record as a plain read does.
 */
export const SEARCH_COST = 5;

/**
 * A `q` the query schema refused (missing, empty or too long) as the query language's own refusal,
 * `bad_query`, so that a client handles every bad query alike; anything else as the schemas said.
 */
export function queryRefusal(err: AppError, c: Context<AppEnv>): AppError {
  const given = c.req.queries('q') ?? [];
  if (given.length > 1) return err;
  const q = given[0] ?? '';
  const checked = SearchParams.shape.q.safeParse(q);
  if (checked.success) return err;
  return new AppError('bad_query', `${checked.error.issues[0]?.message ?? 'the query is not valid'}`, {
    position: null,
    query: q,
  });
}

export const searchRoute = defineRoute({
  route: {
    method: 'get',
    path: '/v1/search',
    operationId: 'search',
    tags: ['search'],
    summary: "Search the tenant's sessions",
    description: [
      'Words and "quoted phrases" must all match; `-word` must not; filters `agent:`, `person:`, `state:`,',
      '`tool:`, `type:` (message, output, action, note, correction, report), `session:`, `after:` and',
      '`before:` (a UTC day, an instant or a span back from now: `7d`) narrow it (docs/search.md). Hits',
      'are ranked; each has a snippet with its matches marked (`hit: true`) and `link`, the board row.',
      'A query that does not parse is 400 `bad_query` whose message says what and at which character',
      '(`details.position`). A session-bound token searches its own session only. `lag_seconds`: how far',
      'the index may be behind ingest.',
    ].join(' '),
    request: { query: SearchQuery },
    responses: { 200: json('a page of hits, best first', SearchAnswerDoc) },
  },
  auth: 'bearer',
  scopes: ['read', 'board'],
  cost: SEARCH_COST,
  errors: ['bad_request', 'bad_query', 'invalid_cursor', ...AUTHED, 'search_unavailable', 'search_timeout'],
  onInvalid: (err, c) => {
    throw queryRefusal(err, c);
  },
  handler: async (c) => {
    const { q, limit, cursor } = c.req.valid('query');
    const params: SearchParams = { q, limit, ...(cursor ? { cursor } : {}) };
    return c.json(await searchSessions(c.get('ctx'), params), 200);
  },
});
