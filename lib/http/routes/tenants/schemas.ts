/**
 * What `/v1/tenants/{tenant}/oidc` (issue 29 item 1) takes and answers, named for the OpenAPI document:
 * the contract's shapes (lib/contract/sign-in.ts) with their component ids, and the path and query.
 */
import { z } from 'zod';
import { OidcSettingsInput, OidcSettingsView } from '../../../contract/sign-in.js';
import { TenantName } from '../../../service/sign-in/schemas.js';

/** `{tenant}` of the path: a tenant name, refused before any store (400 `invalid_id`). */
export const TenantPath = z.object({ tenant: TenantName });

/** `PUT …/oidc`'s body, as the verb validates it (`setOidc`). */
export const OidcSettingsBody = OidcSettingsInput.meta({
  id: 'OidcSettingsInput',
  description: 'the tenant’s OpenID provider, its client, and how its people get roles',
});

/** The settings as answered: never the client secret. */
export const OidcSettingsAnswer = OidcSettingsView.meta({
  id: 'OidcSettingsView',
  description:
    'the tenant’s sign-in settings and the addresses to register at the provider; never the secret',
});

/** `?check=` of `PUT …/oidc`: fetch the issuer's discovery document first (default on). */
export const Check = z
  .enum(['0', '1', 'true', 'false'])
  .optional()
  .transform((v) => v === undefined || v === '1' || v === 'true')
  .describe(
    'check=0 stores the settings without fetching the issuer’s discovery document first (default: it is fetched, and a provider that does not answer as one is refused with 502)',
  );
