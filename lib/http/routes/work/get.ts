/** `GET /v1/work/{id}`: one work item with its freshness now. */

import { WorkView } from '../../../contract/work.js';
import { getWork } from '../../../service/work/index.js';
import { AUTHED, defineRoute, json } from '../../route.js';
import { WorkPath } from './shared.js';

export const workGetRoute = defineRoute({
  route: {
    method: 'get',
    path: '/v1/work/{id}',
    operationId: 'workGet',
    tags: ['work'],
    summary: 'A work item',
    description:
      'Its freshness is decided now: observed while the lease runs, unknown once it expired, stopped.',
    request: { params: WorkPath },
    responses: { 200: json('the work item', WorkView) },
  },
  auth: 'bearer',
  scopes: ['read', 'board', 'report'],
  errors: ['invalid_id', ...AUTHED, 'not_found'],
  handler: async (c) => c.json(await getWork({ ctx: c.get('ctx'), id: c.req.valid('param').id }), 200),
});
