/**
 * `GET /v1/sessions/{sid}/verify`: every rule of the log format checked over the stored session. A whole
 * session read: it holds a replay slot of its token and a place in the scan gate, and stops when the client
 * goes away.
 */

import { verifyStored } from '../../../service/analysis.js';
import { VerifyReport } from '../../../service/analysis-schemas.js';
import { SessionPath } from '../../params.js';
import { withReplaySlot } from '../../replay-slots.js';
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
  auth: 'bearer',
  scopes: ['read'],
  errors: [...SESSION, 'too_many_replays'],
  handler: async (c) => {
    const { sid } = c.req.valid('param');
    const ctx = c.get('ctx');
    const report = await withReplaySlot(c, c.get('services').reads, (signal) =>
      verifyStored({ ctx, sid, signal }),
    );
    return c.json(report, 200);
  },
});
