/**
 * `POST /v1/alerts/{id}/test`: sends a test event (`alert.test`) to one target, through the outbox like
 * any event: signed, retried (scope `admin`, issue 28 item 5).
 */
import { sendTest } from '../../../service/alerts/index.js';
import { AUTHED, defineRoute, json, WRITE_FAULTS } from '../../route.js';
import { AlertTargetPath, AlertTestSent } from './schemas.js';

export const sendAlertTestRoute = defineRoute({
  route: {
    method: 'post',
    path: '/v1/alerts/{id}/test',
    operationId: 'sendAlertTest',
    tags: ['alerts'],
    summary: 'Send a test event to an alert target',
    description: [
      'Queues an `alert.test` event for this target only and answers at once with its id; the delivery',
      'is made as every other (signed, retried on failure). `GET /v1/alerts/{id}/deliveries` shows how it',
      'went: the delivery whose `event_id` is this one.',
    ].join(' '),
    request: { params: AlertTargetPath },
    responses: { 202: json('queued', AlertTestSent) },
  },
  auth: 'bearer',
  scopes: ['admin'],
  errors: ['invalid_id', ...AUTHED, 'not_found', ...WRITE_FAULTS],
  handler: async (c) => c.json(await sendTest(c.get('ctx'), c.req.valid('param').id), 202),
});
