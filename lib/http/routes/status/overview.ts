/**
 * `GET /v1/board/overview?state=&agent=&person=&q=&page=&limit=`: the board's overview as JSON (issue
 * 14.1, `getOverview`): every session urgent first, filtered and paged, with an `ETag`; a request whose
 * `If-None-Match` names it is answered 304 with no body, so a client polling an unchanged board costs a
 * read and a few bytes. Takes the board's cookie as `GET /v1/board` does.
 */
import { z } from 'zod';
import { getOverview } from '../../../service/board/overview.js';
import { OVERVIEW_PAGE_SIZE, Overview, OverviewFilters } from '../../../service/board/overview-schemas.js';
import { namesEtag } from '../../etag.js';
import { AUTHED, defineRoute, json } from '../../route.js';

// Digits only (as `Limit` in ../../params.ts): `z.coerce` would read '0x10' as 16 and ' 5' as 5.
const OverviewPage = z
  .string()
  .regex(/^\d{1,6}$/, 'a page is a whole number from 1')
  .transform(Number)
  .pipe(z.number().int().min(1))
  .optional()
  .transform((v) => v ?? 1)
  .describe('which page, from 1 (default 1); a page past the last answers no rows');
const OverviewLimit = z
  .string()
  .regex(/^\d{1,3}$/, 'a limit is a whole number from 1 to 200')
  .transform(Number)
  .pipe(z.number().int().min(1).max(200))
  .optional()
  .transform((v) => v ?? OVERVIEW_PAGE_SIZE)
  .describe(`rows on a page, 1 to 200 (default ${OVERVIEW_PAGE_SIZE})`);

const ETAG = {
  description: 'the overview’s `etag`, quoted: send it back as `If-None-Match`',
  schema: { type: 'string' as const },
};

export const getOverviewRoute = defineRoute({
  route: {
    method: 'get',
    path: '/v1/board/overview',
    operationId: 'getOverview',
    tags: ['status'],
    summary: 'The board, urgent first',
    description:
      'Every session of the tenant that matches the filters, grouped blocked, needs review, working, done ' +
      'recently, the rest, then those without segments; within the waiting groups the longest waiting ' +
      'first. A page at a time, with each group’s count, the facets for the filter menus and an `ETag` ' +
      '(`If-None-Match` → 304 when nothing shown changed).',
    request: {
      query: z.object({ ...OverviewFilters.shape, page: OverviewPage, limit: OverviewLimit }),
    },
    responses: {
      200: { ...json('a page of the overview', Overview), headers: { etag: ETAG } },
      304: { description: 'nothing shown changed since the `If-None-Match` ETag', headers: { etag: ETAG } },
    },
  },
  auth: 'bearer_or_cookie',
  scopes: ['board', 'read'],
  errors: ['bad_request', ...AUTHED],
  handler: async (c) => {
    const { page, limit, ...filters } = c.req.valid('query');
    const overview = await getOverview({ ctx: c.get('ctx'), filters, page, limit });
    const etag = `"${overview.etag}"`;
    // The app answers every token's request `Cache-Control: no-store`: a client sends the tag back itself.
    c.header('ETag', etag);
    if (namesEtag(c.req.header('if-none-match'), etag)) return c.body(null, 304);
    return c.json(overview, 200);
  },
});
