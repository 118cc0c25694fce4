/** `POST /v1/work/{id}/checkpoint` (seed 004, docs/work.md). */

import { WorkCheckpoint, WorkView } from '../../../contract/work.js';
import { checkpointWork } from '../../../service/work/index.js';
import { jsonBody } from '../../params.js';
import { defineRoute, json } from '../../route.js';
import { IDEMPOTENCY_HEADER, idempotencyKey, WORK_WRITE, WorkPath } from './shared.js';

export const workCheckpointRoute = defineRoute({
  route: {
    method: 'post',
    path: '/v1/work/{id}/checkpoint',
    operationId: 'workCheckpoint',
    tags: ['work'],
    summary: 'Record a change of mode, subject or summary',
    description: 'A history entry; the item is active again and its lease renewed.',
    request: { params: WorkPath, headers: IDEMPOTENCY_HEADER },
    responses: { 200: json('the work item now', WorkView) },
  },
  auth: 'bearer',
  scopes: ['report'],
  body: { contentType: 'application/json', schema: WorkCheckpoint },
  errors: [...WORK_WRITE, 'work_stopped', 'idempotency_mismatch'],
  handler: async (c) => {
    const { id } = c.req.valid('param');
    return c.json(
      await checkpointWork({
        ctx: c.get('ctx'),
        id,
        input: await jsonBody(c),
        idempotencyKey: idempotencyKey(c),
      }),
      200,
    );
  },
});
