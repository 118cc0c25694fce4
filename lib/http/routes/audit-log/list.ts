/** `GET /v1/audit-log?limit=&cursor=`: what people and tokens did, newest first (scope `admin`, issue 29 item 4). */
import { z } from 'zod';
import { AuditEntryView } from '../../../contract/sign-in.js';
import { listAudit } from '../../../service/audit-log/index.js';
import { Cursor, Limit } from '../../params.js';
import { AUTHED, defineRoute, json } from '../../route.js';

/** `GET /v1/audit-log`. */
export const AuditList = z
  .object({ entries: z.array(AuditEntryView), next: z.string().nullable() })
  .meta({ id: 'AuditList', description: "a page of the tenant's audit list, newest first" });

export const listAuditRoute = defineRoute({
  route: {
    method: 'get',
    path: '/v1/audit-log',
    operationId: 'listAudit',
    tags: ['sign-in'],
    summary: "The tenant's audit list",
    description: [
      'Each admin action with who did it (`actor`: a signed-in person’s email or a token’s id), when, what',
      'it acted on and whether from a board form or the API: tokens created and revoked, alert targets',
      'added, removed, rotated and tested, OIDC settings set and removed, people changed. Kept 400 days.',
      '`next` is a signed cursor for this tenant.',
    ].join(' '),
    request: {
      query: z.object({
        limit: Limit.describe('how many entries to answer, 1 to 200 (default 50)'),
        cursor: Cursor,
      }),
    },
    responses: { 200: json('a page of entries', AuditList) },
  },
  auth: 'bearer',
  scopes: ['admin'],
  errors: ['bad_request', 'invalid_cursor', ...AUTHED],
  handler: async (c) => {
    const { limit, cursor } = c.req.valid('query');
    return c.json(await listAudit(c.get('ctx'), { limit, cursor }), 200);
  },
});
