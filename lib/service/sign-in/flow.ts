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
import { EmailAddress, normalEmail, type Role } from '../../contract/sign-in.js';
import {
  MAX_ENDED_SESSIONS,
  type PersonRecord,
  type StateStore,
  type StoredOidcSettings,
} from '../../store/index.js';
import { AppError } from '../shared/errors.js';
import {
  type FlowClaims,
  keptGroups,
  MAX_COOKIE_CHARS,
  openCookie,
  type SessionClaims,
  sealCookie,
} from './cookie.js';
import { boardOriginOf, type SignInServiceDeps } from './deps.js';
import { discoverProvider, providerError } from './provider.js';
import { noteSignIn, recordRefusal, updatePerson, whomToAsk } from './records.js';
import { decideRole, type Refusal } from './roles.js';
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
  const config = await discoverProvider(
    settings.issuer,
    settings.client_id,
    secret,
    deps.now().getTime(),
    deps.signIn.config.allowPrivateIssuers,
  );
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
  // A `next` too long for the cookie (JSON doubles its quotes) is dropped: back to the board's first page.
  if (sealedLength(flow) > MAX_COOKIE_CHARS) flow.next = '/';
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
  const answer = new URLSearchParams(o.query);
  const refusedCode = answer.get('error');
  if (refusedCode) {
    // Only an answer to this flow (its state) is shown as the provider's: a link someone else made with
    // an error and a description of their choosing is not.
    if (answer.get('state') !== flow.state) {
      throw new AppError(
        'bad_request',
        'this answer is not for the sign-in under way: start again from the sign-in page',
      );
    }
    const desc = (answer.get('error_description') ?? '').replace(/[^\x20-\x7e]/g, ' ').slice(0, 200);
    throw new AppError(
      'bad_request',
      `the sign-in provider refused: ${refusedCode.replace(/[^\x20-\x7e]/g, ' ').slice(0, 64)}${desc ? ` (${desc})` : ''}`,
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

/**
 * The session sealed, made to fit a cookie: past `MAX_COOKIE_CHARS`, only the groups the role map names
 * are kept, then the name goes (the email stays: it is who this is).
 */
async function sealFitting(
  deps: FlowDeps,
  session: SessionClaims,
  settings: StoredOidcSettings,
  now: Date,
): Promise<string> {
  const mapped = new Set(Object.keys(settings.role_map));
  const tries: SessionClaims[] = [
    session,
    { ...session, groups: session.groups.filter((g) => mapped.has(g)) },
    { ...session, groups: session.groups.filter((g) => mapped.has(g)), name: null },
  ];
  for (const t of tries) {
    if (sealedLength(t) > MAX_COOKIE_CHARS) continue;
    Object.assign(session, t);
    return sealCookie(keyDeps(deps), 'session', t, now);
  }
  throw new AppError(
    'bad_request',
    'the provider sent more about you than a sign-in cookie can hold: ask your admin',
  );
}

/** The length of a sealed cookie of `claims`: the JWE's parts, in base64url (header ≈ 80, iv 16, tag 22). */
function sealedLength(claims: SessionClaims | FlowClaims): number {
  return 120 + Math.ceil((Buffer.byteLength(JSON.stringify(claims)) * 4) / 3);
}

/** The first whole second after the person's `sessions_valid_after`, or 0 when none is set. */
function validAfterS(record: PersonRecord | null): number {
  const after = record?.sessions_valid_after;
  return after ? Math.floor(Date.parse(after) / 1000) + 1 : 0;
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
  if (typeof rawEmail !== 'string' || rawEmail.trim() === '') {
    throw new AppError(
      'bad_request',
      'the provider gave no email address: ask your admin to allow the email scope',
    );
  }
  // The identity key has one spelling: printable ASCII (a look-alike or a character that lower-cases
  // into another would be someone else who reads the same).
  if (!EmailAddress.safeParse(rawEmail.trim()).success) {
    throw new AppError(
      'bad_request',
      'the provider gave an email address hansard does not take as an identity (printable ASCII only, one @, at most 254 characters): ask your admin',
    );
  }
  // A provider that says the address is not verified (in any spelling) is not trusted with it: it names
  // who this is. Absent (Entra ID sends none) is taken as the provider's own word; docs/sign-in.md says
  // why allowed_domains matters there.
  const verified = claims.email_verified;
  if (verified !== undefined && verified !== true && verified !== 'true') {
    throw new AppError(
      'bad_request',
      `the provider does not say ${rawEmail.trim()} is verified: verify it there, then sign in again`,
    );
  }
  const email = normalEmail(rawEmail);
  const groups = groupsOf(claims[settings.groups_claim]);
  const record = await deps.state.getPerson(flow.tenant, email);
  const decision = decideRole(settings, email, groups, record);
  const now = deps.now();
  if ('refused' in decision) {
    await recordRefusal(deps.state, flow.tenant, email, now, decision.refused);
    return {
      ok: false,
      why: decision.refused,
      message: decision.message,
      tenant: flow.tenant,
      email,
      ask: await whomToAsk(deps.state, settings, decision.refused),
    };
  }
  const name = typeof claims.name === 'string' ? claims.name.slice(0, 200) : null;
  await noteSignIn(deps.state, flow.tenant, email, name, now);
  const nowS = Math.floor(now.getTime() / 1000);
  const session: SessionClaims = {
    v: 1,
    sid: newSid(),
    tenant: flow.tenant,
    gen: settings.generation,
    iss: flow.iss,
    sub: sub.slice(0, 255),
    email,
    name,
    groups: keptGroups(groups, new Set(Object.keys(settings.role_map))),
    // The absolute limit counts from this sign-in, whatever the provider's own session says; past a
    // sign-out everywhere made this same second (whole seconds here, ms there), so it does not end this.
    auth_time: Math.max(nowS, validAfterS(record)),
    iat: nowS,
    exp: 0,
  };
  session.exp = sessionExp(session.auth_time, nowS, deps.signIn.config);
  const cookie = await sealFitting(deps, session, settings, now);
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
