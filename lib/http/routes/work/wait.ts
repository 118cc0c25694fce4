/** `POST /v1/work/{id}/wait` (seed 004, docs/work.md). */

import { WorkView, WorkWait } from '../../../contract/work.js';
import { waitWork } from '../../../service/work/index.js';
import { jsonBody } from '../../params.js';
import { defineRoute, json } from '../../route.js';
import { IDEMPOTENCY_HEADER, idempotencyKey, WORK_WRITE, WorkPath } from './shared.js';

export const workWaitRoute = defineRoute({
  route: {
    method: 'post',
    path: '/v1/work/{id}/wait',
    operationId: 'workWait',
    tags: ['work'],
    summary: 'Record what the work waits on',
    description:
      'A typed dependency and a plain reason (history); the item is waiting and its lease renewed.',
    request: { params: WorkPath, headers: IDEMPOTENCY_HEADER },
    responses: { 200: json('the work item now', WorkView) },
  },
  auth: 'bearer',
  scopes: ['report'],
  body: { contentType: 'application/json', schema: WorkWait },
  errors: [...WORK_WRITE, 'work_stopped', 'idempotency_mismatch'],
  handler: async (c) => {
    const { id } = c.req.valid('param');
    return c.json(
      await waitWork({ ctx: c.get('ctx'), id, input: await jsonBody(c), idempotencyKey: idempotencyKey(c) }),
      200,
    );
  },
});
