/**
 * `GET /board/fragment?<filters>`: the overview region's HTML alone, for the page's conditional poll where
 * the deployment cannot stream (`AppDeps.live` 'poll', issue 14.2). Its `ETag` is the overview's; a
 * request whose `If-None-Match` names it is answered 304 with no body (htmx swaps nothing), so a board
 * that did not change costs a read and a few bytes every 5 s.
 */
import { OverviewRegion } from '../../../board/overview.js';
import { namesEtag } from '../../etag.js';
import { defineRoute, page } from '../../route.js';
import { etagHeader, LiveQuery, liveAuth, liveView, overviewFor } from '../pages/overview-common.js';

export const boardFragment = defineRoute({
  route: {
    method: 'get',
    path: '/board/fragment',
    operationId: 'boardFragment',
    tags: ['board pages'],
    summary: 'The overview region (conditional poll)',
    middleware: [liveAuth],
    request: { query: LiveQuery },
    responses: {
      200: page('the HTML of the overview region for the query, with its `ETag`'),
      304: { description: 'nothing changed since the `If-None-Match` ETag' },
    },
  },
  auth: 'bearer_or_cookie',
  scopes: ['board'],
  errors: ['bad_request', 'unauthorized', 'forbidden'],
  handler: async (c) => {
    const q = c.req.valid('query');
    const view = liveView(q);
    const overview = await overviewFor(c, q, view);
    const etag = etagHeader(overview);
    c.header('ETag', etag);
    if (namesEtag(c.req.header('if-none-match'), etag)) return c.body(null, 304);
    return c.html(<OverviewRegion overview={overview} view={view} limit={q.limit} />);
  },
});
