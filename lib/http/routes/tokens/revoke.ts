/** `DELETE /v1/tokens/{id}`: revoke a token, and with it every token minted from it (scope `admin`). */
import { z } from 'zod';
import { revokeToken } from '../../../service/tokens/create.js';
import { TokenId } from '../../params.js';
import { AUTHED, defineRoute, WRITE_FAULTS } from '../../route.js';

export const revokeTokenRoute = defineRoute({
  route: {
    method: 'delete',
    path: '/v1/tokens/{id}',
    operationId: 'revokeToken',
    tags: ['tokens'],
    summary: 'Revoke a token',
    request: { params: z.object({ id: TokenId }) },
    responses: { 204: { description: 'revoked' } },
  },
  auth: 'bearer',
  scopes: ['admin'],
  errors: ['invalid_id', ...AUTHED, 'not_found', ...WRITE_FAULTS],
  handler: async (c) => {
    await revokeToken({ ctx: c.get('ctx'), id: c.req.valid('param').id });
    return c.body(null, 204);
  },
});
