/** `POST /v1/work/{id}/resume` (seed 004, docs/work.md). */

import { WorkResume, WorkView } from '../../../contract/work.js';
import { resumeWork } from '../../../service/work/index.js';
import { jsonBody } from '../../params.js';
import { defineRoute, json } from '../../route.js';
import { WORK_WRITE, WorkPath } from './shared.js';

export const workResumeRoute = defineRoute({
  route: {
    method: 'post',
    path: '/v1/work/{id}/resume',
    operationId: 'workResume',
    tags: ['work'],
    summary: 'Repeat a pending operation exactly',
    description:
      'The operation and body exactly as first sent, with its idempotency key: applied once, whichever attempt arrives; other content under the key is refused (409 `idempotency_mismatch`).',
    request: { params: WorkPath },
    responses: { 200: json('the work item now', WorkView) },
  },
  auth: 'bearer',
  scopes: ['report'],
  body: { contentType: 'application/json', schema: WorkResume },
  errors: [...WORK_WRITE, 'work_stopped', 'idempotency_mismatch'],
  handler: async (c) => {
    const { id } = c.req.valid('param');
    return c.json(await resumeWork({ ctx: c.get('ctx'), id, input: await jsonBody(c) }), 200);
  },
});
