/**
 * `GET /v1/tokens/self`: the caller's own token (any scope): its id, scopes, the session it is bound to,
 * label and expiry; never its hash or another token (issue 24 item 5).
 */

import { tokenSelf } from '../../../service/tokens/create.js';
import { TokenSelfView } from '../../../service/tokens/schemas.js';
import { defineRoute, json } from '../../route.js';

export const tokenSelfRoute = defineRoute({
  route: {
    method: 'get',
    path: '/v1/tokens/self',
    operationId: 'getTokenSelf',
    tags: ['tokens'],
    summary: 'The token that makes this request',
    description: [
      'Any token may ask, whatever its scopes: the answer names only what its holder already has. A',
      'harness that was handed a session token learns here which session it is bound to (`session`).',
    ].join(' '),
    responses: { 200: json('the caller’s own token', TokenSelfView) },
  },
  auth: 'bearer',
  errors: ['unauthorized', 'rate_limited'],
  handler: (c) => c.json(tokenSelf({ ctx: c.get('ctx') }), 200),
});
