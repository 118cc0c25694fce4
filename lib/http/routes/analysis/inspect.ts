/** `GET /v1/sessions/{sid}/inspect`: the session's summary; a whole-session read, as verify is. */

import { SessionSummary } from '../../../service/analysis/schemas.js';
import { inspectStored } from '../../../service/analysis/verify.js';
import { SessionPath } from '../../params.js';
import { readWholeSession } from '../../replay-slots.js';
import { defineRoute, json, SESSION } from '../../route.js';

export const inspect = defineRoute({
  route: {
    method: 'get',
    path: '/v1/sessions/{sid}/inspect',
    operationId: 'inspect',
    tags: ['analysis'],
    summary: "The session's summary",
    description:
      'Writers, participants, counts, turns, actions, corrections, attribution and verify summaries.',
    request: { params: SessionPath },
    responses: { 200: json('the summary', SessionSummary) },
  },
  auth: 'bearer',
  scopes: ['read'],
  errors: [...SESSION, 'data_loss', 'storage_layout', 'too_many_replays'],
  handler: async (c) => c.json(await readWholeSession(c, c.req.valid('param').sid, inspectStored), 200),
});
