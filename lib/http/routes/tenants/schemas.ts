/**
 * What `/v1/tenants/{tenant}/oidc` (issue 29 item 1) takes and answers, named for the OpenAPI document:
 * the contract's shapes (lib/contract/sign-in.ts) with their component ids, and the path and query.
 */
import { z } from 'zod';
import { OidcSettingsInput, OidcSettingsView } from '../../../contract/sign-in.js';
import { AppError } from '../../../service/shared/errors.js';
import { TenantName } from '../../../service/sign-in/schemas.js';

/** What an issuer that is no URL at all is told (the CLI says the same). */
export const ISSUER_NOT_A_URL =
  'the issuer must be an https:// URL such as https://accounts.google.com (http:// only on a loopback host)';

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

/**
 * Refuses, as 400 `invalid_body` naming `issuer` (with the body's other faults), a body whose `issuer` is a
 * string `new URL` cannot parse (`accounts.google.com`, `https://`, a space in the host). A stop-gap: zod 4
 * runs `IssuerUrl`'s refines after its `.url()` check failed, and their `new URL` then throws out of
 * `safeParse` (a 500) instead of adding an issue; once the contract's refines are guarded this passes
 * every body on.
 * @throws AppError `invalid_body`
 */
export function refuseUnparsableIssuer(body: unknown): void {
  if (typeof body !== 'object' || body === null || Array.isArray(body)) return;
  const issuer = (body as { issuer?: unknown }).issuer;
  if (typeof issuer !== 'string' || URL.canParse(issuer)) return;
  // the others, as parseInput would name them, with a URL in the issuer's place
  const rest = OidcSettingsInput.safeParse({ ...body, issuer: 'https://issuer.invalid' });
  const others = rest.success
    ? []
    : rest.error.issues.map((i) => ({ path: i.path.map(String).join('.'), message: i.message }));
  throw new AppError('invalid_body', 'the OIDC settings is not valid', {
    issues: [{ path: 'issuer', message: ISSUER_NOT_A_URL }, ...others],
  });
}
