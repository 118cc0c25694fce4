/**
 * A tenant's OpenID provider as `openid-client` sees it (issue 29 item 1): its discovery document and
 * keys, fetched once and kept a while per process (a Lambda container, the local server), so a sign-in
 * costs the provider's token endpoint and not a discovery round trip.
 *
 * An issuer on a loopback host may be plain http (a provider on this machine, the tests): only there are
 * `openid-client`'s insecure requests allowed. Every other issuer is https (the contract's `IssuerUrl`).
 */
import { createHash } from 'node:crypto';
import { lookup } from 'node:dns/promises';
import { isIP } from 'node:net';
import * as oidc from 'openid-client';
import { isLoopbackHost } from '../../contract/sign-in.js';
import { isPublicAddress } from '../alerts/url-guard.js';
import { AppError } from '../shared/errors.js';

/** How long a discovered configuration is kept, ms: a provider's rotated keys are fetched by the JWKS cache meanwhile. */
const KEEP_MS = 10 * 60_000;
/** Most configurations kept (one per tenant in use); the oldest goes first. */
const MAX_KEPT = 200;
/** One request to the provider may take this long, seconds. */
const TIMEOUT_S = 10;

const kept = new Map<string, { at: number; config: Promise<oidc.Configuration> }>();

/**
 * The provider of `issuer` for the client `clientId` (authenticating with `clientSecret`, HTTP Basic: what
 * every provider named in issue 29 accepts), from the discovery document at
 * `{issuer}/.well-known/openid-configuration`, checked by `openid-client` (the document's `issuer` must be
 * `issuer` exactly).
 * @param now ms since the epoch (the service's clock), for how long a configuration is kept
 * @throws AppError `provider_unavailable` (502) when the document cannot be fetched or is not a provider's,
 *   naming the issuer and why
 */
export async function discoverProvider(
  issuer: string,
  clientId: string,
  clientSecret: string,
  now: number = Date.now(),
  allowPrivate = true,
): Promise<oidc.Configuration> {
  const key = createHash('sha256')
    .update(`${issuer}\n${clientId}\n${clientSecret}\n${allowPrivate}`)
    .digest('base64url');
  const hit = kept.get(key);
  if (hit && now - hit.at < KEEP_MS) return hit.config;
  const config = discover(issuer, clientId, clientSecret, allowPrivate);
  kept.set(key, { at: now, config });
  while (kept.size > MAX_KEPT) kept.delete(kept.keys().next().value as string);
  // A failure is not kept: the next sign-in asks the provider again.
  config.catch(() => {
    if (kept.get(key)?.config === config) kept.delete(key);
  });
  return config;
}

async function discover(
  issuer: string,
  clientId: string,
  clientSecret: string,
  allowPrivate: boolean,
): Promise<oidc.Configuration> {
  const url = new URL(issuer);
  const insecure = url.protocol === 'http:' && isLoopbackHost(url.hostname);
  if (!allowPrivate) await requirePublic(issuer, 'the issuer', url);
  try {
    const config = await oidc.discovery(url, clientId, undefined, oidc.ClientSecretBasic(clientSecret), {
      timeout: TIMEOUT_S,
      ...(insecure ? { execute: [oidc.allowInsecureRequests] } : {}),
    });
    const meta = config.serverMetadata();
    if (!meta.authorization_endpoint || !meta.token_endpoint || !meta.jwks_uri) {
      throw new Error('the discovery document lacks an authorization, token or jwks endpoint');
    }
    await checkServerEndpoints(issuer, meta, allowPrivate);
    return config;
  } catch (err) {
    throw providerError(issuer, 'its discovery document', err);
  }
}

/**
 * The endpoints this server itself calls (token, keys, userinfo; the browser goes to the others) are
 * https, or http on a loopback host; and, unless `allowPrivate`, resolve to public addresses only: a
 * discovery document may not send the client secret or a request anywhere the issuer could not go.
 * @throws AppError `provider_unavailable` naming the endpoint
 */
async function checkServerEndpoints(
  issuer: string,
  meta: oidc.ServerMetadata,
  allowPrivate: boolean,
): Promise<void> {
  for (const [name, raw] of [
    ['token_endpoint', meta.token_endpoint],
    ['jwks_uri', meta.jwks_uri],
    ['userinfo_endpoint', meta.userinfo_endpoint],
  ] as const) {
    if (raw === undefined) continue;
    const u = new URL(raw);
    if (
      u.username ||
      u.password ||
      !(u.protocol === 'https:' || (u.protocol === 'http:' && isLoopbackHost(u.hostname)))
    ) {
      throw new AppError(
        'provider_unavailable',
        `the sign-in provider ${issuer} names a ${name} hansard does not call: ${raw.slice(0, 200)} (https only, or http on this machine)`,
        { issuer, endpoint: name },
      );
    }
    if (!allowPrivate) await requirePublic(issuer, `its ${name}`, u);
  }
}

/**
 * Refuses `u` unless every address its host resolves to is public (the alert targets' rule,
 * lib/service/alerts/url-guard.ts): no loopback, link-local (the metadata service), private or reserved
 * address. Checked when the provider is discovered, so an address a name later resolves to is not
 * (DNS rebinding is left to the network's egress rules: docs/sign-in.md).
 * @throws AppError `provider_unavailable` naming what and the address
 */
async function requirePublic(issuer: string, what: string, u: URL): Promise<void> {
  const host = u.hostname.replace(/^\[|\]$/g, '');
  let addresses: string[];
  try {
    addresses = isIP(host)
      ? [host]
      : (await lookup(host, { all: true, verbatim: true })).map((a) => a.address);
  } catch (err) {
    throw new AppError(
      'provider_unavailable',
      `the sign-in provider ${issuer}: ${what}'s host ${host} does not resolve (${(err as { code?: string }).code ?? 'no address'})`,
      { issuer },
    );
  }
  const refused = addresses.find((a) => !isPublicAddress(a));
  if (refused !== undefined) {
    throw new AppError(
      'provider_unavailable',
      `the sign-in provider ${issuer}: ${what} is at ${refused}, a loopback, link-local or private address, which this deployment does not call`,
      { issuer, address: refused },
    );
  }
}

/**
 * The refusal for a provider that failed at `step`, naming the issuer and openid-client's reason (never
 * a secret: openid-client's messages name endpoints and claims, not credentials).
 */
export function providerError(issuer: string, step: string, err: unknown): AppError {
  if (err instanceof AppError) return err;
  const why = reasonOf(err);
  return new AppError('provider_unavailable', `the sign-in provider ${issuer} failed at ${step}: ${why}`, {
    issuer,
    step,
  });
}

/**
 * openid-client's reason: its message, and the message of the check that failed beneath it (its
 * `cause`: "unexpected \"iss\" (issuer) response parameter value" says more than "invalid response
 * encountered"), cut to 300 characters.
 */
function reasonOf(err: unknown): string {
  if (!(err instanceof Error)) return String(err).slice(0, 300);
  const e = err as { error?: unknown; error_description?: unknown; status?: unknown; cause?: unknown };
  // A challenge in WWW-Authenticate (RFC 6750/7235): the token endpoint refused the client's credentials.
  if (Array.isArray(e.cause) && e.cause.length > 0 && typeof e.cause[0] === 'object') {
    const params = (e.cause[0] as { parameters?: { error?: unknown; error_description?: unknown } })
      .parameters;
    const code = typeof params?.error === 'string' ? params.error : 'invalid_client';
    return `it refused hansard's client credentials (${code}${typeof params?.error_description === 'string' ? `: ${params.error_description.slice(0, 120)}` : ''}): check the client id and secret (hansard tenant oidc set)`;
  }
  // A provider's error answer (RFC 6749 §5.2): its code and description say what it refused.
  if (typeof e.error === 'string') {
    const what = `${e.error}${typeof e.error_description === 'string' ? `: ${e.error_description}` : ''}`;
    const hint =
      e.error === 'invalid_client' ? ': check the client id and secret (hansard tenant oidc set)' : '';
    return `${err.message} (${what})${hint}`.slice(0, 300);
  }
  // An answer of the wrong status: which, and from where (a wrong issuer's discovery document is a 404).
  const res = e.cause as { status?: unknown; url?: unknown } | undefined;
  if (res && typeof res.status === 'number') {
    const where = typeof res.url === 'string' && res.url ? ` from ${res.url.slice(0, 200)}` : '';
    return `${err.message}: HTTP ${res.status}${where}`.slice(0, 300);
  }
  const cause = e.cause instanceof Error ? e.cause.message : '';
  const why = cause && !err.message.includes(cause) ? `${err.message} (${cause})` : err.message;
  return why.slice(0, 300);
}

/** Forgets every kept configuration (tests that restart a provider on the same issuer). */
export function forgetProviders(): void {
  kept.clear();
}
