/**
 * A signed-in browser's request (issue 29 items 2 and 3): the session cookie opened and checked against
 * the tenant's settings and the person's record as they are now, the person's role decided anew, and the
 * cookie renewed while it is used. Two small reads a request (the settings and the person), no session
 * store.
 *
 * A session is over when its cookie is past `exp` (idle), when `auth_time` is older than the absolute
 * limit, when the tenant's sign-in was removed or moved to another issuer, when the person signed it out
 * (`ended_sessions`) or was signed out everywhere (`sessions_valid_after`), or when they no longer have a
 * role (refused, with why).
 */
import { createHash, randomBytes } from 'node:crypto';
import { decodeProtectedHeader } from 'jose';
import { ROLE_SCOPES } from '../../contract/sign-in.js';
import type { PersonRecord, StateStore, StoredOidcSettings, TokenRecord } from '../../store/index.js';
import { openCookie, type SessionClaims, sealCookie } from './cookie.js';
import type { SignedInPerson, SignInServiceDeps } from './deps.js';
import { type KeyDeps, periodOf } from './keys.js';
import { decideRole, type Refusal } from './roles.js';

/** What a session request runs with. */
export interface SessionDeps {
  state: StateStore;
  signIn: SignInServiceDeps;
  now: () => Date;
}

/** A request's session: the person and their stand-in token record, and a renewed cookie to set (or null). */
export interface OpenSession {
  ok: true;
  person: SignedInPerson;
  caller: TokenRecord;
  claims: SessionClaims;
  /** the cookie sealed anew (renewal, or a rotated key), to set on the answer; null: keep the one sent */
  renewed: string | null;
  /** the renewed cookie's life, seconds (for its Max-Age) */
  maxAge: number;
}

/** Why a cookie did not sign the request in: none or a bad one (`signed_out`), or a refusal of the person. */
export type ClosedSession =
  | { ok: false; why: 'signed_out' }
  | { ok: false; why: 'ended'; message: string; tenant: string }
  | { ok: false; why: Refusal; message: string; tenant: string; email: string };

/** The key deps of a deployment's sign-in. */
export function keyDeps(d: Pick<SessionDeps, 'state' | 'signIn'>): KeyDeps {
  return { state: d.state, sealer: d.signIn.sealer, periodSeconds: d.signIn.config.keyPeriodSeconds };
}

/** A new session id: 16 random bytes, base64url (22 characters). */
export function newSid(): string {
  return randomBytes(16).toString('base64url');
}

/**
 * The stand-in token record of a signed-in person: their role's scopes, bound to no session, and an id
 * derived from tenant and email (`tok_` + 26 Crockford base32 characters, a valid ULID form), so the
 * per-token rate limit and "who did it" key on the person. It is never stored and has no secret.
 */
export function personCaller(tenant: string, email: string, person: SignedInPerson, at: string): TokenRecord {
  const digest = createHash('sha256').update(`hansard person\n${tenant}\n${email}`).digest();
  const alphabet = '0123456789ABCDEFGHJKMNPQRSTVWXYZ';
  // The first character of a ULID is at most 7 (its 48-bit time); the rest is any of the 32.
  let id = alphabet[digest[0]! & 7]!;
  for (let i = 1; i < 26; i++) id += alphabet[digest[i]! & 31];
  return {
    id: `tok_${id}`,
    tenant,
    hash: '',
    scopes: [...ROLE_SCOPES[person.role]],
    session: null,
    label: `person ${email}`,
    created_at: at,
    expires_at: null,
    revoked_at: null,
    last_used_at: at,
    parent: null,
    root: `tok_${id}`,
  };
}

/** Whether `person`'s record ends the session `claims` (signed out there or everywhere). */
export function sessionEnded(person: PersonRecord | null, claims: SessionClaims): boolean {
  if (!person) return false;
  if (person.ended_sessions.some((e) => e.sid === claims.sid)) return true;
  const after = person.sessions_valid_after;
  return after !== null && claims.auth_time * 1000 <= Date.parse(after);
}

/**
 * Opens the session cookie `value` and decides the request's person and role as of now.
 * @returns `OpenSession`, or why the request is not signed in (`signed_out`: no or a bad cookie, which the
 *   caller treats as no cookie; `ended`: sign in again; a refusal: the page that says why)
 * @throws what the stores or the sealer throw (a fault: 5xx, not a sign-out)
 */
export async function openSession(
  deps: SessionDeps,
  value: string | undefined,
): Promise<OpenSession | ClosedSession> {
  const now = deps.now();
  const kd = keyDeps(deps);
  const claims = await openCookie(kd, 'session', value, now);
  if (!claims) return { ok: false, why: 'signed_out' };
  const cfg = deps.signIn.config;
  const nowS = Math.floor(now.getTime() / 1000);
  if (claims.auth_time + cfg.absoluteSeconds <= nowS) {
    return {
      ok: false,
      why: 'ended',
      message: 'Your sign-in is more than a working day old: sign in again.',
      tenant: claims.tenant,
    };
  }
  const settings = await deps.state.getOidcSettings(claims.tenant);
  if (!settingsStillFor(settings, claims)) {
    return {
      ok: false,
      why: 'ended',
      message: `Sign-in for tenant ${claims.tenant} has been changed or removed by an admin: sign in again.`,
      tenant: claims.tenant,
    };
  }
  const record = await deps.state.getPerson(claims.tenant, claims.email);
  if (sessionEnded(record, claims)) {
    return {
      ok: false,
      why: 'ended',
      message: 'This sign-in was ended: sign in again.',
      tenant: claims.tenant,
    };
  }
  const decision = decideRole(settings, claims.email, claims.groups, record);
  if ('refused' in decision) {
    return {
      ok: false,
      why: decision.refused,
      message: decision.message,
      tenant: claims.tenant,
      email: claims.email,
    };
  }
  const person: SignedInPerson = {
    email: claims.email,
    name: claims.name,
    role: decision.role,
    user_ids: [...new Set([...(record?.user_ids ?? []), ...(record?.seen_user_ids ?? [])])],
    sid: claims.sid,
  };
  const at = now.toISOString();
  const caller = personCaller(claims.tenant, claims.email, person, at);
  const kid = String(periodOf(now, cfg.keyPeriodSeconds));
  const stale = nowS - claims.iat >= cfg.renewAfterSeconds || cookieKid(value) !== kid;
  if (!stale) return { ok: true, person, caller, claims, renewed: null, maxAge: claims.exp - nowS };
  const renewedClaims = { ...claims, iat: nowS, exp: sessionExp(claims.auth_time, nowS, cfg) };
  const renewed = await sealCookie(kd, 'session', renewedClaims, now);
  return { ok: true, person, caller, claims: renewedClaims, renewed, maxAge: renewedClaims.exp - nowS };
}

/** When a session issued at `nowS` (seconds) ends: idle time on, capped by the absolute limit from sign-in. */
export function sessionExp(
  authTime: number,
  nowS: number,
  cfg: Pick<SignInServiceDeps['config'], 'idleSeconds' | 'absoluteSeconds'>,
): number {
  return Math.min(nowS + cfg.idleSeconds, authTime + cfg.absoluteSeconds);
}

/** Whether the tenant's settings are still those the session signed in under (same issuer and generation). */
function settingsStillFor(
  settings: StoredOidcSettings | null,
  claims: SessionClaims,
): settings is StoredOidcSettings {
  return (
    settings !== null &&
    settings.tenant === claims.tenant &&
    settings.issuer === claims.iss &&
    settings.generation === claims.gen
  );
}

/** The `kid` of a sealed cookie's protected header (no check: it opened already). */
function cookieKid(value: string | undefined): string | null {
  // It opened already, so its header decodes; jose's own reading, not a second parser.
  const kid = decodeProtectedHeader(value ?? '').kid;
  return typeof kid === 'string' ? kid : null;
}
