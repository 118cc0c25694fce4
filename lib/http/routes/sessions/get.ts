/** `GET /v1/sessions/{sid}`: a session's index entry and its writers. */

import { getSession } from '../../../service/sessions/replay.js';
import { SessionDetail } from '../../../service/sessions/schemas.js';
import { SessionPath } from '../../params.js';
import { defineRoute, json, SESSION } from '../../route.js';

export const getSessionRoute = defineRoute({
  route: {
    method: 'get',
    path: '/v1/sessions/{sid}',
    operationId: 'getSession',
    tags: ['sessions'],
    summary: 'A session and its writers',
    request: { params: SessionPath },
    responses: { 200: json('the session', SessionDetail) },
  },
  auth: 'bearer',
  scopes: ['read', 'board'],
  errors: SESSION,
  handler: async (c) => c.json(await getSession({ ctx: c.get('ctx'), ...c.req.valid('param') }), 200),
});
