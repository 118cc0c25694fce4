/** `GET /v1/tenants/{tenant}/oidc`: the tenant's OIDC sign-in settings, never the secret (scope `admin`, issue 29). */
import { getOidc } from '../../../service/sign-in/settings.js';
import { AUTHED, defineRoute, json } from '../../route.js';
import { OidcSettingsAnswer, TenantPath } from './schemas.js';

export const getOidcRoute = defineRoute({
  route: {
    method: 'get',
    path: '/v1/tenants/{tenant}/oidc',
    operationId: 'getOidcSettings',
    tags: ['sign-in'],
    summary: "The tenant's OpenID Connect sign-in settings",
    description: [
      'The issuer, client id, allowed domains, groups claim, role map and default role, with the',
      '`redirect_uri` and `post_logout_redirect_uri` to register at the provider; never the client secret.',
      'Only the caller’s own tenant: another one answers 404, as a tenant that does not exist; so does a',
      'tenant with no settings.',
    ].join(' '),
    request: { params: TenantPath },
    responses: { 200: json('the settings', OidcSettingsAnswer) },
  },
  auth: 'bearer',
  scopes: ['admin'],
  errors: ['invalid_id', ...AUTHED, 'not_found'],
  handler: async (c) => {
    const { tenant } = c.req.valid('param');
    return c.json(await getOidc(c.get('ctx'), tenant, { origin: new URL(c.req.url).origin }), 200);
  },
});
