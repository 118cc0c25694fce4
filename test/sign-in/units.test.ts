/**
 * The sign-in service's rules case by case (issue 29; lib/service/sign-in/{roles,cookie,keys,session}.ts),
 * with a real SQLite store and the local sealer under the keys: who gets which role and why not, what a
 * sealed cookie opens as (and what it never opens as), which keys open when, when a session is over.
 * The flows end to end are ./flow.test.ts and ./browser.test.ts.
 */
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { CompactEncrypt } from 'jose';
import { afterAll, describe, expect, it } from 'vitest';
import { TokenId } from '../../lib/contract/ids.js';
import { ROLE_SCOPES } from '../../lib/contract/sign-in.js';
import { openLocalStores } from '../../lib/deploy/local.js';
import { LocalSecretSealer, SIGN_IN_SEALING } from '../../lib/deploy/local-sealer.js';
import {
  type FlowClaims,
  GROUPS_BUDGET,
  keptGroups,
  openCookie,
  type SessionClaims,
  sealCookie,
} from '../../lib/service/sign-in/cookie.js';
import { groupsOf } from '../../lib/service/sign-in/flow.js';
import { currentKey, keyFor, periodOf } from '../../lib/service/sign-in/keys.js';
import { decideRole, emailDomain, groupsWithRole } from '../../lib/service/sign-in/roles.js';
import { personCaller, sessionEnded, sessionExp } from '../../lib/service/sign-in/session.js';
import type { PersonRecord } from '../../lib/store/index.js';

const dir = mkdtempSync(join(tmpdir(), 'hansard-sign-in-units-'));
const stores = openLocalStores(join(dir, 'data'));
afterAll(() => stores.state.close());
const sealer = new LocalSecretSealer(dir, SIGN_IN_SEALING);
const DAY = 86_400;
const kd = { state: stores.state, sealer, periodSeconds: DAY };

const settings = {
  tenant: 'acme',
  allowed_domains: ['acme.test'],
  role_map: { leads: 'admin', eng: 'member', ops: 'viewer' } as const,
  default_role: null,
};

describe('decideRole', () => {
  it('gives the highest role of the mapped groups, in any order', () => {
    expect(decideRole(settings, 'a@acme.test', ['ops', 'eng'], null)).toEqual({ role: 'member' });
    expect(decideRole(settings, 'a@acme.test', ['eng', 'ops'], null)).toEqual({ role: 'member' });
    expect(decideRole(settings, 'a@acme.test', ['eng', 'leads', 'ops'], null)).toEqual({ role: 'admin' });
    expect(decideRole(settings, 'a@acme.test', ['ops'], null)).toEqual({ role: 'viewer' });
  });

  it('falls back to the default role, else refuses as unmapped', () => {
    expect(decideRole({ ...settings, default_role: 'viewer' }, 'a@acme.test', ['sales'], null)).toEqual({
      role: 'viewer',
    });
    // a mapped group above the default wins; the default never lowers a mapped role
    expect(decideRole({ ...settings, default_role: 'member' }, 'a@acme.test', ['leads'], null)).toEqual({
      role: 'admin',
    });
    const r = decideRole(settings, 'a@acme.test', ['sales'], null);
    expect(r).toMatchObject({ refused: 'unmapped' });
    expect('message' in r && r.message).toMatch(/a@acme\.test has no role in tenant acme/);
  });

  it("takes the person's own role over the map, in both directions, and refuses a removed person", () => {
    expect(decideRole(settings, 'a@acme.test', ['leads'], { role: 'viewer' })).toEqual({ role: 'viewer' });
    expect(decideRole(settings, 'a@acme.test', [], { role: 'admin' })).toEqual({ role: 'admin' });
    expect(decideRole(settings, 'a@acme.test', ['leads'], { role: 'none' })).toMatchObject({
      refused: 'removed',
    });
    expect(decideRole(settings, 'a@acme.test', ['eng'], { role: null })).toEqual({ role: 'member' });
  });

  it('refuses an email outside the allowed domains before anything else; no list allows any', () => {
    expect(decideRole(settings, 'a@evil.test', ['leads'], { role: 'admin' })).toMatchObject({
      refused: 'domain',
    });
    // a subdomain, or the domain inside the local part, is not the domain
    expect(decideRole(settings, 'a@sub.acme.test', ['leads'], null)).toMatchObject({ refused: 'domain' });
    expect(decideRole(settings, 'acme.test@evil.test', ['leads'], null)).toMatchObject({ refused: 'domain' });
    expect(decideRole({ ...settings, allowed_domains: [] }, 'a@evil.test', ['eng'], null)).toEqual({
      role: 'member',
    });
    expect(emailDomain('x@Acme.Test')).toBe('acme.test');
    expect(emailDomain('a@b@acme.test')).toBe('acme.test');
  });

  it('names the admin groups', () => {
    expect(groupsWithRole(settings, 'admin')).toEqual(['leads']);
    expect(groupsWithRole(settings, 'member')).toEqual(['eng']);
  });
});

describe('groups from a claim', () => {
  it('reads a list or one name, and nothing else', () => {
    expect(groupsOf(['a', 2, '', 'b'])).toEqual(['a', 'b']);
    expect(groupsOf('solo')).toEqual(['solo']);
    expect(groupsOf({ a: 1 })).toEqual([]);
    expect(groupsOf(undefined)).toEqual([]);
  });

  it('keeps the mapped groups first and the rest within the budget', () => {
    const many = Array.from(
      { length: 400 },
      (_, i) => `group-${String(i).padStart(4, '0')}-with-a-long-name`,
    );
    const kept = keptGroups([...many, 'leads'], new Set(['leads']));
    expect(kept[0]).toBe('leads');
    expect(Buffer.byteLength(JSON.stringify(kept))).toBeLessThanOrEqual(GROUPS_BUDGET);
    expect(kept.length).toBeGreaterThan(10);
    expect(keptGroups(['x'.repeat(300), 'eng'], new Set())).toEqual(['eng']);
  });
});

const now = new Date('2026-12-07T12:00:00Z');
const nowS = Math.floor(now.getTime() / 1000);
const session: SessionClaims = {
  v: 1,
  sid: 'AAAAAAAAAAAAAAAAAAAAAA',
  tenant: 'acme',
  gen: 'g1',
  iss: 'https://idp.example',
  sub: 'u1',
  email: 'dev@acme.test',
  name: null,
  groups: ['eng'],
  auth_time: nowS,
  iat: nowS,
  exp: nowS + 3600,
};

describe('sealed cookies', () => {
  it('open as what they were sealed as, and not as the other purpose', async () => {
    const v = await sealCookie(kd, 'session', session, now);
    expect(await openCookie(kd, 'session', v, now)).toEqual(session);
    expect(await openCookie(kd, 'flow', v, now)).toBeNull();
    const flow: FlowClaims = {
      v: 1,
      tenant: 'acme',
      iss: 'https://idp.example',
      client_id: 'c',
      state: 's',
      nonce: 'n',
      verifier: 'v',
      next: '/',
      exp: nowS + 600,
    };
    const f = await sealCookie(kd, 'flow', flow, now);
    expect(await openCookie(kd, 'session', f, now)).toBeNull();
    expect(await openCookie(kd, 'flow', f, now)).toEqual(flow);
  });

  it('do not open once expired (exp is exclusive), altered, or made with a key of our own choosing', async () => {
    const v = await sealCookie(kd, 'session', session, now);
    expect(await openCookie(kd, 'session', v, new Date((session.exp - 1) * 1000))).not.toBeNull();
    expect(await openCookie(kd, 'session', v, new Date(session.exp * 1000))).toBeNull();
    for (const i of [0, 2, 3, 4]) {
      const parts = v.split('.');
      const b = Buffer.from(parts[i]!, 'base64url');
      if (b.length === 0) continue;
      b[b.length - 1] = b[b.length - 1]! ^ 1;
      parts[i] = b.toString('base64url');
      expect(await openCookie(kd, 'session', parts.join('.'), now)).toBeNull();
    }
    // a cookie sealed with any other key under the current kid
    const { kid } = await currentKey(kd, now);
    const forged = await new CompactEncrypt(new TextEncoder().encode(JSON.stringify(session)))
      .setProtectedHeader({ alg: 'dir', enc: 'A256GCM', kid, typ: 'session' })
      .encrypt(new Uint8Array(32));
    expect(await openCookie(kd, 'session', forged, now)).toBeNull();
    expect(await openCookie(kd, 'session', undefined, now)).toBeNull();
    expect(await openCookie(kd, 'session', 'not.a.jwe', now)).toBeNull();
    expect(await openCookie(kd, 'session', 'x'.repeat(5000), now)).toBeNull();
  });

  it('refuse claims of another shape even when sealed with our key', async () => {
    const { kid, key } = await currentKey(kd, now);
    const seal = (claims: unknown) =>
      new CompactEncrypt(new TextEncoder().encode(JSON.stringify(claims)))
        .setProtectedHeader({ alg: 'dir', enc: 'A256GCM', kid, typ: 'session' })
        .encrypt(key);
    expect(await openCookie(kd, 'session', await seal({ ...session, admin: true }), now)).toBeNull();
    expect(await openCookie(kd, 'session', await seal({ ...session, v: 2 }), now)).toBeNull();
    expect(await openCookie(kd, 'session', await seal({ ...session, email: 'no-at' }), now)).toBeNull();
  });
});

describe('cookie keys', () => {
  it('one key per period, stored once, the same for every caller; the previous period still opens', async () => {
    const a = await currentKey(kd, now);
    const again = await currentKey({ ...kd, sealer: new LocalSecretSealer(dir, SIGN_IN_SEALING) }, now);
    expect(Buffer.from(again.key).equals(Buffer.from(a.key))).toBe(true);
    expect(a.kid).toBe(String(periodOf(now, DAY)));
    const next = new Date(now.getTime() + DAY * 1000);
    const b = await currentKey(kd, next);
    expect(Number(b.kid)).toBe(Number(a.kid) + 1);
    expect(Buffer.from(b.key).equals(Buffer.from(a.key))).toBe(false);
    expect(await keyFor(kd, a.kid, next)).not.toBeNull();
    expect(await keyFor(kd, a.kid, new Date(now.getTime() + 2 * DAY * 1000))).toBeNull();
    // a key of a period to come never opens
    expect(await keyFor(kd, b.kid, now)).toBeNull();
    for (const bad of [undefined, 7, '', '1e3', '-1', `${a.kid} `])
      expect(await keyFor(kd, bad, now)).toBeNull();
  });

  it('changes at the period boundary exactly', () => {
    const edge = new Date(Math.ceil(now.getTime() / (DAY * 1000)) * DAY * 1000);
    expect(periodOf(new Date(edge.getTime() - 1), DAY)).toBe(periodOf(edge, DAY) - 1);
  });
});

describe('sessions', () => {
  const person = (over: Partial<PersonRecord>): PersonRecord => ({
    tenant: 'acme',
    email: 'dev@acme.test',
    role: null,
    user_ids: [],
    seen_user_ids: [],
    name: null,
    last_sign_in_at: null,
    updated_at: now.toISOString(),
    updated_by: 'x',
    sessions_valid_after: null,
    ended_sessions: [],
    version: 1,
    ...over,
  });

  it('ends a session signed out, and every session begun up to a sign-out everywhere', () => {
    expect(sessionEnded(null, session)).toBe(false);
    expect(sessionEnded(person({}), session)).toBe(false);
    expect(
      sessionEnded(person({ ended_sessions: [{ sid: session.sid, exp: now.toISOString() }] }), session),
    ).toBe(true);
    expect(
      sessionEnded(person({ ended_sessions: [{ sid: 'B'.repeat(22), exp: now.toISOString() }] }), session),
    ).toBe(false);
    const at = (s: number) => new Date(s * 1000).toISOString();
    expect(sessionEnded(person({ sessions_valid_after: at(nowS) }), session)).toBe(true);
    expect(sessionEnded(person({ sessions_valid_after: at(nowS - 1) }), session)).toBe(false);
  });

  it('lasts the idle time from its last use, never past the absolute limit from sign-in', () => {
    const cfg = { idleSeconds: 4 * 3600, absoluteSeconds: 12 * 3600 };
    expect(sessionExp(nowS, nowS, cfg)).toBe(nowS + 4 * 3600);
    expect(sessionExp(nowS, nowS + 10 * 3600, cfg)).toBe(nowS + 12 * 3600);
  });

  it("stands a person in with their role's scopes, a valid token id of their own, bound to no session", () => {
    const p = { email: 'dev@acme.test', name: null, role: 'member' as const, user_ids: [], sid: session.sid };
    const c = personCaller('acme', 'dev@acme.test', p, now.toISOString());
    expect(TokenId.safeParse(c.id).success).toBe(true);
    expect(c.root).toBe(c.id);
    expect(c.scopes).toEqual([...ROLE_SCOPES.member]);
    expect(c.session).toBeNull();
    expect(personCaller('acme', 'dev@acme.test', p, now.toISOString()).id).toBe(c.id);
    expect(personCaller('globex', 'dev@acme.test', p, now.toISOString()).id).not.toBe(c.id);
    expect(personCaller('acme', 'lead@acme.test', p, now.toISOString()).id).not.toBe(c.id);
    expect(ROLE_SCOPES.viewer).not.toContain('report');
    expect(ROLE_SCOPES.member).not.toContain('admin');
    for (const r of ['viewer', 'member', 'admin'] as const) expect(ROLE_SCOPES[r]).not.toContain('ingest');
  });
});
