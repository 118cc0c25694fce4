/** `POST /v1/work/{id}/heartbeat` (seed 004, docs/work.md). */

import { WorkHeartbeat, WorkView } from '../../../contract/work.js';
import { heartbeatWork } from '../../../service/work/index.js';
import { jsonBody } from '../../params.js';
import { defineRoute, json } from '../../route.js';
import { WORK_WRITE, WorkPath } from './shared.js';

export const workHeartbeatRoute = defineRoute({
  route: {
    method: 'post',
    path: '/v1/work/{id}/heartbeat',
    operationId: 'workHeartbeat',
    tags: ['work'],
    summary: 'Renew a work lease',
    description:
      'Renews the lease only: no history entry (seed 004 step 3). A stopped item answers 409 `work_stopped`.',
    request: { params: WorkPath },
    responses: { 200: json('the work item now', WorkView) },
  },
  auth: 'bearer',
  scopes: ['report'],
  body: { contentType: 'application/json', schema: WorkHeartbeat },
  errors: [...WORK_WRITE, 'work_stopped'],
  handler: async (c) => {
    const { id } = c.req.valid('param');
    return c.json(await heartbeatWork({ ctx: c.get('ctx'), id, input: await jsonBody(c) }), 200);
  },
});
