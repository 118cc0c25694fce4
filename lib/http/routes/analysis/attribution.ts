/** `GET /v1/sessions/{sid}/attribution`: who each agent action answers to; a whole-session read. */

import { AttributionList } from '../../../service/analysis/schemas.js';
import { attributionStored } from '../../../service/analysis/verify.js';
import { SessionPath } from '../../params.js';
import { readWholeSession } from '../../replay-slots.js';
import { defineRoute, json, SESSION } from '../../route.js';

export const attribution = defineRoute({
  route: {
    method: 'get',
    path: '/v1/sessions/{sid}/attribution',
    operationId: 'attribution',
    tags: ['analysis'],
    summary: 'Who each agent action and output answers to',
    description:
      'Every agent action and output with the human messages it is attributed to, the basis and the ' +
      'confidence.',
    request: { params: SessionPath },
    responses: { 200: json('the attributions', AttributionList) },
  },
  auth: 'bearer',
  scopes: ['read'],
  errors: [...SESSION, 'data_loss', 'storage_layout', 'too_many_replays'],
  handler: async (c) => c.json(await readWholeSession(c, c.req.valid('param').sid, attributionStored), 200),
});
