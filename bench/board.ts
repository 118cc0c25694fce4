/**
 * `npm run bench:board`: the board's overview at 5,000 sessions (issue 14, "done when"). Starts the built
 * `bin/hansard serve` on loopback with a fresh data directory, signs a browser-like client in with a board
 * token, and measures `GET /` (the overview page) and `GET /v1/board/overview` (its JSON):
 * 1. with no session (the baseline of the same run);
 * 2. after SESSIONS sessions arrived through the API (one chunk each: writer.start, participant.join,
 *    the prompt; a status report on four in five, of every state).
 * Figures: median and p95 of the time to the first byte of the body and to the last, over REQUESTS
 * requests each, the page's bytes and its gzip size, and the ratios to the empty board. They go to
 * docs/benchmarks.md between `<!-- bench:board:start -->` and `<!-- bench:board:end -->`.
 * Usage: npm run bench:board [-- --sessions 5000 --requests 30]
 */
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { request } from 'node:http';
import { cpus, tmpdir, totalmem } from 'node:os';
import { join } from 'node:path';
import { gzipSync } from 'node:zlib';
import { formatTs, type LogEvent, newId, serializeEvent } from '../lib/log/index.js';
import { startServer } from './serve.js';

const args = process.argv.slice(2);
const arg = (name: string, def: string) => {
  const i = args.indexOf(`--${name}`);
  return i >= 0 && args[i + 1] ? args[i + 1]! : def;
};
const SESSIONS = Number(arg('sessions', '5000'));
const REQUESTS = Number(arg('requests', '30'));
const PARALLEL = 16;
const ADMIN = `hns_${'B'.repeat(43)}`;
const STATES = ['working', 'blocked', 'needs_review', 'done'] as const;
const AGENTS = ['claude-code', 'codex', 'ci'];
const PEOPLE = ['priya', 'tomasz', 'amara', 'li', 'jon', 'sofia', 'noor', 'mateo'];

async function api(
  url: string,
  path: string,
  init: RequestInit & { token?: string } = {},
): Promise<Response> {
  const res = await fetch(`${url}${path}`, {
    ...init,
    headers: { authorization: `Bearer ${init.token ?? ADMIN}`, ...(init.headers ?? {}) },
  });
  if (res.status >= 300)
    throw new Error(`${init.method ?? 'GET'} ${path}: ${res.status} ${await res.text()}`);
  return res;
}

/** One session's first chunk: writer.start, the person joining, the prompt. */
function firstChunk(i: number): { sid: string; w: string; body: string } {
  const sid = newId('s');
  const w = newId('w');
  const person = PEOPLE[i % PEOPLE.length]!;
  const t = Date.now() * 1000 - (SESSIONS - i) * 60_000_000;
  let seq = 0;
  const env = (type: string, id: string) => ({
    v: 3,
    sid,
    w,
    seq: ++seq,
    id,
    ts: formatTs(t + seq),
    mono: seq / 1000,
    type,
    extra: {},
  });
  const lines = [
    {
      ...env('writer.start', w),
      writer_id: w,
      meta: { agent: AGENTS[i % AGENTS.length], app: null, hansard_version: '0.1.0', host: 'bench', pid: 1 },
      redacted: [],
    },
    { ...env('participant.join', newId('e')), user_id: person, display_name: null },
    {
      ...env('message', newId('e')),
      user_id: person,
      text: `Session ${i}: fix the flaky ${['payments', 'search', 'billing', 'auth'][i % 4]} test and open a PR`,
      client_ts: null,
      redacted: [],
    },
  ];
  return { sid, w, body: `${lines.map((l) => serializeEvent(l as LogEvent)).join('\n')}\n` };
}

async function seed(url: string): Promise<void> {
  let next = 0;
  const one = async () => {
    for (;;) {
      const i = next++;
      if (i >= SESSIONS) return;
      const { sid, w, body } = firstChunk(i);
      await api(url, `/v1/sessions/${sid}/writers/${w}/chunks?offset=0`, {
        method: 'POST',
        headers: { 'content-type': 'application/x-ndjson' },
        body,
      });
      if (i % 5 !== 4) {
        const state = STATES[i % STATES.length]!;
        await api(url, `/v1/sessions/${sid}/status`, {
          method: 'POST',
          headers: { 'content-type': 'application/json' },
          body: JSON.stringify({ state, note: `${state} on item ${i}` }),
        });
      }
    }
  };
  await Promise.all(Array.from({ length: PARALLEL }, one));
}

/** The board cookie, as a browser gets it from the link `hansard serve` prints. */
async function signIn(url: string): Promise<string> {
  const res = await api(url, '/v1/tokens', {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ scopes: ['board'], label: 'bench' }),
  });
  const { token: secret } = (await res.json()) as { token: string };
  // node:http, not fetch: fetch sets the Sec-Fetch-* headers itself, and the board signs a link in only
  // on a navigation the user made (Sec-Fetch-Site: none).
  const cookie = await new Promise<string | undefined>((resolve, reject) => {
    const req = request(
      `${url}/?token=${encodeURIComponent(secret)}`,
      { headers: { 'sec-fetch-site': 'none', 'sec-fetch-mode': 'navigate', 'sec-fetch-dest': 'document' } },
      (res) => {
        res.resume();
        resolve(res.headers['set-cookie']?.[0]);
      },
    );
    req.on('error', reject);
    req.end();
  });
  if (!cookie) throw new Error('the board link gave no cookie');
  return cookie.split(';')[0]!;
}

interface Timing {
  ttfb: number;
  total: number;
  bytes: number;
  gzip: number;
}

/** One GET with its time to the first byte of the body and to the last, in ms. */
function timedGet(url: string, headers: Record<string, string>): Promise<Timing> {
  return new Promise((resolve, reject) => {
    const start = process.hrtime.bigint();
    let first = 0;
    const parts: Buffer[] = [];
    const req = request(url, { headers }, (res) => {
      res.on('data', (b: Buffer) => {
        if (first === 0) first = Number(process.hrtime.bigint() - start) / 1e6;
        parts.push(b);
      });
      res.on('end', () => {
        if (res.statusCode !== 200) return reject(new Error(`${url}: ${res.statusCode}`));
        const body = Buffer.concat(parts);
        const total = Number(process.hrtime.bigint() - start) / 1e6;
        resolve({ ttfb: first, total, bytes: body.length, gzip: gzipSync(body).length });
      });
    });
    req.on('error', reject);
    req.end();
  });
}

const quantile = (xs: number[], q: number) => {
  const s = [...xs].sort((a, b) => a - b);
  return s[Math.min(s.length - 1, Math.floor(q * s.length))]!;
};

/**
 * REQUESTS GETs of `url` one after another (after one to warm up); `gapMs` apart, so that with a gap past
 * the server's shared listing (500 ms, lib/service/shared/summary-cache.ts) each request reads the index itself.
 */
async function measure(url: string, headers: Record<string, string>, gapMs = 0) {
  await timedGet(url, headers); // warm
  const runs: Timing[] = [];
  for (let i = 0; i < REQUESTS; i++) {
    if (gapMs) await new Promise((r) => setTimeout(r, gapMs));
    runs.push(await timedGet(url, headers));
  }
  return {
    ttfb50: quantile(
      runs.map((r) => r.ttfb),
      0.5,
    ),
    ttfb95: quantile(
      runs.map((r) => r.ttfb),
      0.95,
    ),
    total50: quantile(
      runs.map((r) => r.total),
      0.5,
    ),
    bytes: runs[0]!.bytes,
    gzip: runs[0]!.gzip,
  };
}

const data = mkdtempSync(join(tmpdir(), 'hansard-bench-board-'));
const { url, proc } = await startServer(data, ADMIN, { HANSARD_RATE_LIMIT: '0' });
try {
  const cookie = await signIn(url);
  const page = { cookie };
  const json = { authorization: `Bearer ${ADMIN}` };
  const targets = [
    { label: '`GET /` (page)', path: '/', headers: page },
    { label: '`GET /v1/board/overview` (JSON)', path: '/v1/board/overview', headers: json },
  ];
  const empty: Awaited<ReturnType<typeof measure>>[] = [];
  for (const t of targets) empty.push(await measure(`${url}${t.path}`, t.headers));
  const t0 = Date.now();
  await seed(url);
  const seedSeconds = (Date.now() - t0) / 1000;
  const full: Awaited<ReturnType<typeof measure>>[] = [];
  for (const t of targets) full.push(await measure(`${url}${t.path}`, t.headers));
  const cold: Awaited<ReturnType<typeof measure>>[] = [];
  for (const t of targets) cold.push(await measure(`${url}${t.path}`, t.headers, 600));

  const kb = (n: number) => `${(n / 1024).toFixed(1)} KiB`;
  const rows = targets.flatMap((t, i) => {
    const e = empty[i]!;
    const f = full[i]!;
    const c = cold[i]!;
    return [
      `| ${t.label} | 0 | ${e.ttfb50.toFixed(1)} | ${e.ttfb95.toFixed(1)} | ${e.total50.toFixed(1)} | ${kb(e.bytes)} | ${kb(e.gzip)} | |`,
      `| ${t.label} | ${SESSIONS.toLocaleString('en')}, back to back | ${f.ttfb50.toFixed(1)} | ${f.ttfb95.toFixed(1)} | ${f.total50.toFixed(1)} | ${kb(f.bytes)} | ${kb(f.gzip)} | ${(f.ttfb50 / e.ttfb50).toFixed(1)}× |`,
      `| ${t.label} | ${SESSIONS.toLocaleString('en')}, 600 ms apart | ${c.ttfb50.toFixed(1)} | ${c.ttfb95.toFixed(1)} | ${c.total50.toFixed(1)} | ${kb(c.bytes)} | ${kb(c.gzip)} | ${(c.ttfb50 / e.ttfb50).toFixed(1)}× |`,
    ];
  });
  console.log(rows.join('\n'));
  const section = `<!-- bench:board:start -->
## The board's overview at ${SESSIONS.toLocaleString('en')} sessions (issue 14)

\`npm run bench:board\` on ${new Date().toISOString().slice(0, 10)}, ${cpus()[0]?.model.trim() ?? 'unknown CPU'} (${cpus().length} cores, ${Math.round(totalmem() / 2 ** 30)} GiB), Node ${process.version}: the built \`hansard serve\` on loopback with the embedded stores. Each line is ${REQUESTS} requests one after another (after one to warm up), first on the empty board, then after ${SESSIONS.toLocaleString('en')} sessions arrived through the API (${seedSeconds.toFixed(1)} s: one chunk each, and a status report on four in five of them, of every state). Time to first byte is to the first byte of the body; the ratio is the median TTFB at ${SESSIONS.toLocaleString('en')} sessions to the empty board's, in the same run.

| what | sessions | TTFB p50 ms | TTFB p95 ms | whole answer p50 ms | bytes | gzip | ratio |
|---|---:|---:|---:|---:|---:|---:|---:|
${rows.join('\n')}

The page shows one page of rows (50) whatever the total; what grows with the sessions is reading and grouping the tenant's session summaries (one listing of the session index, no transcript, no status record), which requests within 500 ms of each other share (the live pages' checks, one a second per open board): "back to back" rows mostly reuse it, "600 ms apart" rows read the index every time.
<!-- bench:board:end -->`;
  const doc = join(import.meta.dirname, '..', 'docs', 'benchmarks.md');
  const before = readFileSync(doc, 'utf8');
  writeFileSync(
    doc,
    before.includes('<!-- bench:board:start -->')
      ? before.replace(/<!-- bench:board:start -->[\s\S]*<!-- bench:board:end -->/, section)
      : `${before.trimEnd()}\n\n${section}\n`,
  );
} finally {
  proc.kill('SIGTERM');
  await new Promise((r) => proc.once('exit', r));
  rmSync(data, { recursive: true, force: true });
}
