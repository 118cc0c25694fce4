/** `GET /v1/work?session=&limit=`: work items with their freshness now, without their history. */
import { z } from 'zod';
import { SessionId } from '../../../contract/ids.js';
import { WORK_LIST_LIMIT, WorkList } from '../../../contract/work.js';
import { listWork } from '../../../service/work/index.js';
import { AUTHED, defineRoute, json } from '../../route.js';

// Digits only, as for the other listings' limits: `z.coerce` would read '0x10' as 16 and ' 5' as 5.
const WorkLimit = z
  .string()
  .regex(/^\d{1,3}$/, `a limit is a whole number from 1 to ${WORK_LIST_LIMIT.max}`)
  .transform(Number)
  .pipe(z.number().int().min(1).max(WORK_LIST_LIMIT.max))
  .optional()
  .transform((v) => v ?? WORK_LIST_LIMIT.default)
  .describe(
    `how many work items to answer, 1 to ${WORK_LIST_LIMIT.max} (default ${WORK_LIST_LIMIT.default})`,
  );

export const workListRoute = defineRoute({
  route: {
    method: 'get',
    path: '/v1/work',
    operationId: 'workList',
    tags: ['work'],
    summary: 'Work items',
    description: [
      "The tenant's (or one session's) work items, newest started first, at most `limit` (default 100, at",
      'most 500), each without its history (GET /v1/work/{id} answers it); a session token sees its own.',
    ].join(' '),
    request: { query: z.object({ session: SessionId.optional(), limit: WorkLimit }) },
    responses: { 200: json('the work items', WorkList) },
  },
  auth: 'bearer',
  scopes: ['read', 'board', 'report'],
  errors: ['bad_request', 'invalid_id', ...AUTHED, 'not_found'],
  handler: async (c) => {
    const { session, limit } = c.req.valid('query');
    return c.json(await listWork({ ctx: c.get('ctx'), session: session ?? null, limit }), 200);
  },
});
