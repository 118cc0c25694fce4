/**
 * Attack on the tenancy of alerts (issue 28 items 2 and 5, docs/alerts.md): can one tenant's admin, a
 * session-bound token or a board viewer reach another tenant's alert target, or a session's alerts it may
 * not read, through any `/v1/alerts` route, `GET /v1/sessions/{sid}/alerts`, the board's `/alerts` page,
 * its "Send a test" form or a session page? And does what a reader may see (a session's alerts) leak a
 * target's URL, its failure text or its secret? Over real HTTP on loopback with the real SQLite store, the
 * worker driven by `drainOnce`, a real receiver.
 *
 * What holds is an ordinary test; what gives way is `it.fails` with a comment saying what should happen.
 */
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { LocalSecretSealer } from '../../lib/deploy/local-sealer.js';
import { newId } from '../../lib/log/index.js';
import { AlertWorker, DEFAULT_ALERT_CONFIG } from '../../lib/service/alerts/index.js';
import { expectError, request } from '../support/http.js';
import { useServer } from '../support/server.js';
import { startWebhookReceiver, type WebhookReceiver } from '../support/webhook-receiver.js';

const sealer = new LocalSecretSealer(mkdtempSync(join(tmpdir(), 'hansard-attack-alert-tenancy-')));
const config = { ...DEFAULT_ALERT_CONFIG, allowPrivateTargets: true, timeoutMs: 3_000 };
const SID_A = newId('s');
const SID_B = newId('s');
const GLOBEX_SID = newId('s');

const srv = useServer({
  tenants: ['acme', 'globex'],
  tokens: {
    reader: ['read'],
    board: ['board'],
    boundReaderA: { scopes: ['read'], session: SID_A },
    boundBoardA: { scopes: ['board'], session: SID_A },
    boundAdminA: { scopes: ['admin', 'read', 'board'], session: SID_A },
    boardAdmin: ['admin', 'board'],
    globexAdmin: { tenant: 'globex', scopes: ['admin', 'board'] },
    globexBoard: { tenant: 'globex', scopes: ['board'] },
    globexReader: { tenant: 'globex', scopes: ['read'] },
    globexReport: { tenant: 'globex', scopes: ['report'] },
  },
  deps: { alerts: { sealer, config } },
});

let rx: WebhookReceiver;
/** a receiver that fails, so deliveries keep a `last_error` a reader must not see */
let down: WebhookReceiver;
let acmeTarget = '';
let acmeSecret = '';
let downTarget = '';
beforeAll(async () => {
  rx = await startWebhookReceiver('/acme-secret-path-9f3a');
  down = await startWebhookReceiver('/down-secret-path-77c1');
  down.mode = 'fail';
});
afterAll(async () => {
  await rx?.close();
  await down?.close();
});

const drain = () =>
  new AlertWorker({
    state: srv.stores.state,
    segments: srv.stores.segments,
    sealer,
    now: () => new Date(),
    config: { ...config, boardOrigin: srv.url },
  }).drainOnce();

describe('setup', () => {
  it('acme has two targets and two sessions that fired; globex has a session of its own', async () => {
    const a = await request(srv, 'POST', '/v1/alerts', {
      token: srv.admin,
      json: { url: rx.url, label: 'acme-ok' },
    });
    expect(a.status, a.text).toBe(201);
    acmeTarget = a.json.id;
    acmeSecret = a.json.secret;
    rx.secrets = [acmeSecret];
    const b = await request(srv, 'POST', '/v1/alerts', {
      token: srv.admin,
      json: { url: down.url, label: 'acme-down' },
    });
    expect(b.status, b.text).toBe(201);
    downTarget = b.json.id;
    for (const sid of [SID_A, SID_B]) {
      const st = await request(srv, 'POST', `/v1/sessions/${sid}/status`, {
        token: srv.admin,
        json: { state: 'blocked', note: `acme ${sid}` },
      });
      expect(st.status, st.text).toBe(201);
    }
    const g = await request(srv, 'POST', `/v1/sessions/${GLOBEX_SID}/status`, {
      token: srv.tokens.globexReport,
      json: { state: 'blocked', note: 'globex' },
    });
    expect(g.status, g.text).toBe(201);
    await drain();
    expect(rx.unique().size).toBe(2);
    expect(down.received.length).toBe(2);
  });
});

describe("another tenant's admin", () => {
  it("gets 404 on every /v1/alerts/{id} route of acme's target, as for an id that does not exist", async () => {
    const missing = `at_${newId('e').slice(2)}`;
    for (const [method, suffix, json] of [
      ['GET', '/deliveries', undefined],
      ['GET', '/deliveries?limit=200', undefined],
      ['POST', '/test', undefined],
      ['POST', '/rotate', { grace_seconds: 0 }],
      ['DELETE', '', undefined],
    ] as const) {
      const theirs = await request(srv, method, `/v1/alerts/${acmeTarget}${suffix}`, {
        token: srv.tokens.globexAdmin,
        json,
      });
      const none = await request(srv, method, `/v1/alerts/${missing}${suffix}`, {
        token: srv.tokens.globexAdmin,
        json,
      });
      expectError(srv, theirs, 404, 'not_found');
      expect(theirs.text).toBe(none.text);
    }
    const list = await request(srv, 'GET', '/v1/alerts', { token: srv.tokens.globexAdmin });
    expect(list.json).toEqual({ targets: [] });
    // acme's target is whole: still listed, its secret still the one that signs
    const mine = await request(srv, 'GET', '/v1/alerts', { token: srv.admin });
    expect(mine.json.targets.map((t: { id: string }) => t.id)).toContain(acmeTarget);
    expect(
      mine.json.targets.find((t: { id: string }) => t.id === acmeTarget).previous_secret_until,
    ).toBeNull();
  });

  it("the board's /alerts page shows none of acme's targets; its test form on acme's id sends nothing", async () => {
    const page = await request(srv, 'GET', '/alerts', { token: srv.tokens.globexAdmin });
    expect(page.status, page.text.slice(0, 300)).toBe(200);
    expect(page.text).not.toContain(acmeTarget);
    expect(page.text).not.toContain(downTarget);
    expect(page.text).not.toContain(new URL(rx.url).port);
    expect(page.text).not.toContain('acme-ok');

    const before = rx.received.length;
    const post = await request(srv, 'POST', `/alerts/${acmeTarget}/test`, {
      token: srv.tokens.globexAdmin,
      body: 'csrf=x',
      headers: { 'content-type': 'application/x-www-form-urlencoded' },
    });
    // the target is not globex's: answered as one removed meanwhile
    expect(post.status).toBe(303);
    expect(post.headers.get('location')).toBe('/alerts?gone=1');
    await drain();
    expect(rx.received.length).toBe(before);
    const d = await request(srv, 'GET', `/v1/alerts/${acmeTarget}/deliveries`, { token: srv.admin });
    expect(d.json.deliveries.map((x: { kind: string }) => x.kind)).not.toContain('alert.test');
  });

  it("reading acme's session alerts: 404 to globex's admin, reader and board, as a session that is not there", async () => {
    const none = await request(srv, 'GET', `/v1/sessions/${newId('s')}/alerts`, {
      token: srv.tokens.globexReader,
    });
    for (const token of [srv.tokens.globexAdmin, srv.tokens.globexReader, srv.tokens.globexBoard]) {
      const a = await request(srv, 'GET', `/v1/sessions/${SID_A}/alerts`, { token });
      expectError(srv, a, 404, 'not_found');
      expect(a.text).toBe(none.text);
    }
    // and acme's board token on globex's session: the same
    const b = await request(srv, 'GET', `/v1/sessions/${GLOBEX_SID}/alerts`, { token: srv.tokens.board });
    expectError(srv, b, 404, 'not_found');
  });

  it("globex's own session alerts list none of acme's targets (no target of acme matched globex's event)", async () => {
    const a = await request(srv, 'GET', `/v1/sessions/${GLOBEX_SID}/alerts`, {
      token: srv.tokens.globexReader,
    });
    expect(a.status, a.text).toBe(200);
    expect(a.json.alerts).toEqual([]);
  });
});

describe('session-bound tokens', () => {
  it('a session-bound admin is refused on every /v1/alerts route, the rotation and deliveries included', async () => {
    for (const [method, path, json] of [
      ['GET', '/v1/alerts', undefined],
      ['POST', '/v1/alerts', { url: rx.url }],
      ['GET', `/v1/alerts/${acmeTarget}/deliveries`, undefined],
      ['POST', `/v1/alerts/${acmeTarget}/rotate`, { grace_seconds: 0 }],
      ['POST', `/v1/alerts/${acmeTarget}/test`, undefined],
      ['DELETE', `/v1/alerts/${acmeTarget}`, undefined],
    ] as const) {
      const a = await request(srv, method, path, { token: srv.tokens.boundAdminA, json });
      expectError(srv, a, 403, 'forbidden');
    }
    // and on the board: the 403 page, and the test form sends nothing
    const page = await request(srv, 'GET', '/alerts', { token: srv.tokens.boundAdminA });
    expect(page.status).toBe(403);
    expect(page.text).not.toContain(acmeTarget);
    const before = rx.received.length;
    const post = await request(srv, 'POST', `/alerts/${acmeTarget}/test`, {
      token: srv.tokens.boundAdminA,
      body: 'csrf=x',
      headers: { 'content-type': 'application/x-www-form-urlencoded' },
    });
    expect(post.status).toBe(403);
    await drain();
    expect(rx.received.length).toBe(before);
  });

  it("a token bound to session A reads A's alerts and not B's", async () => {
    for (const token of [srv.tokens.boundReaderA, srv.tokens.boundBoardA]) {
      const mine = await request(srv, 'GET', `/v1/sessions/${SID_A}/alerts`, { token });
      expect(mine.status, mine.text).toBe(200);
      expect(mine.json.alerts.length).toBe(2);
      const other = await request(srv, 'GET', `/v1/sessions/${SID_B}/alerts`, { token });
      expect([403, 404]).toContain(other.status);
      expect(other.json.alerts).toBeUndefined();
    }
  });

  it('a board viewer (no admin) gets the 403 page on /alerts and cannot send a test', async () => {
    const page = await request(srv, 'GET', '/alerts', { token: srv.tokens.board });
    expect(page.status).toBe(403);
    expect(page.text).not.toContain(acmeTarget);
    const before = rx.received.length;
    const post = await request(srv, 'POST', `/alerts/${acmeTarget}/test`, {
      token: srv.tokens.board,
      body: 'csrf=x',
      headers: { 'content-type': 'application/x-www-form-urlencoded' },
    });
    expect(post.status).toBe(403);
    await drain();
    expect(rx.received.length).toBe(before);
  });
});

describe('what a reader sees of a session’s alerts', () => {
  it('kind, status and times: never a URL, a failure text or a secret (API and the session page)', async () => {
    const port = new URL(rx.url).port;
    const downPort = new URL(down.url).port;
    for (const token of [srv.tokens.reader, srv.tokens.board]) {
      const a = await request(srv, 'GET', `/v1/sessions/${SID_A}/alerts?limit=200`, { token });
      expect(a.status, a.text).toBe(200);
      expect(a.json.alerts).toHaveLength(2);
      const failed = a.json.alerts.find((x: { target_id: string }) => x.target_id === downTarget);
      expect(failed).toMatchObject({ status: 'pending', last_status: 500 });
      for (const needle of ['secret-path', port, downPort, 'whsec_', 'receiver down', 'http://']) {
        expect(a.text, needle).not.toContain(needle);
      }
      for (const x of a.json.alerts) expect(x).not.toHaveProperty('last_error');
    }
    const page = await request(srv, 'GET', `/sessions/${SID_A}`, { token: srv.tokens.board });
    expect(page.status).toBe(200);
    for (const needle of ['secret-path', `:${port}`, `:${downPort}`, 'whsec_', 'receiver down', acmeSecret]) {
      expect(page.text, needle).not.toContain(needle);
    }
  });

  it("the admin's board page masks each target's URL after its host (a Slack URL's path is its secret)", async () => {
    const page = await request(srv, 'GET', '/alerts', { token: srv.tokens.boardAdmin });
    expect(page.status).toBe(200);
    expect(page.text).toContain(acmeTarget);
    expect(page.text).not.toContain('secret-path');
    expect(page.text).not.toContain(acmeSecret);
    expect(page.text).not.toContain('whsec_');
  });
});
