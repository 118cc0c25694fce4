/**
 * Alerts survive a `kill -9` (issue 28 item 4, "Done when"): a real `hansard serve` process, its outbox
 * and deliveries in its SQLite file, killed with SIGKILL while (a) a delivery waits for its retry after a
 * 500, (b) an attempt is in flight to a target that does not answer, (c) a change was just answered 201
 * and nothing was sent yet. Restarted on the same data directory, with its clock two minutes on (the
 * retry and the dead attempt's claim are then due: tests/support/clock-ahead.mjs), it delivers every one
 * of them to a real receiver that verifies the signatures with `standardwebhooks`; none is lost, and a
 * receiver that keeps one request per webhook-id has each exactly once.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { type ServeProcess, startServeProcess } from '../../harness/serve-process.js';
import { newId } from '../../lib/log/index.js';
import { request } from '../support/http.js';
import { startWebhookReceiver } from '../support/webhook-receiver.js';

const ROOT = join(import.meta.dirname, '../..');
const root = mkdtempSync(join(tmpdir(), 'hansard-alert-kill-'));
const dataDir = join(root, 'data');
const procs: ServeProcess[] = [];
afterAll(async () => {
  await Promise.all(procs.map((p) => p.close()));
  rmSync(root, { recursive: true, force: true });
});

const serve = async (aheadMs = 0) => {
  const p = await startServeProcess({
    dataDir,
    args: ['--allow-private-alert-targets'],
    env: aheadMs
      ? {
          NODE_OPTIONS: `--import=${join(ROOT, 'test/support/clock-ahead.mjs')}`,
          CLOCK_AHEAD_MS: `${aheadMs}`,
        }
      : {},
  });
  procs.push(p);
  return p;
};

/** Polls `check` every 50 ms until it holds (or fails after `ms`). */
async function until(check: () => boolean, ms: number, what: string): Promise<void> {
  const end = Date.now() + ms;
  while (!check()) {
    if (Date.now() > end) throw new Error(`not within ${ms} ms: ${what}`);
    await new Promise((r) => setTimeout(r, 50));
  }
}

describe('a server killed with pending alerts delivers them after its restart', () => {
  it('a retry waiting, an attempt in flight and an event not yet sent: all delivered once restarted', async () => {
    const rx = await startWebhookReceiver();
    try {
      let srv = await serve();
      const token = srv.admin;
      const add = await request(srv, 'POST', '/v1/alerts', { token, json: { url: rx.url } });
      expect(add.status, add.text).toBe(201);
      rx.secrets.push(add.json.secret);
      const report = (sid: string, state: string) =>
        request(srv, 'POST', `/v1/sessions/${sid}/status`, {
          token,
          json: { state, note: state, events: [] },
        }).then((a) => expect(a.status, a.text).toBe(201));
      const [retrying, inFlight, unsent] = [newId('s'), newId('s'), newId('s')];

      // (a) a 500: the delivery waits 15–30 s for its retry
      rx.mode = 'fail';
      await report(retrying, 'blocked');
      await until(() => rx.received.length >= 1, 10_000, 'the first attempt');
      // (b) an attempt that gets no answer: killed while it is open
      rx.mode = 'hang';
      await report(inFlight, 'needs_review');
      await until(() => rx.received.length >= 2, 10_000, 'the hanging attempt');
      // (c) a change answered 201, killed at once
      await report(unsent, 'done');
      srv.signal('SIGKILL');
      expect(await srv.exited).toBeNull();
      const beforeRestart = rx.received.length;

      rx.mode = 'ok';
      srv = await serve(120_000);
      await until(() => rx.unique().size >= 3, 20_000, 'three events delivered after the restart');
      const delivered = [...rx.unique().values()].map((r) => {
        const p = r.payload as { type: string; data: { session: string } };
        return `${p.type} ${p.data.session}`;
      });
      expect(delivered.sort()).toEqual(
        [`session.blocked ${retrying}`, `session.needs_review ${inFlight}`, `session.done ${unsent}`].sort(),
      );
      expect(rx.received.length).toBeGreaterThan(beforeRestart);
      // every request carried a valid signature, retries the first attempt's webhook-id
      expect(rx.received.filter((r) => r.error !== null)).toEqual([]);
      expect(new Set(rx.received.map((r) => r.id)).size).toBe(3);
      // and the API says so
      const ds = await request(srv, 'GET', `/v1/alerts/${add.json.id}/deliveries`, { token });
      expect(ds.json.deliveries.map((d: { status: string }) => d.status)).toEqual([
        'delivered',
        'delivered',
        'delivered',
      ]);
    } finally {
      await rx.close();
    }
  }, 90_000);
});
