/** `DELETE /v1/alerts/{id}`: removes an alert target and its deliveries (scope `admin`, issue 28). */
import { removeTarget } from '../../../service/alerts/index.js';
import { AUTHED, defineRoute, WRITE_FAULTS } from '../../route.js';
import { AlertTargetPath } from './schemas.js';

export const removeAlertTargetRoute = defineRoute({
  route: {
    method: 'delete',
    path: '/v1/alerts/{id}',
    operationId: 'removeAlertTarget',
    tags: ['alerts'],
    summary: 'Remove an alert target',
    description: 'Nothing more is sent to it: its pending deliveries go with it, and its past ones.',
    request: { params: AlertTargetPath },
    responses: { 204: { description: 'removed' } },
  },
  auth: 'bearer',
  scopes: ['admin'],
  errors: ['invalid_id', ...AUTHED, 'not_found', ...WRITE_FAULTS],
  handler: async (c) => {
    await removeTarget(c.get('ctx'), c.req.valid('param').id);
    return c.body(null, 204);
  },
});
