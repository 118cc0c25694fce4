/**
 * Attack on alerts by an agent (issue 28 items 1 and 3, docs/alerts.md "The events", "What is sent"): can
 * a token with only `report` or `ingest` make events fire for a session it is not bound to, flood a target
 * by flipping a session's state, get Slack markup or a mention through a note, a work summary or an actor
 * name, or make a payload large? Over real HTTP on loopback with the real SQLite store and real receivers
 * (one `standard`, one `slack`); the worker driven by `drainOnce` on a clock the test moves.
 *
 * What holds is an ordinary test; what gives way is `it.fails` with a comment saying what should happen.
 */
import { mkdirSync, mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { LocalSecretSealer } from '../../lib/deploy/local-sealer.js';
import { newId, openSession } from '../../lib/log/index.js';
import { AlertWorker, DEFAULT_ALERT_CONFIG } from '../../lib/service/alerts/index.js';
import { expectError, request } from '../support/http.js';
import { readLocal } from '../support/segments.js';
import { useServer } from '../support/server.js';
import { upload } from '../support/stored.js';
import { startWebhookReceiver, type WebhookReceiver } from '../support/webhook-receiver.js';

const sealer = new LocalSecretSealer(mkdtempSync(join(tmpdir(), 'hansard-attack-alert-gaming-')));
const config = { ...DEFAULT_ALERT_CONFIG, allowPrivateTargets: true, timeoutMs: 3_000 };
const BOUND_SID = newId('s');

const srv = useServer({
  tenants: ['acme', 'globex'],
  tokens: {
    report: ['report'],
    ingest: ['ingest'],
    boundReport: { scopes: ['report'], session: BOUND_SID },
    globexReport: { tenant: 'globex', scopes: ['report'] },
  },
  deps: { alerts: { sealer, config } },
});

let std: WebhookReceiver;
let slack: WebhookReceiver;
let stdId = '';
let slackId = '';
/** the worker's clock: real time plus `skew` ms */
let skew = 0;
const drain = () =>
  new AlertWorker({
    state: srv.stores.state,
    segments: srv.stores.segments,
    sealer,
    now: () => new Date(Date.now() + skew),
    config: { ...config, boardOrigin: 'https://board.example.com' },
  }).drainOnce();

beforeAll(async () => {
  std = await startWebhookReceiver('/std');
  slack = await startWebhookReceiver('/slack');
});
afterAll(async () => {
  await std?.close();
  await slack?.close();
});

const report = (sid: string, json: unknown, token = srv.tokens.report) =>
  request(srv, 'POST', `/v1/sessions/${sid}/status`, { token, json });
const bodiesFor = (rx: WebhookReceiver, sid: string) =>
  rx.received.filter((r) => r.body.includes(sid)).map((r) => JSON.parse(r.body));

describe('setup', () => {
  it('acme has a standard and a slack target (every event)', async () => {
    const a = await request(srv, 'POST', '/v1/alerts', { token: srv.admin, json: { url: std.url } });
    expect(a.status, a.text).toBe(201);
    stdId = a.json.id;
    std.secrets = [a.json.secret];
    const b = await request(srv, 'POST', '/v1/alerts', {
      token: srv.admin,
      json: { url: slack.url, format: 'slack' },
    });
    expect(b.status, b.text).toBe(201);
    slackId = b.json.id;
    slack.secrets = [b.json.secret];
  });
});

describe('who can fire an event about a session', () => {
  it('a report token bound to one session cannot report (nor start work) on another: 403, nothing fires', async () => {
    const other = newId('s');
    const a = await report(other, { state: 'blocked', note: 'not mine' }, srv.tokens.boundReport);
    // another session than its own is answered as one that does not exist (404), as on every session route
    expect([403, 404]).toContain(a.status);
    const w = await request(srv, 'POST', '/v1/work', {
      token: srv.tokens.boundReport,
      json: {
        session: other,
        system: 'ci',
        actor: 'mallory',
        subject: { kind: 'free', ref: 'x' },
        mode: 'testing',
        summary: 'not mine',
        ttl_seconds: 60,
      },
    });
    expect([403, 404]).toContain(w.status);
    await drain();
    expect(bodiesFor(std, other)).toEqual([]);
  });

  it('an ingest token cannot report a state at all: 403 naming report', async () => {
    const a = await report(newId('s'), { state: 'blocked' }, srv.tokens.ingest);
    expect(expectError(srv, a, 403, 'forbidden').details.required).toContain('report');
  });

  it("another tenant's report token on acme's session fires for globex only, never to acme's targets", async () => {
    const sid = newId('s');
    expect((await report(sid, { state: 'blocked', note: 'acme' })).status).toBe(201);
    const g = await report(
      sid,
      { state: 'blocked', note: 'globex on the same sid' },
      srv.tokens.globexReport,
    );
    // globex's own session of the same id (tenants are separate name spaces): 201, but it is globex's
    expect(g.status).toBe(201);
    await drain();
    const got = bodiesFor(std, sid);
    expect(got).toHaveLength(1);
    expect(got[0].data).toMatchObject({ tenant: 'acme', note: 'acme' });
  });
});

describe('flooding a target by flipping a state', () => {
  // Observed, not a promise broken: every blocked that follows another state fires (docs: "a report that
  // repeats a state fires nothing"; an alternation is not a repeat). There is no bound per session: 500
  // reports alternating blocked/working fire 250 session.blocked events, each delivered to every target.
  // With `--after` they are skipped (the state ended); without it, each is sent. The server's per-token
  // rate limit (600 a minute by default) is the only cap. In order per session means one delivery of a
  // session per target and pass: the 250 take 250 passes (about four minutes at the server's 1 s poll).
  it('500 alternating reports: 250 session.blocked deliveries to a standard target (no bound)', async () => {
    const sid = newId('s');
    for (let i = 0; i < 500; i++) {
      const a = await report(sid, { state: i % 2 === 0 ? 'blocked' : 'working', note: `flip ${i}` });
      expect(a.status).toBe(201);
    }
    // the standard target only: the slack one is rate-limited to one a second (next test)
    const before = std.received.length;
    let passes = 0;
    while (passes < 400 && std.received.length - before < 250) {
      await drainStdOnly();
      passes += 1;
    }
    expect(passes).toBeGreaterThanOrEqual(250); // one per pass: the session's queue
    const got = bodiesFor(std, sid);
    expect(got.filter((b) => b.type === 'session.blocked')).toHaveLength(250);
    expect(new Set(got.map((b) => b.data.id)).size).toBe(250);
    // and each of them waits in the slack target's queue: 250 messages, one a second (over 4 minutes)
    const queued = await request(srv, 'GET', `/v1/alerts/${slackId}/deliveries?limit=200`, {
      token: srv.admin,
    });
    expect(queued.json.deliveries.filter((d: { sid: string }) => d.sid === sid).length).toBe(200);
    // drop the slack target's backlog (removing the target removes its deliveries), then add it again
    expect((await request(srv, 'DELETE', `/v1/alerts/${slackId}`, { token: srv.admin })).status).toBe(204);
    const b = await request(srv, 'POST', '/v1/alerts', {
      token: srv.admin,
      json: { url: slack.url, format: 'slack' },
    });
    slackId = b.json.id;
    slack.secrets = [b.json.secret];
  }, 120_000);

  // Held: one session flipping its state does not hold back another session's alert, even to a Slack
  // target (one message a second): only the head of each (target, session) queue is due in a pass, so the
  // victim's head goes out in the first pass beside the flooder's head.
  it("a flood of 10 flips from one session delays another session's Slack alert by under 5 s", async () => {
    const flooder = newId('s');
    const victim = newId('s');
    for (let i = 0; i < 20; i++) {
      expect((await report(flooder, { state: i % 2 === 0 ? 'blocked' : 'working' })).status).toBe(201);
    }
    expect((await report(victim, { state: 'blocked', note: 'the one that matters' })).status).toBe(201);
    const started = Date.now();
    let victimAt: number | null = null;
    while (victimAt === null && Date.now() - started < 20_000) {
      await drain();
      if (slack.received.some((r) => r.body.includes(victim))) victimAt = Date.now();
    }
    expect(victimAt).not.toBeNull();
    // (ten flips at Slack's one a second would be 10 s: the victim's own queue is not behind them)
    expect(victimAt! - started).toBeLessThan(5_000);
  }, 40_000);
});

describe("one tenant's burst of events and another tenant's alert", () => {
  // Was a fault (fairness, low): the outbox is one queue for every tenant, and a pass fanned out only the
  // first 100 due events, so a tenant's burst of N events held every other tenant's back ceil(N / 100)
  // passes. Fixed: a pass fans out up to 2,000 events (MAX_FAN_OUT, lib/service/alerts/worker.ts; fan-out
  // sends nothing, so it is quick); a burst larger than that would still delay others by a pass per 2,000.
  it("globex's blocked alert is delivered in the first pass after acme fired 120 events", async () => {
    const g = await request(srv, 'POST', '/v1/alerts', {
      token: srv.tenants.globex.admin,
      json: { url: std.url, events: ['session.blocked'] },
    });
    expect(g.status, g.text).toBe(201);
    std.secrets = [...std.secrets, g.json.secret];
    const flooder = newId('s');
    for (let i = 0; i < 240; i++) {
      expect((await report(flooder, { state: i % 2 === 0 ? 'blocked' : 'working' })).status).toBe(201);
    }
    const victim = newId('s');
    expect((await report(victim, { state: 'blocked', note: 'globex' }, srv.tokens.globexReport)).status).toBe(
      201,
    );
    try {
      await drainStdOnly([stdId, g.json.id]);
      expect(std.received.some((r) => r.body.includes(victim))).toBe(true);
    } finally {
      // the rest of the backlog is drained, so later tests start clean
      for (let i = 0; i < 5; i++) await drainStdOnly([stdId, g.json.id]);
      await request(srv, 'DELETE', `/v1/alerts/${g.json.id}`, { token: srv.tenants.globex.admin });
    }
  }, 60_000);
});

/** One pass for the standard target only: the slack target's deliveries are left alone. */
async function drainStdOnly(only: string[] = [stdId]): Promise<void> {
  const state = srv.stores.state;
  // a store that hides the slack target's due deliveries from this worker
  const filtered = new Proxy(state, {
    get(t, p, r) {
      if (p === 'listDueDeliveries') {
        return async (now: string, limit: number) =>
          (await t.listDueDeliveries(now, 10_000)).filter((d) => only.includes(d.target_id)).slice(0, limit);
      }
      const v = Reflect.get(t, p, r);
      return typeof v === 'function' ? v.bind(t) : v;
    },
  });
  await new AlertWorker({
    state: filtered,
    segments: srv.stores.segments,
    sealer,
    now: () => new Date(Date.now() + skew),
    config: { ...config, boardOrigin: 'https://board.example.com' },
  }).drainOnce();
}

describe('claim.unsupported on demand', () => {
  // Observed (no promise broken, but worth knowing): every report that declares a command or test claim
  // starts its own claims watch (lib/service/alerts/events.ts statusEvents, one id per status version),
  // and each one the record refutes fires. A `report` token of the tenant (not bound to the session) can
  // so make one session fire claim.unsupported once per report, each a full check of the session's
  // record by the worker a minute later: 20 identical "npm test passed" reports on a session whose record
  // shows npm test failing give 20 events. A state repeated fires nothing; a claim repeated does.
  it('twenty identical refuted claims from a reporter of the tenant: twenty claim.unsupported events', async () => {
    mkdirSync(srv.workDir, { recursive: true });
    const w = openSession(mkdtempSync(join(srv.workDir, 'claim-')), { agent: 'victim-agent' });
    const past = (s: number) => (Date.now() - 600_000 + s * 1000) * 1000;
    const m = w.message({ user_id: 'ann', text: 'make the tests pass' }, { at: past(0) });
    const t = w.turnStart({ context_message_ids: [m.id] }, { at: past(1) });
    const a = w.action(
      { turn_id: t.turn_id, tool: 'Bash', input: { command: 'npm test' }, call_id: 'toolu_1' },
      { at: past(2) },
    );
    w.actionResult({ action_id: a.id, status: 'error', exit_code: 1 }, { at: past(3) });
    w.close();
    await upload(srv, srv.admin, readLocal({ sid: w.sid, w: w.w, dir: w.dir, path: w.path }));
    for (let i = 0; i < 20; i++) {
      const r = await report(w.sid, {
        state: 'working',
        events: [{ kind: 'evidence', evidence: [{ type: 'test', ref: 'npm test', result: 'passed' }] }],
      });
      expect(r.status, r.text).toBe(201);
    }
    skew = 61_000;
    try {
      for (let i = 0; i < 25; i++) await drainStdOnly();
    } finally {
      skew = 0;
    }
    const got = bodiesFor(std, w.sid).filter((b) => b.type === 'claim.unsupported');
    expect(got).toHaveLength(20);
    expect(got[0].data).toMatchObject({ claims: 1, unsupported: 1 });
  }, 60_000);
});

describe('markup through what an agent writes', () => {
  const nasty = '<!channel> <!here> <@U024BE7LH> <https://evil.example|click> & *x*';

  it('a note with mentions and links is taken, and escaped in the Slack body', async () => {
    const sid = newId('s');
    // the note rules take it (it is one line, no credential, path or command): escaping must hold
    const a = await report(sid, { state: 'blocked', note: nasty });
    expect(a.status, a.text).toBe(201);
    await drain();
    const s = slack.received.find((r) => r.body.includes(sid));
    expect(s).toBeDefined();
    const body = JSON.parse(s!.body);
    const texts = [body.text, body.blocks[0].text.text, body.blocks[1].elements[0].text] as string[];
    for (const t of texts) {
      expect(t).not.toMatch(/<!(channel|here|everyone)/);
      expect(t).not.toContain('<@U');
      expect(t).not.toContain('<https://evil');
    }
    expect(body.text).toContain('&lt;!channel&gt;');
    // the only link is the board's own
    const links = [...body.blocks[0].text.text.matchAll(/<([^>]*)>/g)].map((m) => m[1]);
    expect(links).toEqual([`https://board.example.com/sessions/${sid}|open on the board`]);
    // the standard body carries the note as the agent wrote it (JSON, for the receiver to escape)
    const st = std.received.find((r) => r.body.includes(sid))!;
    expect(JSON.parse(st.body).data.note).toBe(nasty);
  });

  it('a work summary and actor whose lease expires: work.unknown reaches Slack escaped', async () => {
    const sid = newId('s');
    const w = await request(srv, 'POST', '/v1/work', {
      token: srv.tokens.report,
      json: {
        session: sid,
        system: 'ci',
        actor: 'mallory@evil',
        subject: { kind: 'free', ref: 'x' },
        mode: 'testing',
        summary: `waiting ${nasty}`.slice(0, 240),
        ttl_seconds: 60,
      },
    });
    expect(w.status, w.text).toBe(201);
    skew = 61_000; // the lease (60 s) has run out on the worker's clock
    try {
      await drain();
    } finally {
      skew = 0;
    }
    const s = slack.received.find((r) => r.body.includes(sid) && r.body.includes('work.unknown'));
    expect(s, 'work.unknown reached slack').toBeDefined();
    const body = JSON.parse(s!.body);
    for (const t of [body.text, body.blocks[0].text.text]) {
      expect(t).not.toMatch(/<!(channel|here)/);
      expect(t).not.toContain('<https://evil');
      expect(t).toContain('mallory@evil');
    }
  });

  it('an actor name cannot carry markup: refused by the name rule', async () => {
    for (const actor of ['<!channel>', 'a<b', 'a&b', 'a b', 'x'.repeat(65)]) {
      const w = await request(srv, 'POST', '/v1/work', {
        token: srv.tokens.report,
        json: {
          session: newId('s'),
          system: 'ci',
          actor,
          subject: { kind: 'free', ref: 'x' },
          mode: 'testing',
          summary: 'something',
        },
      });
      expect(w.status, actor).toBe(400);
    }
  });
});

describe('payload sizes', () => {
  it('a 240-char note and a 240-char summary give bodies of a few KB at most; longer ones are refused', async () => {
    const sid = newId('s');
    const note = 'n'.repeat(240);
    expect((await report(sid, { state: 'blocked', note })).status).toBe(201);
    expect((await report(newId('s'), { state: 'blocked', note: `${note}x` })).status).toBe(400);
    const w = await request(srv, 'POST', '/v1/work', {
      token: srv.tokens.report,
      json: {
        session: sid,
        system: 's'.repeat(64),
        actor: 'a'.repeat(64),
        subject: { kind: 'free', ref: 'r'.repeat(160) },
        mode: 'm'.repeat(40),
        summary: 'w'.repeat(240),
        ttl_seconds: 60,
      },
    });
    expect(w.status, w.text).toBe(201);
    const long = await request(srv, 'POST', '/v1/work', {
      token: srv.tokens.report,
      json: {
        session: sid,
        system: 'ci',
        actor: 'a',
        subject: { kind: 'free', ref: 'r' },
        mode: 'testing',
        summary: 'w'.repeat(241),
      },
    });
    expect(long.status).toBe(400);
    skew = 61_000;
    try {
      await drain();
      await drain(); // work.unknown waits behind the session's blocked (in order per session)
    } finally {
      skew = 0;
    }
    const sizes = [...std.received, ...slack.received]
      .filter((r) => r.body.includes(sid))
      .map((r) => Buffer.byteLength(r.body));
    expect(sizes.length).toBe(4); // blocked and work.unknown, to both targets
    for (const n of sizes) expect(n).toBeLessThan(4_096);
  });
});
