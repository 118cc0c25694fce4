/** `POST /v1/tokens`: a token in the caller's tenant (scope `admin`); its secret is in this answer only. */

import { CreateTokenInput, createToken, publicToken } from '../../../service/tokens/create.js';
import { CreatedTokenView } from '../../../service/tokens/schemas.js';
import { jsonBody } from '../../params.js';
import { MINT_COST } from '../../ratelimit.js';
import { AUTHED, defineRoute, JSON_BODY, json, WRITE_FAULTS } from '../../route.js';

export const createTokenRoute = defineRoute({
  route: {
    method: 'post',
    path: '/v1/tokens',
    operationId: 'createToken',
    tags: ['tokens'],
    summary: 'Create a token in the caller’s tenant',
    description: 'The secret is in this answer only; the server keeps its SHA-256.',
    responses: { 201: json('created', CreatedTokenView) },
  },
  auth: 'bearer',
  scopes: ['admin'],
  body: { contentType: 'application/json', schema: CreateTokenInput },
  cost: MINT_COST,
  errors: [...JSON_BODY, ...AUTHED, ...WRITE_FAULTS],
  handler: async (c) => {
    const created = await createToken({ ctx: c.get('ctx'), input: await jsonBody(c) });
    return c.json({ token: created.token, ...publicToken(created.record) }, 201);
  },
});
