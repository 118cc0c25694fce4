/** `GET /v1/work?session=`: work items with their freshness now. */
import { z } from 'zod';
import { SessionId } from '../../../service/id-schemas.js';
import { listWork } from '../../../service/work.js';
import { WorkList } from '../../../service/work-schemas.js';
import { AUTHED, defineRoute, json } from '../../route.js';

export const workListRoute = defineRoute({
  route: {
    method: 'get',
    path: '/v1/work',
    operationId: 'workList',
    tags: ['work'],
    summary: 'Work items',
    description:
      "The tenant's (or one session's) work items, newest first, at most 500; a session token sees its own.",
    request: { query: z.object({ session: SessionId.optional() }) },
    responses: { 200: json('the work items', WorkList) },
  },
  auth: 'bearer',
  scopes: ['read', 'board', 'report'],
  errors: ['bad_request', 'invalid_id', ...AUTHED, 'not_found'],
  handler: async (c) =>
    c.json(await listWork({ ctx: c.get('ctx'), session: c.req.valid('query').session ?? null }), 200),
});
