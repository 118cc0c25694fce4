/**
 * Signing in and out with a tenant's OpenID provider (issue 29 items 1 and 3): the authorization code flow
 * with PKCE (S256), `state` and `nonce`, through `openid-client`, which also checks the ID token (its
 * signature against the provider's keys, `iss`, `aud`, `exp`, the nonce) and, where the provider sends it,
 * the authorization response's `iss` (RFC 9207: the mix-up defence).
 *
 * The flow's secrets (state, nonce, PKCE verifier) travel in a sealed ten-minute cookie bound to the tenant
 * and the issuer the flow began with; the callback exchanges the code only at that tenant's provider. So
 * a code or a response from another tenant's provider never signs anyone in to this one.
 */
import * as oidc from 'openid-client';
import { ulid } from 'ulid';
import { AUDIT_RETENTION_DAYS, normalEmail, type Role } from '../../contract/sign-in.js';
import {
  MAX_ENDED_SESSIONS,
  type PersonRecord,
  StateConflictError,
  type StateStore,
  type StoredOidcSettings,
} from '../../store/index.js';
import { AppError } from '../shared/errors.js';
import { type FlowClaims, keptGroups, openCookie, type SessionClaims, sealCookie } from './cookie.js';
import { boardOriginOf, type SignInServiceDeps } from './deps.js';
import { discoverProvider, providerError } from './provider.js';
import { decideRole, groupsWithRole, type Refusal } from './roles.js';
import { keyDeps, newSid, sessionExp } from './session.js';

/** How long a sign-in may take at the provider, seconds. */
export const FLOW_SECONDS = 600;
/** The callback's path: the redirect URI is this on the board's origin. */
export const CALLBACK_PATH = '/login/oidc/callback';
/** Where the provider sends a browser back after signing out there. */
export const SIGNED_OUT_PATH = '/login?signed_out=1';

/** What the flow runs with. */
export interface FlowDeps {
  state: StateStore;
  signIn: SignInServiceDeps;
  now: () => Date;
}

/** The board origin sign-in uses: the configured public one, else the request's. */
export function boardOrigin(deps: Pick<FlowDeps, 'signIn'>, requestOrigin: string): string {
  return boardOriginOf(deps.signIn.config, requestOrigin);
}

/** Opened client secrets per sealer, by tenant and sealed text (a new secret is a new sealed text). */
const openedSecrets = new WeakMap<SignInServiceDeps['sealer'], Map<string, Promise<string>>>();
/** Most opened secrets kept per sealer; the oldest goes first. */
const MAX_OPENED = 200;

/**
 * `sealed` opened for `tenant`, once per process (a Lambda container): a sign-in would otherwise cost a
 * KMS Decrypt at its start and another at its callback. A failure is not kept.
 */
function openSecret(sealer: SignInServiceDeps['sealer'], tenant: string, sealed: string): Promise<string> {
  let byKey = openedSecrets.get(sealer);
  if (!byKey) {
    byKey = new Map();
    openedSecrets.set(sealer, byKey);
  }
  const key = `${tenant}\n${sealed}`;
  const hit = byKey.get(key);
  if (hit) return hit;
  const opened = sealer.open(tenant, sealed);
  byKey.set(key, opened);
  opened.catch(() => byKey.delete(key));
  while (byKey.size > MAX_OPENED) byKey.delete(byKey.keys().next().value as string);
  return opened;
}

/** The tenant's settings and its provider, with the client secret opened. */
async function provider(
  deps: FlowDeps,
  tenant: string,
): Promise<{ settings: StoredOidcSettings; config: oidc.Configuration } | null> {
  const settings = await deps.state.getOidcSettings(tenant);
  if (!settings) return null;
  const secret = await openSecret(deps.signIn.sealer, tenant, settings.client_secret_sealed);
  const config = await discoverProvider(settings.issuer, settings.client_id, secret, deps.now().getTime());
  return { settings, config };
}

/**
 * Begins signing in to `tenant`: the provider's authorization URL to send the browser to, and the flow
 * cookie to set.
 * @param next a board path already checked by `safeNext`
 * @throws AppError `not_found` when the tenant has no sign-in set up (or does not exist: the same answer)
 * @throws AppError `provider_unavailable` when the provider's discovery fails
 */
export async function startSignIn(
  deps: FlowDeps,
  o: { tenant: string; next: string; origin: string },
): Promise<{ url: string; cookie: string }> {
  const p = await provider(deps, o.tenant);
  if (!p) {
    throw new AppError('not_found', `tenant ${o.tenant} has no organisation sign-in set up`, {
      tenant: o.tenant,
    });
  }
  const verifier = oidc.randomPKCECodeVerifier();
  const flow: FlowClaims = {
    v: 1,
    tenant: o.tenant,
    iss: p.settings.issuer,
    client_id: p.settings.client_id,
    state: oidc.randomState(),
    nonce: oidc.randomNonce(),
    verifier,
    next: o.next,
    exp: Math.floor(deps.now().getTime() / 1000) + FLOW_SECONDS,
  };
  const url = oidc.buildAuthorizationUrl(p.config, {
    redirect_uri: `${o.origin}${CALLBACK_PATH}`,
    scope: 'openid email profile',
    code_challenge: await oidc.calculatePKCECodeChallenge(verifier),
    code_challenge_method: 'S256',
    state: flow.state,
    nonce: flow.nonce,
  });
  return { url: url.href, cookie: await sealCookie(keyDeps(deps), 'flow', flow, deps.now()) };
}

/** A finished sign-in: the session cookie to set and where to go; or a refusal with why and whom to ask. */
export type SignInResult =
  | { ok: true; cookie: string; maxAge: number; next: string; claims: SessionClaims; role: Role }
  | { ok: false; why: Refusal; message: string; tenant: string; email: string; ask: string[] };

/**
 * Ends the flow at its callback: checks the response against the flow cookie, exchanges the code at the
 * flow's tenant's provider, reads the person's email and groups (ID token, else userinfo), and decides
 * their role.
 * @param query the callback's query string (`?code=…&state=…[&iss=…]`)
 * @throws AppError `bad_request` when there is no flow (expired, or begun in another browser), or the
 *   tenant's sign-in changed since it began, or the provider answered with an error
 * @throws AppError `provider_unavailable` when the provider's exchange or checks fail (a wrong `iss`,
 *   state, nonce or signature included), naming openid-client's reason
 */
export async function finishSignIn(
  deps: FlowDeps,
  o: { flowCookie: string | undefined; query: string; origin: string },
): Promise<SignInResult> {
  const now = deps.now();
  const flow = await openCookie(keyDeps(deps), 'flow', o.flowCookie, now);
  if (!flow) {
    throw new AppError(
      'bad_request',
      'this sign-in expired or began in another browser window: start again from the sign-in page',
    );
  }
  const p = await provider(deps, flow.tenant);
  if (!p || p.settings.issuer !== flow.iss || p.settings.client_id !== flow.client_id) {
    throw new AppError(
      'bad_request',
      `sign-in for tenant ${flow.tenant} changed while you were signing in: start again`,
    );
  }
  const redirect = `${o.origin}${CALLBACK_PATH}`;
  const providerError_ = new URLSearchParams(o.query).get('error');
  if (providerError_) {
    const desc = new URLSearchParams(o.query).get('error_description') ?? '';
    throw new AppError(
      'bad_request',
      `the sign-in provider refused: ${providerError_}${desc ? ` (${desc.slice(0, 200)})` : ''}`,
    );
  }
  let tokens: Awaited<ReturnType<typeof oidc.authorizationCodeGrant>>;
  try {
    tokens = await oidc.authorizationCodeGrant(
      p.config,
      new URL(`${redirect}${o.query}`),
      {
        pkceCodeVerifier: flow.verifier,
        expectedState: flow.state,
        expectedNonce: flow.nonce,
        idTokenExpected: true,
      },
      { redirect_uri: redirect },
    );
  } catch (err) {
    throw providerError(flow.iss, 'the code exchange', err);
  }
  const id = tokens.claims();
  if (!id) throw providerError(flow.iss, 'the code exchange', new Error('no ID token'));
  let claims: Record<string, unknown> = { ...id };
  const groupsClaim = p.settings.groups_claim;
  if (typeof claims.email !== 'string' || !(groupsClaim in claims)) {
    // Some providers (Keycloak, Okta, Entra's optional claims) put email or groups in userinfo only.
    if (p.config.serverMetadata().userinfo_endpoint) {
      try {
        const info = await oidc.fetchUserInfo(p.config, tokens.access_token, id.sub);
        claims = {
          ...info,
          ...claims,
          ...(groupsClaim in claims ? {} : { [groupsClaim]: info[groupsClaim] }),
        };
        if (typeof claims.email !== 'string' && typeof info.email === 'string') claims.email = info.email;
      } catch (err) {
        throw providerError(flow.iss, 'its userinfo endpoint', err);
      }
    }
  }
  return decideSignIn(deps, flow, p.settings, claims, id.sub);
}

/** The groups of claim value `v`: a list of names, or one name; anything else is none. */
export function groupsOf(v: unknown): string[] {
  if (typeof v === 'string') return [v];
  if (!Array.isArray(v)) return [];
  return v.filter((g): g is string => typeof g === 'string' && g.length > 0);
}

async function decideSignIn(
  deps: FlowDeps,
  flow: FlowClaims,
  settings: StoredOidcSettings,
  claims: Record<string, unknown>,
  sub: string,
): Promise<SignInResult> {
  const rawEmail = claims.email;
  if (typeof rawEmail !== 'string' || !/^[^\s@]+@[^\s@]+$/.test(rawEmail.trim()) || rawEmail.length > 254) {
    throw new AppError(
      'bad_request',
      'the provider gave no email address: ask your admin to allow the email scope',
    );
  }
  // A provider that says the address is unverified is not trusted with it (it names who this is).
  if (claims.email_verified === false) {
    throw new AppError(
      'bad_request',
      `the provider says ${rawEmail} is not verified: verify it there, then sign in again`,
    );
  }
  const email = normalEmail(rawEmail);
  const groups = groupsOf(claims[settings.groups_claim]);
  const record = await deps.state.getPerson(flow.tenant, email);
  const decision = decideRole(settings, email, groups, record);
  const now = deps.now();
  if ('refused' in decision) {
    await audit(deps.state, flow.tenant, email, now, decision.refused);
    return {
      ok: false,
      why: decision.refused,
      message: decision.message,
      tenant: flow.tenant,
      email,
      ask: await whomToAsk(deps.state, settings),
    };
  }
  const name = typeof claims.name === 'string' ? claims.name.slice(0, 200) : null;
  await noteSignIn(deps.state, flow.tenant, email, name, now);
  const nowS = Math.floor(now.getTime() / 1000);
  const authTime =
    typeof claims.auth_time === 'number' && claims.auth_time <= nowS ? Math.floor(claims.auth_time) : nowS;
  const session: SessionClaims = {
    v: 1,
    sid: newSid(),
    tenant: flow.tenant,
    iss: flow.iss,
    sub: sub.slice(0, 255),
    email,
    name,
    groups: keptGroups(groups, new Set(Object.keys(settings.role_map))),
    // The absolute limit counts from this sign-in, whatever the provider's own session says.
    auth_time: Math.max(authTime, nowS - 60),
    iat: nowS,
    exp: 0,
  };
  session.exp = sessionExp(session.auth_time, nowS, deps.signIn.config);
  const cookie = await sealCookie(keyDeps(deps), 'session', session, now);
  return {
    ok: true,
    cookie,
    maxAge: session.exp - nowS,
    next: flow.next,
    claims: session,
    role: decision.role,
  };
}

/**
 * Who can give a refused person a role: the tenant's admins by email (at most 5) and its admin groups.
 * @param settings the tenant's settings, or its name (then read)
 */
export async function whomToAsk(state: StateStore, settings: StoredOidcSettings | string): Promise<string[]> {
  if (typeof settings === 'string') {
    const read = await state.getOidcSettings(settings);
    if (!read) return [];
    settings = read;
  }
  const page = await state.listPeople(settings.tenant, { limit: 200 });
  const admins = page.items
    .filter((p) => p.role === 'admin')
    .map((p) => p.email)
    .slice(0, 5);
  return [...admins, ...groupsWithRole(settings, 'admin').map((g) => `anyone in group ${g}`)];
}

/** Writes `change` to `email`'s record (made when absent), retrying a lost conditional write a few times. */
export async function updatePerson(
  state: StateStore,
  tenant: string,
  email: string,
  at: string,
  change: (p: PersonRecord) => PersonRecord,
): Promise<PersonRecord> {
  for (let attempt = 0; ; attempt++) {
    const old = await state.getPerson(tenant, email);
    const base: PersonRecord = old ?? {
      tenant,
      email,
      role: null,
      user_ids: [],
      seen_user_ids: [],
      name: null,
      last_sign_in_at: null,
      updated_at: at,
      updated_by: 'sign-in',
      sessions_valid_after: null,
      ended_sessions: [],
      version: 0 as never,
    };
    const next = { ...change(base), version: (old?.version ?? 0) + 1 };
    try {
      await state.putPerson(next, old?.version ?? null);
      return next;
    } catch (err) {
      if (!(err instanceof StateConflictError) || attempt >= 4) throw err;
    }
  }
}

/** Records a sign-in on the person's record (name, time), making the record on their first. */
async function noteSignIn(state: StateStore, tenant: string, email: string, name: string | null, now: Date) {
  const at = now.toISOString();
  await updatePerson(state, tenant, email, at, (p) => ({ ...p, name: name ?? p.name, last_sign_in_at: at }));
}

/**
 * Ends the session `claims` (sign-out): its id is remembered on the person's record until its cookie
 * would have expired, so a copy of the cookie opens nothing either. Past `MAX_ENDED_SESSIONS` remembered,
 * every session of the person before now ends instead.
 * @returns the provider's end-session URL (RP-initiated logout) when it has one, else null
 */
export async function endSession(
  deps: FlowDeps,
  claims: SessionClaims,
  origin: string,
): Promise<string | null> {
  const now = deps.now();
  const at = now.toISOString();
  await updatePerson(deps.state, claims.tenant, claims.email, at, (p) => {
    const live = p.ended_sessions.filter((e) => Date.parse(e.exp) > now.getTime());
    const ended = [...live, { sid: claims.sid, exp: new Date(claims.exp * 1000).toISOString() }];
    if (ended.length <= MAX_ENDED_SESSIONS) return { ...p, ended_sessions: ended };
    return { ...p, ended_sessions: [], sessions_valid_after: at };
  });
  try {
    const p = await provider(deps, claims.tenant);
    if (!p?.config.serverMetadata().end_session_endpoint || p.settings.issuer !== claims.iss) return null;
    return oidc.buildEndSessionUrl(p.config, {
      client_id: p.settings.client_id,
      post_logout_redirect_uri: `${origin}${SIGNED_OUT_PATH}`,
    }).href;
  } catch {
    // The provider being down must not keep anyone signed in here: the session is ended already.
    return null;
  }
}

async function audit(
  state: StateStore,
  tenant: string,
  email: string,
  now: Date,
  why: Refusal,
): Promise<void> {
  const expires = new Date(now.getTime() + AUDIT_RETENTION_DAYS * 86_400_000);
  await state
    .appendAudit({
      tenant,
      id: `au_${ulid(now.getTime())}`,
      at: now.toISOString(),
      actor: { kind: 'person', email },
      action: 'sign-in.refused',
      target: email,
      detail: `refused: ${why}`,
      via: 'board',
      expires_at: expires.toISOString(),
    })
    .catch(() => {
      // The refusal stands whether or not it is listed: a failed append never lets anyone in.
    });
}
