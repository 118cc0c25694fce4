/**
 * `GET /v1/sessions/{sid}/status`: a session's status reports, their declared evidence checked against the
 * stored transcript (a whole-session read when there is a command or test claim to check).
 */

import { StatusView } from '../../../contract/status.js';
import { getStatus } from '../../../service/status/get.js';
import { SessionPath } from '../../params.js';
import { readWholeSession } from '../../replay-slots.js';
import { defineRoute, json, SESSION } from '../../route.js';

export const getStatusRoute = defineRoute({
  route: {
    method: 'get',
    path: '/v1/sessions/{sid}/status',
    operationId: 'getStatus',
    tags: ['status'],
    summary: "A session's status reports, evidence checked",
    request: { params: SessionPath },
    responses: { 200: json('the latest report and the kept history', StatusView) },
  },
  auth: 'bearer',
  scopes: ['read', 'report', 'board'],
  errors: [...SESSION, 'too_many_replays'],
  // Its evidence checks read the whole transcript: a replay slot and a place in the scan gate, like verify.
  handler: async (c) => c.json(await readWholeSession(c, c.req.valid('param').sid, getStatus), 200),
});
