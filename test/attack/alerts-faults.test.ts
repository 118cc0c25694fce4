/**
 * Attack on alert delivery by hostile targets and a damaged store (issue 28 item 4, docs/alerts.md
 * "Delivery"): a target that answers one byte at a time, one that sends an endless body, one that never
 * answers, one that answers 200 just inside the 10 s limit, fifty targets with one hanging (do the others
 * wait? does ingest slow down?), a malformed outbox or delivery row and a target whose sealed secret was
 * altered in the SQLite file (does the worker keep delivering the other targets?). Real HTTP on loopback,
 * raw `net` servers for the hostile targets, the real SQLite store written directly (better-sqlite3) for
 * the damage, and the real server of `hansard serve` for the timing of ingest.
 *
 * What holds is an ordinary test; what gives way is `it.fails` with a comment saying what should happen.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { createServer, type Server, type Socket } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import Database from 'better-sqlite3';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { LocalSecretSealer } from '../../lib/deploy/local-sealer.js';
import { startServer as startServe } from '../../lib/deploy/local-serve.js';
import { newId } from '../../lib/log/index.js';
import { AlertWorker, DEFAULT_ALERT_CONFIG } from '../../lib/service/alerts/index.js';
import { postJson } from '../../lib/service/alerts/send.js';
import { request } from '../support/http.js';
import { useServer } from '../support/server.js';
import { startWebhookReceiver, type WebhookReceiver } from '../support/webhook-receiver.js';

/** A raw TCP "target" that does `behave` with every connection (after reading the request's first bytes). */
async function rawTarget(behave: (s: Socket) => void): Promise<{ url: string; close(): Promise<void> }> {
  const sockets = new Set<Socket>();
  const server: Server = createServer((s) => {
    sockets.add(s);
    s.on('error', () => {});
    s.once('data', () => behave(s));
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  const port = (server.address() as { port: number }).port;
  return {
    url: `http://127.0.0.1:${port}/t`,
    close: () =>
      new Promise((r) => {
        for (const s of sockets) s.destroy();
        server.close(() => r());
      }),
  };
}

const opts = (timeoutMs: number) => ({ timeoutMs, allowPrivate: true });

/** A target that answers `status` with a 2 GB body, streamed as fast as the socket takes it. */
async function twoGigabytes(status: string) {
  let sent = 0;
  const chunk = Buffer.alloc(64 * 1024, 'A');
  const t = await rawTarget((s) => {
    s.write(`HTTP/1.1 ${status}\r\ncontent-length: 2147483648\r\n\r\n`);
    const pump = () => {
      while (!s.destroyed && sent < 2_147_483_648) {
        sent += chunk.length;
        if (!s.write(chunk)) return void s.once('drain', pump);
      }
    };
    pump();
  });
  return { t, sent: () => sent };
}

describe('one attempt against hostile answers (postJson, the time limit 1.5 s)', () => {
  it('a status line dribbled one byte every 100 ms: failed at the time limit, not later', async () => {
    const t = await rawTarget((s) => {
      const line = 'HTTP/1.1 200 OK\r\ncontent-length: 0\r\n\r\n';
      let i = 0;
      const tick = setInterval(() => {
        if (i >= line.length || s.destroyed) return clearInterval(tick);
        s.write(line[i++]!);
      }, 100);
      s.on('close', () => clearInterval(tick));
    });
    try {
      const started = Date.now();
      const r = await postJson(new URL(t.url), {}, '{}', opts(1_500));
      const took = Date.now() - started;
      expect(r).toMatchObject({ status: null });
      expect(r.error).toMatch(/no answer within 1500 ms/);
      expect(took).toBeLessThan(2_500);
    } finally {
      await t.close();
    }
  });

  it('a 200 whose body dribbles and never ends: the attempt ends at the time limit', async () => {
    const t = await rawTarget((s) => {
      s.write('HTTP/1.1 200 OK\r\ncontent-length: 1000000\r\n\r\n');
      const tick = setInterval(() => (s.destroyed ? clearInterval(tick) : s.write('x')), 100);
      s.on('close', () => clearInterval(tick));
    });
    try {
      const started = Date.now();
      const r = await postJson(new URL(t.url), {}, '{}', opts(1_500));
      expect(Date.now() - started).toBeLessThan(2_500);
      // An answer not finished within the limit is a failed attempt (tried again: at least once).
      expect(r).toMatchObject({ status: null });
      expect(r.error).toMatch(/no answer within 1500 ms/);
    } finally {
      await t.close();
    }
  });

  it('a 500 with a 2 GB body (streamed as fast as the socket takes it): read up to 1 KiB, failed at once', async () => {
    const { t, sent } = await twoGigabytes('500 Internal Server Error');
    try {
      const heap = process.memoryUsage().rss;
      const started = Date.now();
      const r = await postJson(new URL(t.url), {}, '{}', opts(5_000));
      expect(Date.now() - started).toBeLessThan(2_000);
      expect(r.status).toBe(500);
      expect(r.error!.length).toBeLessThan(300);
      expect(sent()).toBeLessThan(256 * 1024 * 1024); // the client hung up long before 2 GB
      expect(process.memoryUsage().rss - heap).toBeLessThan(200 * 1024 * 1024);
    } finally {
      await t.close();
    }
  });

  it('a 200 with a 2 GB body: delivered, and the body not read', async () => {
    const { t, sent } = await twoGigabytes('200 OK');
    try {
      const started = Date.now();
      const r = await postJson(new URL(t.url), {}, '{}', opts(5_000));
      expect(Date.now() - started).toBeLessThan(2_000);
      expect(r).toEqual({ status: 200, error: null });
      expect(sent()).toBeLessThan(256 * 1024 * 1024);
    } finally {
      await t.close();
    }
  });

  it('a target that accepts and never says anything: failed at the limit', async () => {
    const t = await rawTarget(() => {});
    try {
      const started = Date.now();
      const r = await postJson(new URL(t.url), {}, '{}', opts(1_500));
      expect(r.error).toMatch(/no answer within/);
      expect(Date.now() - started).toBeLessThan(2_500);
    } finally {
      await t.close();
    }
  });

  it('a 204 after 9.9 s under the default 10 s limit: delivered', async () => {
    const t = await rawTarget((s) => {
      setTimeout(() => s.destroyed || s.end('HTTP/1.1 204 No Content\r\n\r\n'), 9_900);
    });
    try {
      const r = await postJson(new URL(t.url), {}, '{}', opts(DEFAULT_ALERT_CONFIG.timeoutMs));
      expect(r).toEqual({ status: 204, error: null });
    } finally {
      await t.close();
    }
  }, 15_000);
});

describe('fifty targets, one hanging, on the real server', () => {
  const root = mkdtempSync(join(tmpdir(), 'hansard-attack-alert-faults-'));
  const admin = `hns_${'Fau1tsTs'.repeat(5)}Ab3`;
  const logs: string[] = [];
  let running: Awaited<ReturnType<typeof startServe>> | null = null;
  let ok: WebhookReceiver;
  let hang: WebhookReceiver;

  beforeAll(async () => {
    ok = await startWebhookReceiver('/ok');
    hang = await startWebhookReceiver('/hang');
    hang.mode = 'hang';
    running = await startServe({
      port: 0,
      host: '127.0.0.1',
      data: join(root, 'data'),
      bootstrapToken: admin,
      print: () => {},
      log: (l) => logs.push(l),
      rateLimit: 0,
      digester: false,
      allowPrivateAlertTargets: true,
      alertPollMs: 100,
    });
  });
  afterAll(async () => {
    await hang?.close(); // the hanging attempt ends with its socket
    await running?.close(0);
    await ok?.close();
    rmSync(root, { recursive: true, force: true });
  });

  /** Median ms of `n` status reports (each a new session, so each fires). */
  async function reportTimes(n: number): Promise<number> {
    const times: number[] = [];
    for (let i = 0; i < n; i++) {
      const sid = newId('s');
      const started = performance.now();
      const a = await request(running!, 'POST', `/v1/sessions/${sid}/status`, {
        token: admin,
        json: { state: 'blocked', note: `latency ${i}` },
      });
      times.push(performance.now() - started);
      expect(a.status).toBe(201);
    }
    times.sort((a, b) => a - b);
    return times[Math.floor(n / 2)]!;
  }

  it('the 49 others get the event within 8 s while one hangs (10 s limit); ingest is not slowed', async () => {
    const idle = await reportTimes(20); // no targets yet: the worker has nothing to do
    await new Promise((r) => setTimeout(r, 500)); // their events leave the outbox before any target exists
    const secrets: string[] = [];
    const hangId = await request(running!, 'POST', '/v1/alerts', {
      token: admin,
      json: { url: hang.url, events: ['session.blocked'] },
    });
    expect(hangId.status, hangId.text).toBe(201);
    for (let i = 0; i < 49; i++) {
      const a = await request(running!, 'POST', '/v1/alerts', {
        token: admin,
        json: { url: `${ok.url}?n=${i}`, events: ['session.blocked'] },
      });
      expect(a.status, a.text).toBe(201);
      secrets.push(a.json.secret);
    }
    ok.secrets = secrets;
    // a 51st: refused, the tenant's limit
    const over = await request(running!, 'POST', '/v1/alerts', { token: admin, json: { url: ok.url } });
    expect(over.status).toBe(409);

    const sid = newId('s');
    const started = Date.now();
    expect(
      (
        await request(running!, 'POST', `/v1/sessions/${sid}/status`, {
          token: admin,
          json: { state: 'blocked' },
        })
      ).status,
    ).toBe(201);
    while (ok.received.filter((r) => r.body.includes(sid)).length < 49 && Date.now() - started < 8_000) {
      await new Promise((r) => setTimeout(r, 50));
    }
    expect(ok.received.filter((r) => r.body.includes(sid)).length).toBe(49);
    // under the hanging attempt's 10 s limit (with room for a loaded machine): nobody waited for it
    expect(Date.now() - started).toBeLessThan(8_000);
    // the hanging target holds an attempt (its own deliveries wait behind it, one at a time: no other's)
    expect(hang.received.length).toBeGreaterThan(0);
    expect(hang.received.every((r) => r.answered === null)).toBe(true);

    // each report now fires 50 deliveries, one target hanging: the report's own time stays that of ingest
    const busy = await reportTimes(20);
    console.log(
      `status report median: ${idle.toFixed(1)} ms idle, ${busy.toFixed(1)} ms with 50 targets, one hanging`,
    );
    expect(busy).toBeLessThan(Math.max(idle * 4, idle + 50));
    expect(logs).toEqual([]);
  }, 40_000);
});

describe('a damaged store: the worker keeps delivering the other targets', () => {
  const sealer = new LocalSecretSealer(mkdtempSync(join(tmpdir(), 'hansard-attack-alert-damage-')));
  const config = { ...DEFAULT_ALERT_CONFIG, allowPrivateTargets: true, timeoutMs: 3_000 };
  const srv = useServer({ tenants: ['acme', 'globex'], deps: { alerts: { sealer, config } } });
  let rx: WebhookReceiver;
  let other: WebhookReceiver;
  let good = '';
  let bad = '';
  beforeAll(async () => {
    rx = await startWebhookReceiver('/good');
    other = await startWebhookReceiver('/bad');
  });
  afterAll(async () => {
    await rx?.close();
    await other?.close();
  });
  const drain = () =>
    new AlertWorker({
      state: srv.stores.state,
      segments: srv.stores.segments,
      sealer,
      now: () => new Date(),
      config,
    }).drainOnce();
  const sql = (f: (db: Database.Database) => void) => {
    const db = new Database(join(srv.dataDir, 'state.sqlite'));
    try {
      db.pragma('busy_timeout = 2000');
      f(db);
    } finally {
      db.close();
    }
  };
  const sendTest = async (id: string) =>
    (await request(srv, 'POST', `/v1/alerts/${id}/test`, { token: srv.admin })).json.event_id as string;

  it('a target whose sealed secret was altered in the file: its delivery fails, the other target is delivered', async () => {
    const a = await request(srv, 'POST', '/v1/alerts', { token: srv.admin, json: { url: rx.url } });
    const b = await request(srv, 'POST', '/v1/alerts', { token: srv.admin, json: { url: other.url } });
    good = a.json.id;
    bad = b.json.id;
    rx.secrets = [a.json.secret];
    other.secrets = [b.json.secret];
    sql((db) => {
      const row = db.prepare('SELECT target FROM alert_targets WHERE id = ?').get(bad) as { target: string };
      const t = JSON.parse(row.target);
      const sealed = t.secrets[0].sealed as string;
      // change one character of the ciphertext in the middle: the last one may carry only base64's unused
      // bits (A and B then decode to the same bytes, and the secret still opens)
      const at = sealed.lastIndexOf('.') + 5;
      const other = sealed[at] === 'A' ? 'g' : 'A';
      t.secrets[0].sealed = `${sealed.slice(0, at)}${other}${sealed.slice(at + 1)}`;
      db.prepare('UPDATE alert_targets SET target = ? WHERE id = ?').run(JSON.stringify(t), bad);
    });
    const eg = await sendTest(good);
    const eb = await sendTest(bad);
    await drain();
    expect(rx.received.some((r) => r.id === eg && r.error === null)).toBe(true);
    expect(other.received.some((r) => r.id === eb)).toBe(false);
    const d = await request(srv, 'GET', `/v1/alerts/${bad}/deliveries`, { token: srv.admin });
    expect(d.json.deliveries[0]).toMatchObject({ status: 'pending', attempts: 1 });
    expect(d.json.deliveries[0].last_error).toMatch(/does not open/);
    expect(srv.logged).toEqual([]);
    // the target is removed, so later tests start from the good one alone
    await request(srv, 'DELETE', `/v1/alerts/${bad}`, { token: srv.admin });
  });

  // Fixed (was FAULT): the store's listings now leave out a row that does not parse
  // (lib/store/sqlite/alerts.ts `parsed`). The report as found:
  // one alert_targets row that does not parse stops every delivery of every tenant. fanOutDue reads
  // the tenant's targets with listAlertTargets, whose JSON.parse (lib/store/sqlite/alerts.ts:111-116)
  // throws out of the whole pass (lib/service/alerts/worker.ts:117-129, fanOutDue): drainOnce rejects with
  // "SyntaxError: Expected property name…", and globex's test event, which has nothing to do with acme's
  // broken row, is not sent either (nor is acme's good target). Fix: parse target rows one at a time and
  // leave out (and log once) one that does not parse; catch per event in fanOutDue and per tenant, so one
  // damaged row holds back at most its own target.
  it('a target row that is not JSON: the other targets (and other tenants) are still delivered', async () => {
    const g = await request(srv, 'POST', '/v1/alerts', {
      token: srv.tenants.globex.admin,
      json: { url: other.url },
    });
    other.secrets = [g.json.secret];
    const c = await request(srv, 'POST', '/v1/alerts', { token: srv.admin, json: { url: other.url } });
    sql((db) => db.prepare("UPDATE alert_targets SET target = '{broken' WHERE id = ?").run(c.json.id));
    const eg = await sendTest(good);
    const eglobex = (
      await request(srv, 'POST', `/v1/alerts/${g.json.id}/test`, { token: srv.tenants.globex.admin })
    ).json.event_id;
    let thrown: unknown = null;
    await drain().catch((err) => {
      thrown = err;
    });
    try {
      expect(thrown).toBeNull();
      expect(other.received.some((r) => r.id === eglobex)).toBe(true);
      expect(rx.received.some((r) => r.id === eg)).toBe(true);
    } finally {
      sql((db) => db.prepare('DELETE FROM alert_targets WHERE id = ?').run(c.json.id));
      await drain().catch(() => {});
      await request(srv, 'DELETE', `/v1/alerts/${g.json.id}`, { token: srv.tenants.globex.admin });
    }
  });

  // Fixed (was FAULT): listDueEvents leaves out a row that does not parse, and the worker goes on per event.
  // The report as found:
  // one outbox row whose event is not JSON stops every delivery of every tenant, for good.
  // SqliteAlerts.listDueEvents maps every due row through toEvent's JSON.parse
  // (lib/store/sqlite/alerts.ts:129-132 and toEvent at :269-271), so the parse error escapes AlertWorker.fanOutDue
  // (lib/service/alerts/worker.ts:117-129) before listDueDeliveries is even asked: drainOnce rejects, and in
  // `start` each tick logs "alerts: Unexpected token…" and sends nothing, every second, until someone
  // deletes the row by hand. (The same holds for a due delivery row: toDelivery in listDueDeliveries.)
  // Fix: parse rows one at a time and quarantine a row that does not parse (log it once with its
  // (tenant, id), move it aside or mark it dead), and let fanOutDue go on with the next event; in the
  // worker, catch a failing fanOutOne per event rather than per pass.
  it('an outbox row that is not JSON: the other events are still delivered', async () => {
    sql((db) =>
      db
        .prepare('INSERT INTO alert_outbox (tenant, id, due_at, event) VALUES (?, ?, ?, ?)')
        .run('acme', 'msg_BROKENBROKENBROKENBROKEN00', '2000-01-01T00:00:00.000Z', '{not json'),
    );
    try {
      const eg = await sendTest(good);
      const err = await drain().catch((e: unknown) => e);
      expect(
        rx.received.some((r) => r.id === eg),
        String(err),
      ).toBe(true);
    } finally {
      sql((db) => db.prepare("DELETE FROM alert_outbox WHERE id = 'msg_BROKENBROKENBROKENBROKEN00'").run());
      await drain();
    }
  });

  // Fixed (was FAULT): listDueDeliveries leaves out a row that does not parse (it still holds its queue).
  // The report as found:
  // the same for a delivery row whose JSON is broken: listDueDeliveries (toDelivery,
  // lib/store/sqlite/alerts.ts:184-187, :273-275) throws for the whole batch, so no target of any tenant
  // gets anything while the row is due. Fix as above: skip (and dead-letter) a row that does not parse.
  it('a pending delivery row that is not JSON: the other deliveries are still sent', async () => {
    const broken = await sendTest(good);
    await new AlertWorker({
      state: new Proxy(srv.stores.state, {
        get(t, p, r) {
          // fan out only: this pass sends nothing, so the delivery stays pending
          if (p === 'listDueDeliveries') return async () => [];
          const v = Reflect.get(t, p, r);
          return typeof v === 'function' ? v.bind(t) : v;
        },
      }),
      segments: srv.stores.segments,
      sealer,
      now: () => new Date(),
      config,
    }).drainOnce();
    sql((db) =>
      db.prepare("UPDATE alert_deliveries SET delivery = '{broken' WHERE event_id = ?").run(broken),
    );
    try {
      // another session's delivery to the same target, and the same target's own test
      const sid = newId('s');
      await request(srv, 'POST', `/v1/sessions/${sid}/status`, {
        token: srv.admin,
        json: { state: 'blocked' },
      });
      const err = await drain().catch((e: unknown) => e);
      expect(
        rx.received.some((r) => r.body.includes(sid)),
        String(err),
      ).toBe(true);
    } finally {
      sql((db) => db.prepare('DELETE FROM alert_deliveries WHERE event_id = ?').run(broken));
      await drain();
    }
  });
});

describe("a hanging target's backlog and another target's delivery (the real server's worker)", () => {
  const root = mkdtempSync(join(tmpdir(), 'hansard-attack-alert-starve-'));
  const admin = `hns_${'Starv3Ts'.repeat(5)}Ab3`;
  let running: Awaited<ReturnType<typeof startServe>> | null = null;
  let ok: WebhookReceiver;
  let hang: WebhookReceiver;
  beforeAll(async () => {
    ok = await startWebhookReceiver('/ok');
    hang = await startWebhookReceiver('/hang');
    hang.mode = 'hang';
    running = await startServe({
      port: 0,
      host: '127.0.0.1',
      data: join(root, 'data'),
      bootstrapToken: admin,
      print: () => {},
      log: () => {},
      rateLimit: 0,
      digester: false,
      allowPrivateAlertTargets: true,
      alertPollMs: 100,
    });
  });
  afterAll(async () => {
    await hang?.close();
    await running?.close(0);
    await ok?.close();
    rmSync(root, { recursive: true, force: true });
  });

  /** `n` sessions report blocked (the hanging target's rule), each its own queue. */
  async function blockSessions(n: number): Promise<void> {
    for (let i = 0; i < n; i++) {
      const a = await request(running!, 'POST', `/v1/sessions/${newId('s')}/status`, {
        token: admin,
        json: { state: 'blocked' },
      });
      expect(a.status).toBe(201);
    }
    await hang.waitFor(1, 5_000); // the first one hangs
    await new Promise((r) => setTimeout(r, 500)); // the rest fanned out
  }

  /**
   * ms until a `session.done` reaches the other target (waits 9 s at most; past that, 9,000 and more): under
   * 8 s is under one hanging attempt's 10 s limit, so the event did not wait for the hanging target.
   */
  async function doneArrivesIn(): Promise<number> {
    const sid = newId('s');
    const started = Date.now();
    const a = await request(running!, 'POST', `/v1/sessions/${sid}/status`, {
      token: admin,
      json: { state: 'done' },
    });
    expect(a.status).toBe(201);
    while (!ok.received.some((r) => r.body.includes(sid)) && Date.now() - started < 9_000) {
      await new Promise((r) => setTimeout(r, 50));
    }
    const took = Date.now() - started;
    return ok.received.some((r) => r.body.includes(sid)) ? took : 9_000 + took;
  }

  it('control: with 50 sessions due to the hanging target, the other target gets its event at once', async () => {
    const h = await request(running!, 'POST', '/v1/alerts', {
      token: admin,
      json: { url: hang.url, events: ['session.blocked'] },
    });
    const o = await request(running!, 'POST', '/v1/alerts', {
      token: admin,
      json: { url: ok.url, events: ['session.done'] },
    });
    expect(h.status).toBe(201);
    expect(o.status).toBe(201);
    ok.secrets = [o.json.secret];
    await blockSessions(50);
    expect(await doneArrivesIn()).toBeLessThan(8_000);
  }, 30_000);

  // Fixed (was FAULT): the worker passes `perTarget` and `exclude` (its busy targets) to listDueDeliveries,
  // which both adapters apply in the listing. The report as found:
  // a hanging (or slow) target with more than 100 sessions' deliveries due starves every other
  // target of the deployment, of every tenant. listDueDeliveries answers the 100 due heads with the
  // earliest next_at (lib/store/sqlite/alerts.ts:59-66, ALERT_QUERIES.dueDeliveries; BATCH = 100 at
  // lib/service/alerts/worker.ts:35), and a target whose loop is busy is only skipped (worker.ts:86,
  // `if (this.busy.has(key)) continue`) after its rows took the batch's places. Here 120 sessions
  // blocked (the hanging target's rule) fill the batch (the control's 50 do not); a `session.done` for
  // another target, due later, is never listed: it waits until the hanging target has worked through its
  // backlog at 10 s a delivery (~20 minutes). On a shared deployment one tenant's admin (a target that
  // never answers) and its `report` tokens (100+ sessions blocked) thus silence every tenant's alerts.
  // docs/alerts.md promises "a slow or failing target delays no other". The AWS function's drainOnce has
  // the same listing. Fix: list due heads per target (a bounded number per target: a window function, or
  // one query per target with due work), or leave out targets whose loop is busy, so that one target's
  // backlog cannot occupy the batch.
  it("another target's event arrives within 8 s while a hanging target has 120 sessions due", async () => {
    await blockSessions(70); // 50 + 70: more than a batch
    expect(await doneArrivesIn()).toBeLessThan(8_000);
  }, 30_000);
});

describe("a target's hostile answer text, shown to the admin", () => {
  const sealer = new LocalSecretSealer(mkdtempSync(join(tmpdir(), 'hansard-attack-alert-answer-')));
  const config = { ...DEFAULT_ALERT_CONFIG, allowPrivateTargets: true, timeoutMs: 3_000 };
  const srv = useServer({ tokens: { boardAdmin: ['admin', 'board'] }, deps: { alerts: { sealer, config } } });

  it('a 500 whose body holds terminal escapes and HTML: the board shows it escaped, inert', async () => {
    const evil = '\x1b]0;pwned\x07\x1b[2J<script>alert(1)</script><img src=x onerror=alert(2)>\u202Egnp.exe';
    const t = await rawTarget((s) => {
      const body = Buffer.from(evil);
      s.end(`HTTP/1.1 500 Oops\r\ncontent-length: ${body.length}\r\nconnection: close\r\n\r\n${evil}`);
    });
    try {
      const a = await request(srv, 'POST', '/v1/alerts', { token: srv.admin, json: { url: t.url } });
      expect(a.status).toBe(201);
      await request(srv, 'POST', `/v1/alerts/${a.json.id}/test`, { token: srv.admin });
      await new AlertWorker({
        state: srv.stores.state,
        segments: srv.stores.segments,
        sealer,
        now: () => new Date(),
        config,
      }).drainOnce();
      const d = await request(srv, 'GET', `/v1/alerts/${a.json.id}/deliveries`, { token: srv.admin });
      expect(d.json.deliveries[0].last_status).toBe(500);
      expect(d.json.deliveries[0].last_error).toContain('HTTP 500');
      const page = await request(srv, 'GET', '/alerts', { token: srv.tokens.boardAdmin });
      expect(page.status).toBe(200);
      expect(page.text).not.toContain('\x1b');
      expect(page.text).not.toContain('\x07');
      expect(page.text).not.toContain('\u202E');
      expect(page.text).not.toContain('<script>alert');
      expect(page.text).not.toContain('<img src=x');
    } finally {
      await t.close();
    }
  });
});
