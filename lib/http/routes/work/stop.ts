/** `POST /v1/work/{id}/stop` (seed 004, docs/work.md). */

import { WorkStop, WorkView } from '../../../contract/work.js';
import { stopWork } from '../../../service/work/index.js';
import { jsonBody } from '../../params.js';
import { defineRoute, json } from '../../route.js';
import { IDEMPOTENCY_HEADER, idempotencyKey, WORK_WRITE, WorkPath } from './shared.js';

export const workStopRoute = defineRoute({
  route: {
    method: 'post',
    path: '/v1/work/{id}/stop',
    operationId: 'workStop',
    tags: ['work'],
    summary: 'Stop a work item',
    description: 'Completed or paused (history); its lease ends.',
    request: { params: WorkPath, headers: IDEMPOTENCY_HEADER },
    responses: { 200: json('the work item now', WorkView) },
  },
  auth: 'bearer',
  scopes: ['report'],
  body: { contentType: 'application/json', schema: WorkStop },
  errors: [...WORK_WRITE, 'work_stopped', 'idempotency_mismatch'],
  handler: async (c) => {
    const { id } = c.req.valid('param');
    return c.json(
      await stopWork({ ctx: c.get('ctx'), id, input: await jsonBody(c), idempotencyKey: idempotencyKey(c) }),
      200,
    );
  },
});
