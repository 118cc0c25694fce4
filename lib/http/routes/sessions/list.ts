/** `GET /v1/sessions?limit=&cursor=`: the tenant's sessions, a page at a time (signed cursors). */
import { z } from 'zod';
import { listSessions } from '../../../service/sessions/replay.js';
import { SessionList } from '../../../service/sessions/schemas.js';
import { Cursor, Limit } from '../../params.js';
import { AUTHED, defineRoute, json } from '../../route.js';

export const listSessionsRoute = defineRoute({
  route: {
    method: 'get',
    path: '/v1/sessions',
    operationId: 'listSessions',
    tags: ['sessions'],
    summary: "The tenant's sessions",
    description: [
      'Most recent activity first, a page at a time. `next` is a signed cursor: only a cursor this server',
      'gave, for this tenant, is accepted. A session token sees only its own session, on one page.',
    ].join(' '),
    request: { query: z.object({ limit: Limit, cursor: Cursor }) },
    responses: { 200: json('a page of sessions', SessionList) },
  },
  auth: 'bearer',
  scopes: ['read'],
  errors: ['bad_request', 'invalid_cursor', ...AUTHED],
  handler: async (c) => {
    const { limit, cursor } = c.req.valid('query');
    return c.json(await listSessions({ ctx: c.get('ctx'), limit, cursor: cursor ?? null }), 200);
  },
});
