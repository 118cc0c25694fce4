/**
 * A tenant's OpenID Connect settings (issue 29 item 1): `GET|PUT|DELETE /v1/tenants/{t}/oidc` and
 * `hansard tenant oidc show|set|remove`, scope `admin` on a caller bound to no session, for the caller's
 * own tenant only (another answers 404, as one that does not exist). The client secret is sealed for the
 * tenant by the deployment's sign-in sealer and never answered again.
 */
import { randomBytes } from 'node:crypto';
import { OidcSettingsInput, type OidcSettingsView } from '../../contract/sign-in.js';
import type { StoredOidcSettings } from '../../store/index.js';
import { type AuditOptions, actorName, recordAudit } from '../audit-log/index.js';
import { isoNow, type ServiceContext } from '../shared/context.js';
import { AppError, parseInput } from '../shared/errors.js';
import { boardOriginOf } from './deps.js';
import { requireOwnTenant, requireTenantAdmin, signInDeps } from './guard.js';
import { discoverProvider } from './provider.js';

/** Where the board is reached: the deployment's public origin, else the one the request came to. */
export interface OriginOptions {
  /** the request's origin (`https://board.example.com`, no path), used when the deployment sets none */
  origin: string;
}

/**
 * The board's origin for the addresses registered at the provider: `SignInConfig.publicOrigin` when the
 * deployment sets one (behind a proxy or CloudFront the request's own origin is not the browser's), else
 * `origin`; no trailing slash.
 */
export function boardOrigin(ctx: ServiceContext, origin: string): string {
  return boardOriginOf(ctx.signIn?.config, origin);
}

/** The settings as the API shows them: never the secret, with the two addresses to register. */
export function oidcView(s: StoredOidcSettings, origin: string): OidcSettingsView {
  const { client_secret_sealed: _sealed, generation: _generation, ...rest } = s;
  return {
    ...rest,
    redirect_uri: `${origin}/login/oidc/callback`,
    post_logout_redirect_uri: `${origin}/login?signed_out=1`,
  };
}

/** The 404 of a tenant without OIDC settings (the caller's own: another tenant's is `notFound('tenant')`). */
function noSettings(): AppError {
  return new AppError(
    'not_found',
    'this tenant has no OIDC sign-in set: set one with hansard tenant oidc set (PUT /v1/tenants/{tenant}/oidc)',
  );
}

/**
 * `GET /v1/tenants/{tenant}/oidc`: the tenant's settings (`OidcSettingsView`: issuer, client id, allowed
 * domains, groups claim, role map, default role, the redirect and post-logout URIs to register, who set
 * them and when), never the client secret.
 * @throws AppError `forbidden` (403), `not_found` (404: another tenant, or no settings)
 */
export async function getOidc(
  ctx: ServiceContext,
  tenant: string,
  opts: OriginOptions,
): Promise<OidcSettingsView> {
  requireTenantAdmin(ctx, 'sign-in');
  requireOwnTenant(ctx, tenant);
  const stored = await ctx.state.getOidcSettings(ctx.tenant);
  if (!stored) throw noSettings();
  return oidcView(stored, boardOrigin(ctx, opts.origin));
}

/** One line of what `setOidc` set, for the audit list: no secret. */
function describeSettings(s: OidcSettingsInput): string {
  const groups = Object.keys(s.role_map).length;
  return [
    `issuer ${s.issuer}`,
    `client_id ${s.client_id}`,
    `allowed_domains ${s.allowed_domains.length ? s.allowed_domains.join(',') : 'any'}`,
    `groups_claim ${s.groups_claim}`,
    `role_map ${groups} group${groups === 1 ? '' : 's'}`,
    `default_role ${s.default_role ?? 'none'}`,
  ].join('; ');
}

/**
 * `PUT /v1/tenants/{tenant}/oidc`: sets (replaces) the tenant's settings from `input` (`OidcSettingsInput`),
 * sealing `client_secret` for the tenant (never stored or answered in the clear), and records `oidc.set`.
 * With `check` (the API's default), the issuer's discovery document is fetched first with these
 * credentials' client (`discoverProvider`), so a wrong issuer is refused now rather than at the first
 * sign-in; nothing is stored then.
 * @returns the settings as `getOidc` answers them
 * @throws AppError `forbidden` (403), `not_found` (404: another tenant), `invalid_body` (400, naming each
 *   field), `provider_unavailable` (502: with `check`, the discovery document could not be fetched or is
 *   not a provider's), `sign_in_unavailable` (503: the server has no sealer)
 */
export async function setOidc(
  ctx: ServiceContext,
  tenant: string,
  input: unknown,
  opts: OriginOptions & AuditOptions & { check: boolean },
): Promise<OidcSettingsView> {
  requireTenantAdmin(ctx, 'sign-in');
  requireOwnTenant(ctx, tenant);
  const deps = signInDeps(ctx);
  const body = parseInput(OidcSettingsInput, input, 'the OIDC settings');
  if (opts.check) {
    await discoverProvider(
      body.issuer,
      body.client_id,
      body.client_secret,
      ctx.now().getTime(),
      deps.config.allowPrivateIssuers,
    );
  }
  const { client_secret, ...rest } = body;
  const prior = await ctx.state.getOidcSettings(ctx.tenant);
  const same = prior !== null && prior.issuer === rest.issuer && prior.client_id === rest.client_id;
  const stored: StoredOidcSettings = {
    ...rest,
    // the same sign-in (its sessions go on) unless the provider or the client changed
    generation: same && prior.generation ? prior.generation : randomBytes(12).toString('base64url'),
    allowed_domains: [...new Set(rest.allowed_domains)],
    tenant: ctx.tenant,
    updated_at: isoNow(ctx),
    updated_by: actorName(ctx),
    client_secret_sealed: await deps.sealer.seal(ctx.tenant, client_secret),
  };
  await ctx.state.putOidcSettings(stored);
  await recordAudit(ctx, {
    action: 'oidc.set',
    target: '',
    detail: describeSettings(body),
    via: opts.via ?? 'api',
  });
  return oidcView(stored, boardOrigin(ctx, opts.origin));
}

/**
 * `DELETE /v1/tenants/{tenant}/oidc`: removes the tenant's settings (OIDC sign-in stops; link tokens go on
 * working) and records `oidc.remove`. People records and the audit list stay.
 * @throws AppError `forbidden` (403), `not_found` (404: another tenant, or no settings)
 */
export async function removeOidc(
  ctx: ServiceContext,
  tenant: string,
  opts: AuditOptions = {},
): Promise<void> {
  requireTenantAdmin(ctx, 'sign-in');
  requireOwnTenant(ctx, tenant);
  const prior = await ctx.state.getOidcSettings(ctx.tenant);
  // false: removed meanwhile by another request, which recorded it
  if (!prior || !(await ctx.state.deleteOidcSettings(ctx.tenant))) throw noSettings();
  await recordAudit(ctx, {
    action: 'oidc.remove',
    target: '',
    detail: prior ? `issuer ${prior.issuer}` : null,
    via: opts.via ?? 'api',
  });
}
