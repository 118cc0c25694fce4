/**
 * `/v1/alerts` and `GET /v1/sessions/{sid}/alerts` (issue 28 items 2, 3 and 5) over real HTTP on loopback,
 * with the real SQLite store and the local sealer: a target added (its secret once), listed (never its
 * secret), sent a test event that the worker delivers signed with that secret, rotated (both secrets sign
 * through the grace), its deliveries listed, removed; a session's alerts for a reader; the refusals (a
 * scope, another tenant's target, a body naming its field, a bad id or limit); the private-address rule
 * with and without the operator's permission; a server without a sealer. The worker is driven with
 * `drainOnce`: no sleeps. Delivery end to end (retries, restarts, every kind) is test/e2e's.
 */
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Webhook } from 'standardwebhooks';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { LocalSecretSealer } from '../../lib/deploy/local-sealer.js';
import { newId } from '../../lib/log/index.js';
import { AlertWorker, DEFAULT_ALERT_CONFIG } from '../../lib/service/alerts/index.js';
import { expectError, request } from '../support/http.js';
import { useServer } from '../support/server.js';
import { startWebhookReceiver, type WebhookReceiver } from '../support/webhook-receiver.js';

const keysDir = mkdtempSync(join(tmpdir(), 'hansard-alerts-http-'));
const sealer = new LocalSecretSealer(keysDir);
const allowed = { ...DEFAULT_ALERT_CONFIG, allowPrivateTargets: true, timeoutMs: 3_000 };

const srv = useServer({
  tenants: ['acme', 'globex'],
  tokens: {
    reader: ['read'],
    board: ['board'],
    ingest: ['ingest'],
    report: ['report'],
    globex: { tenant: 'globex', scopes: ['admin'] },
    globexReader: { tenant: 'globex', scopes: ['read'] },
    // an admin token bound to one session (only the store can mint one): alerts are the tenant's
    boundAdmin: { scopes: ['admin'], session: 's_01KZVVGRNTBMSD610TK2GA9BFS' },
  },
  deps: { alerts: { sealer, config: allowed } },
});

let ok: WebhookReceiver;
let failing: WebhookReceiver;
beforeAll(async () => {
  ok = await startWebhookReceiver('/ok');
  failing = await startWebhookReceiver('/fail');
  failing.mode = 'fail';
});
afterAll(async () => {
  await ok?.close();
  await failing?.close();
});

/** The worker of this suite's server, one pass. */
function drain() {
  const worker = new AlertWorker({
    state: srv.stores.state,
    segments: srv.stores.segments,
    sealer,
    now: () => new Date(),
    config: { ...allowed, boardOrigin: srv.url },
  });
  return worker.drainOnce();
}

const admin = () => srv.tenant.admin;
const add = (json: unknown, token = admin()) => request(srv, 'POST', '/v1/alerts', { token, json });

describe('a target through its life', () => {
  let id: string;
  let secret: string;

  it('is added: 201 with its rule and a whsec_ secret, shown this once', async () => {
    const a = await add({ url: ok.url, label: 'team', agents: ['claude-code'], after_seconds: 0 });
    expect(a.status, a.text).toBe(201);
    expect(a.json).toMatchObject({
      url: ok.url,
      format: 'standard',
      events: [],
      agents: ['claude-code'],
      after_seconds: 0,
      label: 'team',
      previous_secret_until: null,
    });
    expect(a.json.id).toMatch(/^at_[0-9A-HJKMNP-TV-Z]{26}$/);
    expect(a.json.secret).toMatch(/^whsec_[A-Za-z0-9+/]{43}=$/);
    id = a.json.id;
    secret = a.json.secret;
    ok.secrets = [secret];
  });

  it('is listed without its secret, to an admin only', async () => {
    const a = await request(srv, 'GET', '/v1/alerts', { token: admin() });
    expect(a.status, a.text).toBe(200);
    expect(a.json.targets.map((t: { id: string }) => t.id)).toEqual([id]);
    expect(a.json.targets[0]).not.toHaveProperty('secret');
    expect(a.text).not.toContain(secret);
    expect(a.text).not.toContain('whsec_');
  });

  it('gets a test event: 202 with its id, delivered by the worker signed with its secret', async () => {
    const a = await request(srv, 'POST', `/v1/alerts/${id}/test`, { token: admin() });
    expect(a.status, a.text).toBe(202);
    const eventId = a.json.event_id as string;
    expect(eventId).toMatch(/^msg_[0-9A-HJKMNP-TV-Z]{26}$/);
    const before = await request(srv, 'GET', `/v1/alerts/${id}/deliveries`, { token: admin() });
    // queued, not yet fanned out: nothing to show but an empty list
    expect(before.json).toEqual({ deliveries: [] });
    await drain();
    const got = ok.received.filter((r) => r.id === eventId);
    expect(got).toHaveLength(1);
    expect(got[0]!.error).toBeNull();
    expect(got[0]!.payload).toMatchObject({ type: 'alert.test', data: { id: eventId } });
    const after = await request(srv, 'GET', `/v1/alerts/${id}/deliveries?limit=10`, { token: admin() });
    expect(after.status, after.text).toBe(200);
    expect(after.json.deliveries).toHaveLength(1);
    expect(after.json.deliveries[0]).toMatchObject({
      target_id: id,
      event_id: eventId,
      kind: 'alert.test',
      status: 'delivered',
      attempts: 1,
      last_status: 204,
      last_error: null,
      next_at: null,
    });
  });

  it('is rotated: a new secret once; through the grace both sign, with grace 0 the new one alone', async () => {
    const r = await request(srv, 'POST', `/v1/alerts/${id}/rotate`, {
      token: admin(),
      json: { grace_seconds: 3600 },
    });
    expect(r.status, r.text).toBe(200);
    const fresh = r.json.secret as string;
    expect(fresh).toMatch(/^whsec_/);
    expect(fresh).not.toBe(secret);
    const until = Date.parse(r.json.previous_secret_until);
    expect(Math.abs(until - (Date.now() + 3_600_000))).toBeLessThan(60_000);

    const sent = await request(srv, 'POST', `/v1/alerts/${id}/test`, { token: admin() });
    await drain();
    const got = ok.received.find((x) => x.id === sent.json.event_id)!;
    expect(got.signature.split(' ')).toHaveLength(2);
    const headers = {
      'webhook-id': got.id,
      'webhook-timestamp': got.timestamp,
      'webhook-signature': got.signature,
    };
    for (const s of [secret, fresh]) expect(new Webhook(s).verify(got.body, headers)).toBeTruthy();

    // An empty body takes the default grace (a day); grace 0 ends the previous secret at once.
    const byDefault = await request(srv, 'POST', `/v1/alerts/${id}/rotate`, { token: admin() });
    expect(byDefault.status, byDefault.text).toBe(200);
    expect(Date.parse(byDefault.json.previous_secret_until) - Date.now()).toBeGreaterThan(86_000_000);
    const now = await request(srv, 'POST', `/v1/alerts/${id}/rotate`, {
      token: admin(),
      json: { grace_seconds: 0 },
    });
    expect(now.status, now.text).toBe(200);
    expect(now.json.previous_secret_until).toBeNull();
    ok.secrets = [now.json.secret];
    const last = await request(srv, 'POST', `/v1/alerts/${id}/test`, { token: admin() });
    await drain();
    const one = ok.received.find((x) => x.id === last.json.event_id)!;
    expect(one.error).toBeNull();
    expect(one.signature.split(' ')).toHaveLength(1);
  });

  it('refuses a grace outside 0..604800 s, naming grace_seconds, and a field it does not take', async () => {
    for (const json of [{ grace_seconds: 604_801 }, { grace_seconds: -1 }, { grace_seconds: 1.5 }]) {
      const a = await request(srv, 'POST', `/v1/alerts/${id}/rotate`, { token: admin(), json });
      const err = expectError(srv, a, 400, 'invalid_body');
      expect(err.details.issues).toEqual([expect.objectContaining({ path: 'grace_seconds' })]);
    }
    const extra = await request(srv, 'POST', `/v1/alerts/${id}/rotate`, {
      token: admin(),
      json: { grace: 60 },
    });
    expect(JSON.stringify(expectError(srv, extra, 400, 'invalid_body').details)).toContain('grace');
  });

  it('is removed: 204, then 404 on each of its routes, and gone from the list', async () => {
    const del = await request(srv, 'DELETE', `/v1/alerts/${id}`, { token: admin() });
    expect(del.status, del.text).toBe(204);
    expect(del.bytes.length).toBe(0);
    for (const [method, path] of [
      ['DELETE', `/v1/alerts/${id}`],
      ['POST', `/v1/alerts/${id}/rotate`],
      ['POST', `/v1/alerts/${id}/test`],
      ['GET', `/v1/alerts/${id}/deliveries`],
    ] as const) {
      expectError(srv, await request(srv, method, path, { token: admin() }), 404, 'not_found');
    }
    expect((await request(srv, 'GET', '/v1/alerts', { token: admin() })).json).toEqual({ targets: [] });
  });
});

describe("a session's alerts", () => {
  it('lists what a blocked report fired, to a reader, without the failure text an admin sees', async () => {
    const target = await add({ url: failing.url, events: ['session.blocked'] });
    expect(target.status, target.text).toBe(201);
    const sid = newId('s');
    const st = await request(srv, 'POST', `/v1/sessions/${sid}/status`, {
      token: srv.tokens.report,
      json: { state: 'blocked', note: 'waiting for the schema review' },
    });
    expect(st.status, st.text).toBe(201);
    await drain();
    expect(failing.received.some((r) => JSON.parse(r.body).type === 'session.blocked')).toBe(true);

    const forAdmin = await request(srv, 'GET', `/v1/alerts/${target.json.id}/deliveries`, { token: admin() });
    const d = forAdmin.json.deliveries[0];
    expect(d).toMatchObject({
      kind: 'session.blocked',
      sid,
      status: 'pending',
      attempts: 1,
      last_status: 500,
    });
    expect(d.last_error).toContain('500');
    expect(Date.parse(d.next_at)).toBeGreaterThan(Date.now());

    for (const token of [srv.tokens.reader, srv.tokens.board]) {
      const a = await request(srv, 'GET', `/v1/sessions/${sid}/alerts?limit=5`, { token });
      expect(a.status, a.text).toBe(200);
      expect(a.json.alerts).toHaveLength(1);
      expect(a.json.alerts[0]).toMatchObject({ target_id: target.json.id, kind: 'session.blocked', sid });
      expect(a.json.alerts[0]).not.toHaveProperty('last_error');
      expect(a.text).not.toContain(failing.url);
    }
    // a session nobody recorded: 404, as on the other session routes; another tenant's session: the same
    const none = await request(srv, 'GET', `/v1/sessions/${newId('s')}/alerts`, { token: srv.tokens.reader });
    expectError(srv, none, 404, 'not_found');
    const theirs = await request(srv, 'GET', `/v1/sessions/${sid}/alerts`, {
      token: srv.tokens.globexReader,
    });
    expect(theirs.status).toBe(404);
    expect(theirs.json).toEqual(none.json);
    expect((await request(srv, 'DELETE', `/v1/alerts/${target.json.id}`, { token: admin() })).status).toBe(
      204,
    );
  });
});

describe('refusals', () => {
  it('a token without admin: 403 forbidden naming admin, on every target route', async () => {
    const target = await add({ url: ok.url });
    const id = target.json.id as string;
    for (const token of [srv.tokens.reader, srv.tokens.board, srv.tokens.ingest, srv.tokens.report]) {
      for (const [method, path, json] of [
        ['GET', '/v1/alerts', undefined],
        ['POST', '/v1/alerts', { url: ok.url }],
        ['DELETE', `/v1/alerts/${id}`, undefined],
        ['POST', `/v1/alerts/${id}/rotate`, {}],
        ['POST', `/v1/alerts/${id}/test`, undefined],
        ['GET', `/v1/alerts/${id}/deliveries`, undefined],
      ] as const) {
        const err = expectError(srv, await request(srv, method, path, { token, json }), 403, 'forbidden');
        expect(err.details.required).toEqual(['admin']);
      }
    }
    for (const [method, path, json] of [
      ['GET', '/v1/alerts', undefined],
      ['POST', '/v1/alerts', { url: ok.url }],
      ['DELETE', `/v1/alerts/${id}`, undefined],
      ['POST', `/v1/alerts/${id}/test`, undefined],
    ] as const) {
      const a = await request(srv, method, path, { token: srv.tokens.boundAdmin, json });
      expect(expectError(srv, a, 403, 'forbidden').message).toMatch(
        /session-bound token cannot administer alerts/,
      );
    }
    const ingest = await request(srv, 'GET', `/v1/sessions/${newId('s')}/alerts`, {
      token: srv.tokens.ingest,
    });
    expect(expectError(srv, ingest, 403, 'forbidden').details.required).toEqual(['read', 'board']);
    expect((await request(srv, 'GET', '/v1/alerts', { token: admin() })).json.targets).toHaveLength(1);
  });

  it("another tenant's target answers 404, byte for byte as one that does not exist", async () => {
    const { targets } = (await request(srv, 'GET', '/v1/alerts', { token: admin() })).json;
    const theirs = targets[0].id as string;
    const missing = `at_${newId('e').slice(2)}`;
    for (const [method, suffix] of [
      ['POST', '/rotate'],
      ['POST', '/test'],
      ['GET', '/deliveries'],
      ['DELETE', ''],
    ] as const) {
      const a = await request(srv, method, `/v1/alerts/${theirs}${suffix}`, { token: srv.tokens.globex });
      const b = await request(srv, method, `/v1/alerts/${missing}${suffix}`, { token: srv.tokens.globex });
      expectError(srv, a, 404, 'not_found');
      expect(a.text).toBe(b.text);
    }
    expect((await request(srv, 'GET', '/v1/alerts', { token: srv.tokens.globex })).json).toEqual({
      targets: [],
    });
    // still there for its own tenant
    expect((await request(srv, 'GET', '/v1/alerts', { token: admin() })).json.targets).toHaveLength(1);
  });

  it('a body that does not match: 400 invalid_body naming each field', async () => {
    for (const [json, path] of [
      [{ url: ok.url, events: ['session.blockd'] }, 'events.0'],
      [{ url: ok.url, after_seconds: 86_401 }, 'after_seconds'],
      [{ url: ok.url, format: 'teams' }, 'format'],
      [{ url: ok.url, agents: [''] }, 'agents.0'],
      [{ events: ['session.done'] }, 'url'],
      [{ url: 'x'.repeat(2049) }, 'url'],
      // a hold on kinds it never holds: it would do nothing
      [{ url: ok.url, events: ['record.damaged', 'quota.near'], after_seconds: 600 }, 'after_seconds'],
    ] as const) {
      const err = expectError(srv, await add(json), 400, 'invalid_body');
      const issues = err.details.issues as { path: string; message: string }[];
      expect(
        issues.map((i) => i.path),
        JSON.stringify(json).slice(0, 80),
      ).toContain(path);
    }
    const extra = expectError(srv, await add({ url: ok.url, secret: 'whsec_mine' }), 400, 'invalid_body');
    expect(JSON.stringify(extra.details.issues)).toContain('secret');
    expectError(
      srv,
      await request(srv, 'POST', '/v1/alerts', { token: admin(), body: '' }),
      400,
      'empty_body',
    );
    const notJson = await request(srv, 'POST', '/v1/alerts', {
      token: admin(),
      body: '{url:',
      headers: { 'content-type': 'application/json' },
    });
    expectError(srv, notJson, 400, 'invalid_body');
  });

  it('a path id that is not at_ + ULID: 400 invalid_id; a limit outside 1..200: 400 naming limit', async () => {
    for (const bad of ['at_nope', 'tok_01JAAAAAAAAAAAAAAAAAAAAAAA', 'https%3A%2F%2Fexample.com']) {
      const a = await request(srv, 'POST', `/v1/alerts/${bad}/test`, { token: admin() });
      expect(expectError(srv, a, 400, 'invalid_id').details).toEqual({ param: 'id' });
    }
    const id = `at_${newId('e').slice(2)}`;
    for (const limit of ['0', '201', 'ten', '-1']) {
      const a = await request(srv, 'GET', `/v1/alerts/${id}/deliveries?limit=${limit}`, { token: admin() });
      expect(expectError(srv, a, 400, 'bad_request').details).toEqual({ param: 'limit' });
      const s = await request(srv, 'GET', `/v1/sessions/${newId('s')}/alerts?limit=${limit}`, {
        token: srv.tokens.reader,
      });
      expect(expectError(srv, s, 400, 'bad_request').details).toEqual({ param: 'limit' });
    }
  });
});

describe('target addresses, as the operator allows them', () => {
  const strict = useServer({ deps: { alerts: { sealer, config: DEFAULT_ALERT_CONFIG } } });

  it('refuses loopback, link-local and private addresses by default, naming the address and the flag', async () => {
    for (const [url, address] of [
      ['http://127.0.0.1:9/hook', '127.0.0.1'],
      ['http://169.254.169.254/latest/meta-data', '169.254.169.254'],
      ['http://10.1.2.3/hook', '10.1.2.3'],
      ['http://[::1]:9/hook', '::1'],
      ['http://[::ffff:192.168.0.1]/hook', '::ffff:c0a8:1'],
      ['http://localhost:9/hook', null],
    ] as const) {
      const a = await request(strict, 'POST', '/v1/alerts', { token: strict.admin, json: { url } });
      const err = expectError(strict, a, 400, 'invalid_target');
      expect(err.message).toContain('--allow-private-alert-targets');
      if (address) expect(err.details.address).toBe(address);
    }
    expect((await request(strict, 'GET', '/v1/alerts', { token: strict.admin })).json).toEqual({
      targets: [],
    });
  });

  it('refuses what is not an http(s) URL or carries credentials, with or without the permission', async () => {
    for (const s of [strict, srv]) {
      for (const url of ['ftp://93.184.215.14/x', 'not a url', 'https://user:pw@93.184.215.14/x']) {
        const a = await request(s, 'POST', '/v1/alerts', {
          token: s === srv ? admin() : strict.admin,
          json: { url },
        });
        expectError(s, a, 400, 'invalid_target');
      }
    }
  });

  it('accepts a public address by default, and a loopback one where the operator allowed it', async () => {
    const pub = await request(strict, 'POST', '/v1/alerts', {
      token: strict.admin,
      json: { url: 'https://93.184.215.14/hansard' },
    });
    expect(pub.status, pub.text).toBe(201);
    const loop = await add({ url: 'http://127.0.0.1:9/hook' });
    expect(loop.status, loop.text).toBe(201);
  });
});

describe('a server started without a sealer', () => {
  // A 5xx is logged: this one on purpose.
  const bare = useServer({ mayLog: /alerts_unavailable/ });

  it('answers 503 alerts_unavailable to adding a target, and lists none', async () => {
    const a = await request(bare, 'POST', '/v1/alerts', {
      token: bare.admin,
      json: { url: 'https://93.184.215.14/' },
    });
    expect(expectError(bare, a, 503, 'alerts_unavailable').message).toContain('hansard serve');
    expect((await request(bare, 'GET', '/v1/alerts', { token: bare.admin })).json).toEqual({ targets: [] });
  });
});
