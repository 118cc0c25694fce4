/**
 * Attack on the usage routes (issue 27, docs/usage.md "Reading them", docs/api.md): can another tenant,
 * a session-bound token or a `read` token read or change a tenant's usage, and does bad input to
 * `GET /v1/sessions/{sid}/usage`, `GET /v1/usage` and `POST /v1/usage/recompute` always get a clear
 * `{"error":{code,message,details}}` with the right status, never a stack trace or a 500? Over real HTTP
 * on loopback with the real SQLite store; sessions written by the real library writer
 * (test/support/usage-sessions.ts, whose totals are computed by hand).
 *
 * What holds is an ordinary test; what gives way is `it.fails` with a comment saying what should happen.
 */
import { describe, expect, it } from 'vitest';
import { newId } from '../../lib/log/index.js';
import { expectError, request } from '../support/http.js';
import { mint, useServer } from '../support/server.js';
import { upload } from '../support/stored.js';
import { CLAUDE, CODEX, claudeSession, codexSession, TODAY } from '../support/usage-sessions.js';

const srv = useServer({
  tenants: ['acme', 'globex'],
  tokens: {
    reader: ['read'],
    board: ['board'],
    ingest: ['ingest'],
    report: ['report'],
    globexReader: { tenant: 'globex', scopes: ['read'] },
  },
});

let acmeSid = '';
let otherSid = '';
const usage = (sid: string, token: string, q = '') =>
  request(srv, 'GET', `/v1/sessions/${sid}/usage${q}`, { token });
const tenantUsage = (token: string, q = '') => request(srv, 'GET', `/v1/usage${q}`, { token });
const recompute = (token: string, q = '') => request(srv, 'POST', `/v1/usage/recompute${q}`, { token });

describe('tenancy', () => {
  it('two sessions of acme counted: the hand-computed tables', async () => {
    const a = claudeSession(srv.workDir);
    const b = codexSession(srv.workDir);
    await upload(srv, srv.admin, a);
    await upload(srv, srv.admin, b);
    acmeSid = a.sid;
    otherSid = b.sid;
    expect((await usage(acmeSid, srv.admin)).json.total).toEqual(CLAUDE);
    expect((await usage(otherSid, srv.admin)).json.total).toEqual(CODEX);
  });

  it("globex cannot read acme's session usage: the answer of a session that does not exist", async () => {
    const missing = await usage(newId('s'), srv.tenants.globex.admin);
    expectError(srv, missing, 404, 'not_found');
    for (const token of [srv.tenants.globex.admin, srv.tokens.globexReader]) {
      for (const q of ['', '?by=turn', '?by=person', `?from=${TODAY}&to=${TODAY}`]) {
        const a = await usage(acmeSid, token, q);
        expectError(srv, a, 404, 'not_found');
        expect(a.text).toBe(missing.text);
      }
    }
  });

  it("globex's tenant usage holds nothing of acme's", async () => {
    const a = await tenantUsage(srv.tenants.globex.admin, `?group_by=model&from=${TODAY}&to=${TODAY}`);
    expect(a.status, a.text).toBe(200);
    expect(a.json.groups).toEqual([]);
    expect(a.json.total).toMatchObject({ records: 0, turns: 0 });
    expect(a.text).not.toContain('claude-sonnet-4-5');
  });

  it("globex's admin recomputing acme's session: not found, acme's counters untouched; its whole-tenant recompute sees none of acme's", async () => {
    const before = (await usage(acmeSid, srv.admin, '?by=writer')).json;
    const missing = await recompute(srv.tenants.globex.admin, `?sid=${newId('s')}`);
    expectError(srv, missing, 404, 'not_found');
    const r = await recompute(srv.tenants.globex.admin, `?sid=${acmeSid}`);
    expectError(srv, r, 404, 'not_found');
    expect(r.text).toBe(missing.text);
    const all = await recompute(srv.tenants.globex.admin);
    expect(all.status, all.text).toBe(200);
    expect(all.json).toMatchObject({ sessions: 0, writers: 0 });
    expect((await usage(acmeSid, srv.admin, '?by=writer')).json).toEqual(before);
  });

  it('a session-bound token: its own session only, not the tenant, not another session, no recompute', async () => {
    const bound = await mint(srv, 'acme', ['read'], acmeSid);
    expect((await usage(acmeSid, bound)).json.total).toEqual(CLAUDE);
    const missing = await usage(newId('s'), bound);
    const other = await usage(otherSid, bound);
    expectError(srv, other, 404, 'not_found');
    expect(other.text).toBe(missing.text);
    expectError(srv, await tenantUsage(bound), 403, 'forbidden');
    expectError(srv, await recompute(bound, `?sid=${acmeSid}`), 403, 'forbidden');
    expectError(srv, await recompute(bound), 403, 'forbidden');
  });

  it('a session-bound token with admin scope (if one can be made) recomputes its own session only', async () => {
    let bound: string;
    try {
      bound = await mint(srv, 'acme', ['admin'], acmeSid);
    } catch {
      return; // refused at minting: nothing to attack
    }
    const missing = await recompute(bound, `?sid=${newId('s')}`);
    const other = await recompute(bound, `?sid=${otherSid}`);
    expect(other.status, other.text).toBe(missing.status);
    expect(other.text).toBe(missing.text);
    const all = await recompute(bound);
    expect(all.status, all.text).not.toBe(200);
    expectError(srv, all, all.status);
  });

  it('read, board, ingest and report tokens cannot recompute; board reads session usage, not the tenant', async () => {
    const before = (await usage(acmeSid, srv.admin, '?by=writer')).json;
    for (const token of [srv.tokens.reader, srv.tokens.board, srv.tokens.ingest, srv.tokens.report]) {
      expectError(srv, await recompute(token), 403, 'forbidden');
      expectError(srv, await recompute(token, `?sid=${acmeSid}`), 403, 'forbidden');
    }
    expect((await usage(acmeSid, srv.tokens.board)).status).toBe(200);
    expectError(srv, await usage(acmeSid, srv.tokens.ingest), 403, 'forbidden');
    expectError(srv, await tenantUsage(srv.tokens.ingest), 403, 'forbidden');
    expect((await usage(acmeSid, srv.admin, '?by=writer')).json).toEqual(before);
  });

  it('no token, a wrong token: 401 on all three', async () => {
    for (const token of [null, 'hsd_not_a_token', `${srv.admin}x`]) {
      expectError(srv, await request(srv, 'GET', `/v1/sessions/${acmeSid}/usage`, { token }), 401);
      expectError(srv, await request(srv, 'GET', '/v1/usage', { token }), 401);
      expectError(srv, await request(srv, 'POST', '/v1/usage/recompute', { token }), 401);
    }
  });
});

describe('bad input: a clear error, never a 500', () => {
  const tenantBad: [string, string][] = [
    ['a word for a date', '?from=yesterday'],
    ['a month', '?from=2026-12'],
    ['month 13', '?from=2026-13-01&to=2026-13-02'],
    ['hour 25', '?from=2026-12-01T25:00:00Z'],
    ['from after to', '?from=2026-12-07&to=2026-12-01'],
    ['over a year', '?from=2024-01-01&to=2025-12-31'],
    ['from alone, years ago (to defaults to today)', '?from=2001-01-01'],
    ['to alone, far ahead (from defaults to this month)', '?to=2999-01-01'],
    ['group_by unknown', '?group_by=turn'],
    ['group_by writer', '?group_by=writer'],
    ['group_by twice', '?group_by=day&group_by=model'],
    ['group_by empty', '?group_by='],
    ['a date of 10,000 digits', `?from=${'9'.repeat(10_000)}`],
    ['SQL in a date', "?from=2026-12-01'%20OR%201=1--"],
  ];
  for (const [what, q] of tenantBad) {
    it(`GET /v1/usage, ${what}: 400 bad_request`, async () => {
      // (the details echo the dates as given: a 10,000-digit one comes back whole, ~10 KB)
      expectError(srv, await tenantUsage(srv.admin, q), 400, 'bad_request');
    });
  }

  const sessionBad: [string, string][] = [
    ['by unknown', '?by=week'],
    ['by empty', '?by='],
    ['a bad date', '?from=12/01/2026'],
    ['from after to', '?from=2026-12-07&to=2026-12-01'],
    ['a huge date', `?to=${'1'.repeat(10_000)}`],
  ];
  for (const [what, q] of sessionBad) {
    it(`GET /v1/sessions/{sid}/usage, ${what}: 400 bad_request`, async () => {
      expectError(srv, await usage(acmeSid, srv.admin, q), 400, 'bad_request');
    });
  }

  it('a malformed session id: 400 (or 404) on the session route and on recompute, never 500', async () => {
    for (const sid of ['not-a-session', 's_', `s_${'A'.repeat(5_000)}`, '..%2F..%2Fetc']) {
      const a = await usage(sid, srv.admin);
      expect([400, 404]).toContain(a.status);
      expectError(srv, a, a.status);
      const r = await recompute(srv.admin, `?sid=${sid}`);
      expect([400, 404]).toContain(r.status);
      expectError(srv, r, r.status);
    }
  });

  it('a range of exactly 366 days is answered; 367 is refused', async () => {
    const ok = await tenantUsage(srv.admin, '?from=2024-01-01&to=2024-12-31');
    expect(ok.status, ok.text).toBe(200);
    expect(ok.json).toMatchObject({ from: '2024-01-01', to: '2024-12-31' });
    expectError(srv, await tenantUsage(srv.admin, '?from=2024-01-01&to=2025-01-01'), 400, 'bad_request');
  });

  it('a date-time with an offset is the UTC day it falls on', async () => {
    const a = await tenantUsage(srv.admin, '?from=2026-12-01T00:30:00%2B01:00&to=2026-12-01T23:30:00-01:00');
    expect(a.status, a.text).toBe(200);
    expect(a.json).toMatchObject({ from: '2026-11-30', to: '2026-12-02' });
  });

  // Was a defect (Date.parse rolled 2026-02-30 over into March): dayOfIso (lib/service/usage/tenant.ts)
  // now checks that the day is one of its month's.
  it('a day that its month does not have (2026-02-30) is a bad date: 400', async () => {
    const a = await tenantUsage(srv.admin, '?from=2026-02-30&to=2026-03-31');
    expectError(srv, a, 400, 'bad_request');
  });

  // Was a defect (a date-time on 0000-01-01 with a positive offset fell in year -1 and was echoed as
  // "-000001-12"): dayOfIso now refuses a UTC day outside 0000-9999.
  it('a date-time that falls before year 0 (0000-01-01T00:00+01:00) is a bad date: 400', async () => {
    const a = await tenantUsage(srv.admin, '?from=0000-01-01T00:00%2B01:00&to=0000-01-01');
    expectError(srv, a, 400, 'bad_request');
  });

  it('…and whatever such edge dates get, never a 500 or a stack trace', async () => {
    for (const q of [
      '?from=0000-01-01T00:00%2B01:00&to=0000-01-01',
      '?from=9999-12-31&to=9999-12-31T23:59:59-23:59',
      '?from=0000-01-01&to=0000-01-01',
    ]) {
      const a = await tenantUsage(srv.admin, q);
      expect(a.status, `${q}: ${a.text}`).toBeLessThan(500);
      if (a.status === 200) continue;
      expectError(srv, a, a.status);
    }
    for (const q of ['?from=0000-01-01T00:00%2B01:00', '?to=9999-12-31T23:59:59-23:59']) {
      const a = await usage(acmeSid, srv.admin, q);
      expect(a.status, `${q}: ${a.text}`).toBeLessThan(500);
      if (a.status !== 200) expectError(srv, a, a.status);
    }
  });

  it('a recompute with a body, a wrong method, or an unknown query parameter does no harm', async () => {
    const before = (await usage(acmeSid, srv.admin, '?by=writer')).json;
    const body = await request(srv, 'POST', `/v1/usage/recompute?sid=${acmeSid}&everything=1`, {
      token: srv.admin,
      json: { sid: otherSid, tenant: 'globex' },
    });
    expect(body.status, body.text).toBe(200);
    expect(body.json).toMatchObject({ sessions: 1, changed_writers: 0 });
    const get = await request(srv, 'GET', '/v1/usage/recompute', { token: srv.admin });
    expect([404, 405]).toContain(get.status);
    expectError(srv, get, get.status);
    expect((await usage(acmeSid, srv.admin, '?by=writer')).json).toEqual(before);
  });
});
