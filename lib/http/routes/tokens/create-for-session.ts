/**
 * `POST /v1/sessions/{sid}/tokens`: a token bound to one session, for a harness. No scope of its own: an
 * admin, or an unbound token handing on scopes it has (the verb decides, `createSessionToken`).
 */

import { CreateSessionTokenInput, createSessionToken, publicToken } from '../../../service/tokens/create.js';
import { SessionTokenView } from '../../../service/tokens/schemas.js';
import { jsonBody, SessionPath } from '../../params.js';
import { MINT_COST } from '../../ratelimit.js';
import { defineRoute, json, SESSION, WRITE_FAULTS } from '../../route.js';

export const createSessionTokenRoute = defineRoute({
  route: {
    method: 'post',
    path: '/v1/sessions/{sid}/tokens',
    operationId: 'createSessionToken',
    tags: ['tokens'],
    summary: 'Create a token bound to one session, for a harness',
    description: [
      'For an agent that should ship its own segment and post its status and nothing else. Scopes among',
      '`ingest`, `report`, `read` (default ingest and report), 24 hours unless `ttl_seconds` says otherwise.',
      'An admin may ask for any of them; any other token not bound to a session may hand on the scopes it',
      'has, never more. The new token expires no later than the caller, stops working when the caller is',
      'revoked or expires, and shares its rate limit; minting counts as 10 requests, and a token may have at',
      'most 100 unexpired session tokens minted from it (409 `too_many_tokens`).',
      'The session need not exist yet. An empty body takes every default.',
    ].join(' '),
    request: { params: SessionPath },
    responses: { 201: json('created', SessionTokenView) },
  },
  auth: 'bearer',
  body: { contentType: 'application/json', schema: CreateSessionTokenInput, optional: true },
  cost: MINT_COST,
  errors: ['invalid_body', 'payload_too_large', ...SESSION, ...WRITE_FAULTS, 'too_many_tokens'],
  handler: async (c) => {
    const { sid } = c.req.valid('param');
    // Every field has a default: an empty body asks for an ingest + report token for 24 hours.
    const input = await jsonBody(c, { emptyAs: {} });
    const { token, record } = await createSessionToken({ ctx: c.get('ctx'), sid, input });
    const { id, scopes, session, expires_at } = publicToken(record);
    return c.json({ token, id, scopes, session: session!, expires_at: expires_at! }, 201);
  },
});
