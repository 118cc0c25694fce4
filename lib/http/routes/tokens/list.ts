/** `GET /v1/tokens`: the tenant's tokens, revoked ones too, never a secret or hash (scope `admin`). */

import { listTokens } from '../../../service/tokens/create.js';
import { TokenList } from '../../../service/tokens/schemas.js';
import { AUTHED, defineRoute, json } from '../../route.js';

export const listTokensRoute = defineRoute({
  route: {
    method: 'get',
    path: '/v1/tokens',
    operationId: 'listTokens',
    tags: ['tokens'],
    summary: "The tenant's tokens",
    responses: { 200: json('every token, revoked ones too', TokenList) },
  },
  auth: 'bearer',
  scopes: ['admin'],
  errors: AUTHED,
  handler: async (c) => c.json({ tokens: await listTokens({ ctx: c.get('ctx') }) }, 200),
});
