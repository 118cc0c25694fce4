/**
 * `GET /v1/sessions/{sid}/alerts?limit=`: the alerts a session fired, newest first (scope `read` or
 * `board`, issue 28 item 5: the session's timeline shows them).
 */
import { z } from 'zod';
import { sessionAlerts } from '../../../service/alerts/index.js';
import { SessionPath } from '../../params.js';
import { defineRoute, json, SESSION } from '../../route.js';
import { DeliveryLimit, SessionAlertList } from './schemas.js';

export const listSessionAlertsRoute = defineRoute({
  route: {
    method: 'get',
    path: '/v1/sessions/{sid}/alerts',
    operationId: 'listSessionAlerts',
    tags: ['alerts'],
    summary: 'The alerts a session fired',
    description: [
      'One row per delivery of an event about this session (its kind, target id, status, attempts and',
      'times), newest first; never a target’s URL or a failure’s text, which only an admin sees',
      '(`GET /v1/alerts/{id}/deliveries`). A session with no alerts, or none stored, answers an empty list.',
    ].join(' '),
    request: { params: SessionPath, query: z.object({ limit: DeliveryLimit }) },
    responses: { 200: json("the session's alerts", SessionAlertList) },
  },
  auth: 'bearer',
  scopes: ['read', 'board'],
  errors: ['bad_request', ...SESSION],
  handler: async (c) => {
    const { sid } = c.req.valid('param');
    const { limit } = c.req.valid('query');
    return c.json({ alerts: await sessionAlerts(c.get('ctx'), sid, limit) }, 200);
  },
});
