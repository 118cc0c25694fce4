/** `GET /v1/search/status` (issue 30 item 5): how far the tenant's search index is behind ingest. */
import { searchStatus } from '../../../service/search/reindex.js';
import { AUTHED, defineRoute, json } from '../../route.js';
import { SearchStatusDoc } from './schemas.js';

export const searchStatusRoute = defineRoute({
  route: {
    method: 'get',
    path: '/v1/search/status',
    operationId: 'searchStatus',
    tags: ['search'],
    summary: "The search index's lag and size",
    description: [
      '`queued`: entries of the indexing queue not yet indexed (null where the platform keeps the queue,',
      'AWS); `lag_seconds`: the age of the oldest of them (0 when none); `docs` and `bytes`: what the',
      "tenant's index holds. A reindex (`POST /v1/search/reindex`) is done once `queued` is 0.",
    ].join(' '),
    responses: { 200: json("the tenant's index", SearchStatusDoc) },
  },
  auth: 'bearer',
  scopes: ['read', 'board'],
  errors: [...AUTHED, 'search_unavailable'],
  handler: async (c) => c.json(await searchStatus(c.get('ctx')), 200),
});
