/**
 * A tenant's OpenID provider as `openid-client` sees it (issue 29 item 1): its discovery document and
 * keys, fetched once and kept a while per process (a Lambda container, the local server), so a sign-in
 * costs the provider's token endpoint and not a discovery round trip.
 *
 * An issuer on a loopback host may be plain http (a provider on this machine, the tests): only there are
 * `openid-client`'s insecure requests allowed. Every other issuer is https (the contract's `IssuerUrl`).
 */
import { createHash } from 'node:crypto';
import * as oidc from 'openid-client';
import { isLoopbackHost } from '../../contract/sign-in.js';
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
): Promise<oidc.Configuration> {
  const key = createHash('sha256').update(`${issuer}\n${clientId}\n${clientSecret}`).digest('base64url');
  const hit = kept.get(key);
  if (hit && now - hit.at < KEEP_MS) return hit.config;
  const config = discover(issuer, clientId, clientSecret);
  kept.set(key, { at: now, config });
  while (kept.size > MAX_KEPT) kept.delete(kept.keys().next().value as string);
  // A failure is not kept: the next sign-in asks the provider again.
  config.catch(() => {
    if (kept.get(key)?.config === config) kept.delete(key);
  });
  return config;
}

async function discover(issuer: string, clientId: string, clientSecret: string): Promise<oidc.Configuration> {
  const url = new URL(issuer);
  const insecure = url.protocol === 'http:' && isLoopbackHost(url.hostname);
  try {
    const config = await oidc.discovery(url, clientId, undefined, oidc.ClientSecretBasic(clientSecret), {
      timeout: TIMEOUT_S,
      ...(insecure ? { execute: [oidc.allowInsecureRequests] } : {}),
    });
    const meta = config.serverMetadata();
    if (!meta.authorization_endpoint || !meta.token_endpoint || !meta.jwks_uri) {
      throw new Error('the discovery document lacks an authorization, token or jwks endpoint');
    }
    return config;
  } catch (err) {
    throw providerError(issuer, 'its discovery document', err);
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
  // A provider's error answer (RFC 6749 §5.2): its code and description say what it refused.
  const body = err as { error?: unknown; error_description?: unknown };
  const said =
    typeof body.error === 'string'
      ? `${body.error}${typeof body.error_description === 'string' ? `: ${body.error_description}` : ''}`
      : '';
  const cause = said || (err.cause instanceof Error ? err.cause.message : '');
  const why = cause && !err.message.includes(cause) ? `${err.message} (${cause})` : err.message;
  return why.slice(0, 300);
}

/** Forgets every kept configuration (tests that restart a provider on the same issuer). */
export function forgetProviders(): void {
  kept.clear();
}
