/**
 * `npx tsx bench/timeline.ts`: the session page (`/sessions/{sid}`, issue 14.3) of a 50-event and of a
 * ~10,000-event session, its first screen (the first 200 rows). `createApp` with the local stores in this
 * process, served on loopback by @hono/node-server; each session is written by the library writer (two
 * writers: an agent's turns of message, turn.start, action, result with ~300 bytes of output, output,
 * turn.end, and a reviewer's notes), uploaded through the API, with one status report holding two
 * command claims (so the evidence checks read the transcript, as on a real board).
 * Figures: the first request's time to the first byte (it makes verify's report, which the next requests
 * reuse for the same segment lengths); then median and p95 over REQUESTS requests of the time to the first
 * byte of the body and to the last, the page's bytes and its gzip size; and a later page (`?after=`).
 * Usage: npm run bench:timeline [-- --requests 20 --events 10000] (prints its figures; nothing is written)
 */
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { request } from 'node:http';
import type { AddressInfo } from 'node:net';
import { cpus, tmpdir } from 'node:os';
import { join } from 'node:path';
import { gzipSync } from 'node:zlib';
import { serve } from '@hono/node-server';
import { openLocalStores } from '../lib/deploy/local.js';
import { createApp } from '../lib/http/app.js';
import { openSession } from '../lib/log/index.js';
import { ensureTenant, mintToken } from '../lib/service/index.js';

const args = process.argv.slice(2);
const arg = (name: string, def: string) => {
  const i = args.indexOf(`--${name}`);
  return i >= 0 && args[i + 1] ? args[i + 1]! : def;
};
const REQUESTS = Number(arg('requests', '20'));
const BIG = Number(arg('events', '10000'));

/** GETs `path` with the board cookie: ms to the first body byte and to the end, and the body. */
function get(
  base: string,
  path: string,
  cookie: string,
): Promise<{ first: number; total: number; body: Buffer; status: number }> {
  return new Promise((resolve, reject) => {
    const t0 = performance.now();
    let first = -1;
    const req = request(`${base}${path}`, { headers: { cookie } }, (res) => {
      const parts: Buffer[] = [];
      res.on('data', (d: Buffer) => {
        if (first < 0) first = performance.now() - t0;
        parts.push(d);
      });
      res.on('end', () =>
        resolve({
          first,
          total: performance.now() - t0,
          body: Buffer.concat(parts),
          status: res.statusCode ?? 0,
        }),
      );
    });
    req.on('error', reject);
    req.end();
  });
}

const pct = (xs: number[], p: number) =>
  [...xs].sort((a, b) => a - b)[Math.min(xs.length - 1, Math.floor(xs.length * p))]!;

async function main() {
  const tmp = mkdtempSync(join(tmpdir(), 'hansard-bench-timeline-'));
  const stores = openLocalStores(join(tmp, 'data'));
  const now = new Date();
  const admin = (await ensureTenant(stores.state, 'local', now))!.token;
  const board = (await mintToken(stores.state, 'local', { scopes: ['board'] }, now)).token;
  const reporter = (await mintToken(stores.state, 'local', { scopes: ['report'] }, now)).token;
  const app = createApp({ ...stores, log: () => {} });
  const server = serve({ fetch: app.fetch, hostname: '127.0.0.1', port: 0 });
  await new Promise((r) => server.once('listening', r));
  const base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  const post = async (path: string, token: string, body: string | Buffer, type: string) => {
    const res = await fetch(`${base}${path}`, {
      method: 'POST',
      headers: { authorization: `Bearer ${token}`, 'content-type': type },
      body,
    });
    if (!res.ok) throw new Error(`${path}: ${res.status} ${await res.text()}`);
  };

  /** A session of about `events` events (6 per turn, a note every turn); its sid. */
  async function session(events: number): Promise<string> {
    const a = openSession(join(tmp, 'sessions'), { agent: 'claude-code' });
    const b = openSession(join(tmp, 'sessions'), { sid: a.sid, agent: 'reviewer' });
    b.participantJoin({ user_id: 'priya', display_name: 'Priya' });
    let n = 4;
    for (let i = 0; n < events - 2; i++) {
      const m = b.message({ user_id: 'priya', text: `step ${i}: run the tests and fix what fails` });
      const t = a.turnStart({ context_message_ids: [m.id] });
      const act = a.action({
        turn_id: t.id,
        tool: 'bash',
        input: { command: i % 2 ? 'npm test' : 'npm run lint' },
      });
      a.actionResult({ action_id: act.id, status: 'ok', output: `ok ${i}\n`.repeat(40), exit_code: 0 });
      a.output({ turn_id: t.id, text: `Step ${i} done.` });
      a.turnEnd({ turn_id: t.id, status: 'completed' });
      n += 6;
    }
    a.end();
    b.end();
    for (const w of [a, b])
      await post(
        `/v1/sessions/${a.sid}/writers/${w.w}/chunks?offset=0`,
        admin,
        readFileSync(w.path),
        'application/x-ndjson',
      );
    await post(
      `/v1/sessions/${a.sid}/status`,
      reporter,
      JSON.stringify({
        state: 'needs_review',
        note: 'tests pass',
        events: [
          {
            kind: 'evidence',
            evidence: [
              { type: 'command', ref: 'npm test', result: 'passed' },
              { type: 'command', ref: 'npm run lint', result: 'passed' },
            ],
          },
        ],
      }),
      'application/json',
    );
    return a.sid;
  }

  const cookie = `hansard_board=${board}`;
  console.log(`node ${process.version}, ${cpus().length} cpus, ${REQUESTS} requests each`);
  console.log(
    '| session | events | bytes | gzip | first request: first byte (ms) | then: first byte p50 / p95 (ms) | whole page p50 / p95 (ms) |',
  );
  console.log('|---|---|---|---|---|---|---|');
  for (const [label, events] of [
    ['50 events', 50],
    [`${BIG.toLocaleString('en')} events`, BIG],
  ] as const) {
    const sid = await session(events);
    const path = `/sessions/${sid}`;
    // the first request makes verify's report; the next ones reuse it for 30 s (lib/service/timeline/verify.ts)
    const cold = await get(base, path, cookie);
    const firsts: number[] = [];
    const totals: number[] = [];
    let body: Buffer = Buffer.alloc(0);
    for (let i = 0; i < REQUESTS; i++) {
      const r = await get(base, path, cookie);
      if (r.status !== 200) throw new Error(`${path}: ${r.status}`);
      firsts.push(r.first);
      totals.push(r.total);
      body = r.body;
    }
    const ms = (x: number) => x.toFixed(1);
    console.log(
      `| ${label} | ${events} | ${body.length.toLocaleString('en')} | ${gzipSync(body).length.toLocaleString('en')} | ${ms(cold.first)} | ${ms(pct(firsts, 0.5))} / ${ms(pct(firsts, 0.95))} | ${ms(pct(totals, 0.5))} / ${ms(pct(totals, 0.95))} |`,
    );
    if (events > 200) {
      const last = await get(base, `${path}?after=${events - 150}`, cookie);
      console.log(
        `|   later page (?after=${events - 150}) | | ${last.body.length.toLocaleString('en')} | | | | ${ms(last.total)} |`,
      );
    }
  }
  server.close();
  await stores.state.close();
  rmSync(tmp, { recursive: true, force: true });
}

await main();
