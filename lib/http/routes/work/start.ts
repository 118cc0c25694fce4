/** `POST /v1/work`: start a work item (seed 004, docs/work.md). */

import { WorkStart, WorkView } from '../../../contract/work.js';
import { startWork } from '../../../service/work/index.js';
import { jsonBody } from '../../params.js';
import { defineRoute, json } from '../../route.js';
import { IDEMPOTENCY_HEADER, idempotencyKey, WORK_WRITE } from './shared.js';

export const workStartRoute = defineRoute({
  route: {
    method: 'post',
    path: '/v1/work',
    operationId: 'workStart',
    tags: ['work'],
    summary: 'Start a work item',
    description: [
      'What an actor reports it is doing: subject, mode, a one-line summary, and a lease (TTL 60 to 86400',
      's, default 900). With an Idempotency-Key already used for a start in the session, that item is',
      'answered (200) and nothing is stored.',
    ].join(' '),
    request: { headers: IDEMPOTENCY_HEADER },
    responses: {
      201: json('started', WorkView),
      200: json('started before, under this Idempotency-Key', WorkView),
    },
  },
  auth: 'bearer',
  scopes: ['report'],
  body: { contentType: 'application/json', schema: WorkStart },
  errors: [...WORK_WRITE, 'idempotency_mismatch'],
  handler: async (c) => {
    const { view, created } = await startWork({
      ctx: c.get('ctx'),
      input: await jsonBody(c),
      idempotencyKey: idempotencyKey(c),
    });
    return created ? c.json(view, 201) : c.json(view, 200);
  },
});
