/** `DELETE /v1/tenants/{tenant}/oidc`: removes the tenant's OIDC sign-in (scope `admin`, issue 29 item 1). */
import { removeOidc } from '../../../service/sign-in/settings.js';
import { AUTHED, defineRoute, WRITE_FAULTS } from '../../route.js';
import { TenantPath } from './schemas.js';

export const removeOidcRoute = defineRoute({
  route: {
    method: 'delete',
    path: '/v1/tenants/{tenant}/oidc',
    operationId: 'removeOidcSettings',
    tags: ['sign-in'],
    summary: "Remove the tenant's OpenID Connect sign-in",
    description: [
      'Nobody signs in through the provider any more (link tokens go on working); people and the audit',
      'list stay. Only the caller’s own tenant (another answers 404, as does a tenant with no settings).',
      'Recorded in the audit list (`oidc.remove`).',
    ].join(' '),
    request: { params: TenantPath },
    responses: { 204: { description: 'removed' } },
  },
  auth: 'bearer',
  scopes: ['admin'],
  errors: ['invalid_id', ...AUTHED, 'not_found', ...WRITE_FAULTS],
  handler: async (c) => {
    await removeOidc(c.get('ctx'), c.req.valid('param').tenant);
    return c.body(null, 204);
  },
});
