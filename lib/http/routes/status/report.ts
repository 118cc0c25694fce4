/** `POST /v1/sessions/{sid}/status`: an agent's status report (seed 000); the verb validates the body. */

import { StatusReport, StatusView } from '../../../contract/status.js';
import { reportStatus } from '../../../service/status/get.js';
import { jsonBody, SessionPath } from '../../params.js';
import { defineRoute, JSON_BODY, json, SESSION, WRITE_FAULTS } from '../../route.js';

export const reportStatusRoute = defineRoute({
  route: {
    method: 'post',
    path: '/v1/sessions/{sid}/status',
    operationId: 'reportStatus',
    tags: ['status'],
    summary: "Report an agent's status",
    description: [
      'A state, a one-line note and up to four declared events with up to four evidence items each',
      '(seed 000). The session need not have segments yet. An invalid report names each problem in',
      '`details.issues` and stores nothing.',
    ].join(' '),
    request: { params: SessionPath },
    responses: { 201: json('stored: the latest status now', StatusView) },
  },
  auth: 'bearer',
  scopes: ['report'],
  body: { contentType: 'application/json', schema: StatusReport },
  errors: [...JSON_BODY, ...SESSION, ...WRITE_FAULTS],
  handler: async (c) => {
    const { sid } = c.req.valid('param');
    const input = await jsonBody(c);
    return c.json(await reportStatus({ ctx: c.get('ctx'), sid, input }), 201);
  },
});
