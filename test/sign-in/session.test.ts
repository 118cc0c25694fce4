/**
 * `openSession` (lib/service/sign-in/session.ts) case by case against a real SQLite store and the local
 * sealer, on a fixed clock: when a session is over (the absolute limit to the second, settings removed,
 * moved to another issuer or made anew, signed out, removed), how it is renewed (at the renewal age to the
 * second, under the current key, never past the absolute limit), and what the request runs as.
 */
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeEach, describe, expect, it } from 'vitest';
import { openLocalStores } from '../../lib/deploy/local.js';
import { LocalSecretSealer, SIGN_IN_SEALING } from '../../lib/deploy/local-sealer.js';
import { openCookie, type SessionClaims, sealCookie } from '../../lib/service/sign-in/cookie.js';
import { DEFAULT_SIGN_IN_CONFIG } from '../../lib/service/sign-in/deps.js';
import { keyDeps, openSession } from '../../lib/service/sign-in/session.js';
import type { PersonRecord, StoredOidcSettings } from '../../lib/store/index.js';

const dir = mkdtempSync(join(tmpdir(), 'hansard-session-'));
const stores = openLocalStores(join(dir, 'data'));
afterAll(() => stores.state.close());
const sealer = new LocalSecretSealer(dir, SIGN_IN_SEALING);
const cfg = DEFAULT_SIGN_IN_CONFIG;
const signIn = { sealer, config: cfg };
// noon, so that a few hours on stay within the day's key period
const T0 = Date.parse('2026-12-07T08:00:00Z');
let now = T0;
const deps = { state: stores.state, signIn, now: () => new Date(now) };
const s0 = Math.floor(T0 / 1000);

const settings: StoredOidcSettings = {
  tenant: 'acme',
  issuer: 'https://idp.example',
  client_id: 'c',
  client_secret_sealed: 'x',
  allowed_domains: [],
  groups_claim: 'groups',
  role_map: { eng: 'member' },
  default_role: null,
  updated_at: new Date(T0).toISOString(),
  updated_by: 'test',
  generation: 'g1',
};
const claims: SessionClaims = {
  v: 1,
  sid: 'AAAAAAAAAAAAAAAAAAAAAA',
  tenant: 'acme',
  gen: 'g1',
  iss: 'https://idp.example',
  sub: 'u1',
  email: 'dev@acme.test',
  name: 'Dee',
  groups: ['eng'],
  auth_time: s0,
  iat: s0,
  exp: s0 + cfg.idleSeconds,
};
const seal = (c: SessionClaims = claims) => sealCookie(keyDeps(deps), 'session', c, new Date(now));

async function person(over: Partial<PersonRecord>) {
  const old = await stores.state.getPerson('acme', 'dev@acme.test');
  const base: PersonRecord = old ?? {
    tenant: 'acme',
    email: 'dev@acme.test',
    role: null,
    user_ids: [],
    seen_user_ids: [],
    name: null,
    last_sign_in_at: null,
    updated_at: new Date(T0).toISOString(),
    updated_by: 'test',
    sessions_valid_after: null,
    ended_sessions: [],
    version: 0,
  };
  await stores.state.putPerson({ ...base, ...over, version: base.version + 1 }, old ? old.version : null);
}

beforeEach(async () => {
  now = T0;
  await stores.state.putOidcSettings(settings);
  await person({
    role: null,
    user_ids: [],
    seen_user_ids: [],
    ended_sessions: [],
    sessions_valid_after: null,
  });
});

describe('openSession', () => {
  it('runs the request as the person, with their role and every id that is theirs, once each', async () => {
    await person({ user_ids: ['dee', 'd2'], seen_user_ids: ['d2', 'dee-ci'] });
    const s = await openSession(deps, await seal());
    expect(s.ok).toBe(true);
    if (!s.ok) return;
    expect(s.person).toEqual({
      email: 'dev@acme.test',
      name: 'Dee',
      role: 'member',
      user_ids: ['dee', 'd2', 'dee-ci'],
      sid: claims.sid,
    });
    expect(s.caller.tenant).toBe('acme');
    expect(s.renewed).toBeNull();
    expect(s.maxAge).toBe(cfg.idleSeconds);
  });

  it('is renewed at the renewal age exactly, under the current key, for the idle time on', async () => {
    const v = await seal();
    now = T0 + (cfg.renewAfterSeconds - 1) * 1000;
    const before = await openSession(deps, v);
    expect(before.ok && before.renewed).toBeNull();
    now = T0 + cfg.renewAfterSeconds * 1000;
    const at = await openSession(deps, v);
    expect(at.ok).toBe(true);
    if (!at.ok) return;
    expect(at.renewed).not.toBeNull();
    const renewed = await openCookie(keyDeps(deps), 'session', at.renewed!, new Date(now));
    const nowS = s0 + cfg.renewAfterSeconds;
    expect(renewed).toMatchObject({ iat: nowS, exp: nowS + cfg.idleSeconds, auth_time: s0, sid: claims.sid });
    expect(at.maxAge).toBe(cfg.idleSeconds);
  });

  it('never renews past the absolute limit, and ends at it to the second', async () => {
    // used for hours: renewed each time, the last renewal capped by the absolute limit
    const late = { ...claims, iat: s0 + cfg.absoluteSeconds - 3600, exp: s0 + cfg.absoluteSeconds };
    now = (s0 + cfg.absoluteSeconds - 1800) * 1000;
    const s = await openSession(deps, await seal(late));
    expect(s.ok && s.maxAge).toBe(1800);
    const renewed =
      s.ok && s.renewed ? await openCookie(keyDeps(deps), 'session', s.renewed, new Date(now)) : null;
    expect(renewed?.exp).toBe(s0 + cfg.absoluteSeconds);
    now = (s0 + cfg.absoluteSeconds - 1) * 1000;
    const v = await seal({ ...late, exp: s0 + cfg.absoluteSeconds + 10 });
    expect((await openSession(deps, v)).ok).toBe(true);
    now = (s0 + cfg.absoluteSeconds) * 1000;
    expect(await openSession(deps, v)).toMatchObject({ ok: false, why: 'ended', tenant: 'acme' });
  });

  it('ends when the settings are removed, moved to another issuer, or made anew', async () => {
    const v = await seal();
    await stores.state.putOidcSettings({ ...settings, issuer: 'https://other.example' });
    expect(await openSession(deps, v)).toMatchObject({ ok: false, why: 'ended' });
    await stores.state.putOidcSettings({ ...settings, generation: 'g2' });
    expect(await openSession(deps, v)).toMatchObject({ ok: false, why: 'ended' });
    await stores.state.deleteOidcSettings('acme');
    expect(await openSession(deps, v)).toMatchObject({ ok: false, why: 'ended' });
    await stores.state.putOidcSettings(settings);
    expect((await openSession(deps, v)).ok).toBe(true);
    // a cookie of another tenant's settings does not open under this one's
    expect(await openSession(deps, await seal({ ...claims, tenant: 'globex' }))).toMatchObject({ ok: false });
  });

  it('ends when signed out there or everywhere, and refuses a removed person with why', async () => {
    const v = await seal();
    await person({ ended_sessions: [{ sid: claims.sid, exp: new Date(T0 + 3600_000).toISOString() }] });
    expect(await openSession(deps, v)).toMatchObject({ ok: false, why: 'ended' });
    await person({ ended_sessions: [], sessions_valid_after: new Date(T0).toISOString() });
    expect(await openSession(deps, v)).toMatchObject({ ok: false, why: 'ended' });
    await person({ sessions_valid_after: null, role: 'none' });
    expect(await openSession(deps, v)).toMatchObject({ ok: false, why: 'removed', email: 'dev@acme.test' });
  });

  it('treats no cookie, or one that does not open, as signed out', async () => {
    expect(await openSession(deps, undefined)).toEqual({ ok: false, why: 'signed_out' });
    expect(await openSession(deps, 'garbage')).toEqual({ ok: false, why: 'signed_out' });
    // a flow cookie holding a session's claims is still not a session (the purpose is in the header)
    const asFlow = await sealCookie(keyDeps(deps), 'flow', claims as never, new Date(now));
    expect(await openCookie(keyDeps(deps), 'session', asFlow, new Date(now))).toBeNull();
  });
});
