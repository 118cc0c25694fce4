/**
 * `PUT /v1/tenants/{tenant}/oidc?check=1`: sets the tenant's OIDC sign-in (scope `admin`, issue 29 item 1);
 * the client secret is sealed and never answered.
 */
import { z } from 'zod';
import { setOidc } from '../../../service/sign-in/settings.js';
import { jsonBody } from '../../params.js';
import { AUTHED, defineRoute, JSON_BODY, json, WRITE_FAULTS } from '../../route.js';
import { Check, OidcSettingsAnswer, OidcSettingsBody, TenantPath } from './schemas.js';

export const setOidcRoute = defineRoute({
  route: {
    method: 'put',
    path: '/v1/tenants/{tenant}/oidc',
    operationId: 'setOidcSettings',
    tags: ['sign-in'],
    summary: "Set the tenant's OpenID Connect sign-in",
    description: [
      'Replaces the settings. The issuer’s discovery document ({issuer}/.well-known/openid-configuration)',
      'is fetched first (unless `check=0`): a provider that cannot be reached or does not answer as one is',
      'refused now (502 `provider_unavailable`), not at the first sign-in. `client_secret` is sealed for the',
      'tenant and never answered again. The answer names the redirect URI to register at the provider.',
      'Only the caller’s own tenant (another answers 404). Recorded in the audit list (`oidc.set`).',
    ].join(' '),
    request: { params: TenantPath, query: z.object({ check: Check }) },
    responses: { 200: json('set; the settings as GET answers them', OidcSettingsAnswer) },
  },
  auth: 'bearer',
  scopes: ['admin'],
  body: { contentType: 'application/json', schema: OidcSettingsBody },
  errors: [
    ...JSON_BODY,
    'bad_request',
    'invalid_id',
    ...AUTHED,
    'not_found',
    'provider_unavailable',
    'sign_in_unavailable',
    ...WRITE_FAULTS,
  ],
  handler: async (c) => {
    const { tenant } = c.req.valid('param');
    const { check } = c.req.valid('query');
    const body = await jsonBody(c);
    const view = await setOidc(c.get('ctx'), tenant, body, {
      check,
      origin: new URL(c.req.url).origin,
    });
    return c.json(view, 200);
  },
});
