/**
 * `GET /v1/sessions/{sid}/verify`: every rule of the log format checked over the stored session. A whole
 * session read: it holds a replay slot of its token and a place in the scan gate, and stops when the client
 * goes away.
 */

import { VerifyReport } from '../../../service/analysis/schemas.js';
import { verifyStored } from '../../../service/analysis/verify.js';
import { SessionPath } from '../../params.js';
import { readWholeSession } from '../../replay-slots.js';
import { defineRoute, json, SESSION } from '../../route.js';

export const verify = defineRoute({
  route: {
    method: 'get',
    path: '/v1/sessions/{sid}/verify',
    operationId: 'verify',
    tags: ['analysis'],
    summary: 'Check the stored session against the log format',
    request: { params: SessionPath },
    responses: { 200: json('the findings', VerifyReport) },
  },
  // The session page links the verify report: the board's cookie downloads it.
  auth: 'bearer_or_cookie',
  scopes: ['read', 'board'],
  errors: [...SESSION, 'storage_layout', 'too_many_replays'],
  handler: async (c) => c.json(await readWholeSession(c, c.req.valid('param').sid, verifyStored), 200),
});
