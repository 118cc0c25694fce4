/** `GET /v1/sessions/{sid}/status`: a session's latest status report. */
import { getStatus } from '../../../service/status.js';
import { StatusView } from '../../../service/status-schemas.js';
import { SessionPath } from '../../params.js';
import { defineRoute, json, SESSION } from '../../route.js';

export const getStatusRoute = defineRoute({
  route: {
    method: 'get',
    path: '/v1/sessions/{sid}/status',
    operationId: 'getStatus',
    tags: ['status'],
    summary: "A session's latest status report",
    request: { params: SessionPath },
    responses: { 200: json('the latest report', StatusView) },
  },
  auth: 'bearer',
  scopes: ['read', 'report', 'board'],
  errors: SESSION,
  handler: async (c) => c.json(await getStatus({ ctx: c.get('ctx'), ...c.req.valid('param') }), 200),
});
