/** `GET /v1/alerts/{id}/deliveries?limit=`: a target's deliveries, newest first (scope `admin`, issue 28 item 5). */
import { z } from 'zod';
import { targetDeliveries } from '../../../service/alerts/index.js';
import { AUTHED, defineRoute, json } from '../../route.js';
import { AlertDeliveryList, AlertTargetPath, DeliveryLimit } from './schemas.js';

export const listAlertDeliveriesRoute = defineRoute({
  route: {
    method: 'get',
    path: '/v1/alerts/{id}/deliveries',
    operationId: 'listAlertDeliveries',
    tags: ['alerts'],
    summary: "An alert target's deliveries",
    description: [
      'Newest first: each event sent (or to be sent) to the target with its `status` (`pending`: waiting',
      'or retrying, `delivered`, `dead`: given up after a day of retries, `skipped`: the state ended before',
      'the rule’s `after_seconds`), `attempts`, `next_at`, and the last attempt’s HTTP status and error.',
    ].join(' '),
    request: { params: AlertTargetPath, query: z.object({ limit: DeliveryLimit }) },
    responses: { 200: json("the target's deliveries", AlertDeliveryList) },
  },
  auth: 'bearer',
  scopes: ['admin'],
  errors: ['bad_request', 'invalid_id', ...AUTHED, 'not_found'],
  handler: async (c) => {
    const { id } = c.req.valid('param');
    const { limit } = c.req.valid('query');
    return c.json({ deliveries: await targetDeliveries(c.get('ctx'), id, limit) }, 200);
  },
});
