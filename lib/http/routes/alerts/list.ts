/** `GET /v1/alerts`: the tenant's alert targets and their rules, never a secret (scope `admin`, issue 28). */
import { listTargets } from '../../../service/alerts/index.js';
import { AUTHED, defineRoute, json } from '../../route.js';
import { AlertTargetList } from './schemas.js';

export const listAlertTargetsRoute = defineRoute({
  route: {
    method: 'get',
    path: '/v1/alerts',
    operationId: 'listAlertTargets',
    tags: ['alerts'],
    summary: "The tenant's alert targets",
    description:
      'Each target with its rule (events, agents, after_seconds, format), oldest first; never its secret. ' +
      '`previous_secret_until` says until when a rotated-out secret still signs too.',
    responses: { 200: json('every target of the tenant', AlertTargetList) },
  },
  auth: 'bearer',
  scopes: ['admin'],
  errors: AUTHED,
  handler: async (c) => c.json({ targets: await listTargets(c.get('ctx')) }, 200),
});
