/**
 * `npm run bench:load`: the bounded load test of issue 5. Starts `bin/hansard serve` on loopback with a
 * fresh data directory, then with autocannon:
 * 1. baseline: 50 connections for DURATION s on `GET /healthz` (a bare Hono route of the same server);
 * 2. workload: 50 connections for DURATION s, each owning one of 50 sessions, alternately ingesting the
 *    next chunk of its writer's segment and posting a status report.
 * Then checks that nothing was lost: every session's stored length equals what its client was told,
 * and its merged replay holds every accepted event exactly once. Zero 5xx is required. Figures (p50, p99,
 * requests/s, and the ratios to the baseline) go to docs/benchmarks.md between markers.
 * Usage: npm run bench:load [-- --duration 30 --connections 50]; the script builds dist/ first (the server
 * it starts is the built CLI), so the figures are always those of this tree, never of a stale build.
 */
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { cpus, tmpdir, totalmem } from 'node:os';
import { join } from 'node:path';
import autocannon from 'autocannon';
import { formatTs, type LogEvent, newId, serializeEvent } from '../lib/log/index.js';
import { startServer } from './serve.js';

const args = process.argv.slice(2);
const arg = (name: string, def: string) => {
  const i = args.indexOf(`--${name}`);
  return i >= 0 && args[i + 1] ? args[i + 1]! : def;
};
const DURATION = Number(arg('duration', '30'));
const CONNECTIONS = Number(arg('connections', '50'));
const EVENTS_PER_CHUNK = 5;
const ADMIN = `hns_${'L'.repeat(43)}`;

interface SessionState {
  sid: string;
  w: string;
  seq: number;
  offset: number;
  /** events the server acknowledged (201, or 200 for a retry) */
  accepted: number;
  ids: Set<string>;
  next: 'chunk' | 'status';
  pending: { body: string; lines: number; ids: string[] } | null;
}

function chunkFor(s: SessionState): { body: string; lines: number; ids: string[] } {
  const lines: string[] = [];
  const ids: string[] = [];
  const now = Date.now() * 1000;
  const base = (type: string, id: string) => ({
    v: 3,
    sid: s.sid,
    w: s.w,
    seq: ++s.seq,
    id,
    ts: formatTs(now + s.seq),
    mono: s.seq / 1000,
    type,
    extra: {},
  });
  if (s.offset === 0 && s.seq === 0) {
    const ev = {
      ...base('writer.start', s.w),
      writer_id: s.w,
      meta: { agent: 'load', app: null, hansard_version: '0.1.0', host: 'bench', pid: 1 },
      redacted: [],
    };
    lines.push(serializeEvent(ev as LogEvent));
    ids.push(s.w);
  }
  while (lines.length < EVENTS_PER_CHUNK) {
    const id = newId('e');
    lines.push(
      serializeEvent({
        ...base('note', id),
        author: 'load',
        text: `load note ${s.seq}`,
        redacted: [],
      } as LogEvent),
    );
    ids.push(id);
  }
  return { body: `${lines.join('\n')}\n`, lines: lines.length, ids };
}

function summarize(r: autocannon.Result) {
  return {
    requests: r.requests.total,
    rps: r.requests.average,
    p50: r.latency.p50,
    p99: r.latency.p99,
    non2xx: r.non2xx,
    errors: r.errors,
    timeouts: r.timeouts,
    codes: Object.fromEntries(
      Object.entries(r.statusCodeStats ?? {}).map(([k, v]) => [k, (v as { count: number }).count]),
    ),
  };
}

const data = mkdtempSync(join(tmpdir(), 'hansard-load-'));
const { url, proc } = await startServer(data, ADMIN, { HANSARD_RATE_LIMIT: '0' });
try {
  process.stderr.write(
    `server at ${url}; baseline: ${CONNECTIONS} connections × ${DURATION} s on GET /healthz\n`,
  );
  const baseline = await autocannon({ url: `${url}/healthz`, connections: CONNECTIONS, duration: DURATION });

  const sessions: SessionState[] = Array.from({ length: CONNECTIONS }, () => ({
    sid: newId('s'),
    w: newId('w'),
    seq: 0,
    offset: 0,
    accepted: 0,
    ids: new Set<string>(),
    next: 'chunk',
    pending: null,
  }));
  const idle = [...sessions];
  const auth = { authorization: `Bearer ${ADMIN}` };
  process.stderr.write(
    `workload: ${CONNECTIONS} connections × ${DURATION} s, chunks of ${EVENTS_PER_CHUNK} events and status reports into ${CONNECTIONS} sessions\n`,
  );
  const workload = await autocannon({
    url,
    connections: CONNECTIONS,
    duration: DURATION,
    requests: [
      {
        setupRequest: (req, context) => {
          // Each connection takes an idle session, so a writer never has two chunks in flight.
          const s = idle.shift()!;
          (context as { s?: SessionState }).s = s;
          if (s.next === 'status') {
            return {
              ...req,
              method: 'POST',
              path: `/v1/sessions/${s.sid}/status`,
              headers: { ...auth, 'content-type': 'application/json' },
              body: JSON.stringify({ state: 'working', note: `at seq ${s.seq}` }),
            };
          }
          s.pending ??= chunkFor(s);
          return {
            ...req,
            method: 'POST',
            path: `/v1/sessions/${s.sid}/writers/${s.w}/chunks?offset=${s.offset}`,
            headers: { ...auth, 'content-type': 'application/x-ndjson' },
            body: s.pending.body,
          };
        },
        onResponse: (status, body, context) => {
          const s = (context as { s: SessionState }).s;
          if (s.next === 'chunk') {
            if (status === 201 || status === 200) {
              const answer = JSON.parse(body) as { length: number };
              s.offset = answer.length;
              s.accepted += s.pending!.lines;
              for (const id of s.pending!.ids) s.ids.add(id);
              s.pending = null;
              s.next = 'status';
            } else if (status === 409) {
              // Only this connection writes this session: a 409 means an earlier try of this very chunk
              // was stored (its answer lost), or not.
              const e = JSON.parse(body) as { error: { details: { expected_offset: number } } };
              const expected = e.error.details.expected_offset;
              if (expected === s.offset + Buffer.byteLength(s.pending!.body)) {
                s.accepted += s.pending!.lines;
                for (const id of s.pending!.ids) s.ids.add(id);
                s.pending = null;
              }
              s.offset = expected;
            }
          } else s.next = 'chunk';
          idle.push(s);
        },
      },
    ],
  });

  // Zero loss: the server holds exactly what it acknowledged, each event once.
  let lost = 0;
  let duplicated = 0;
  let checked = 0;
  for (const s of sessions) {
    if (s.accepted === 0) continue;
    const res = await fetch(`${url}/v1/sessions/${s.sid}/replay`, { headers: auth });
    const lines = (await res.text()).split('\n').filter(Boolean);
    const seen = new Map<string, number>();
    for (const l of lines) {
      const id = (JSON.parse(l) as { id: string }).id;
      seen.set(id, (seen.get(id) ?? 0) + 1);
    }
    for (const id of s.ids) if (!seen.has(id)) lost += 1;
    for (const n of seen.values()) if (n > 1) duplicated += n - 1;
    if (lines.length !== s.accepted) lost += Math.max(0, s.accepted - lines.length);
    checked += lines.length;
  }
  const b = summarize(baseline);
  const w = summarize(workload);
  const fivexx = Object.entries(w.codes)
    .filter(([k]) => k.startsWith('5'))
    .reduce((n, [, v]) => n + Number(v), 0);
  const section = `<!-- bench:load:start -->
Measured ${new Date().toISOString().slice(0, 10)} on ${cpus()[0]?.model ?? 'unknown CPU'}, ${cpus().length} cores, ${(totalmem() / 2 ** 30).toFixed(0)} GiB, Node ${process.version}: \`npm run bench:load\` (autocannon in the same process as the checks, the server in its own process, loopback), ${CONNECTIONS} connections × ${DURATION} s per phase, local mode (files + SQLite), rate limit off for the run.

| phase | requests | requests/s | p50 (ms) | p99 (ms) | non-2xx | errors |
|---|---|---|---|---|---|---|
| bare route \`GET /healthz\` | ${b.requests} | ${b.rps.toFixed(0)} | ${b.p50} | ${b.p99} | ${b.non2xx} | ${b.errors} |
| chunks + status reports, ${CONNECTIONS} sessions | ${w.requests} | ${w.rps.toFixed(0)} | ${w.p50} | ${w.p99} | ${w.non2xx} | ${w.errors} |

Ratios to the bare route: throughput ${(w.rps / b.rps).toFixed(3)}×, p50 ${(w.p50 / Math.max(b.p50, 0.001)).toFixed(1)}×, p99 ${(w.p99 / Math.max(b.p99, 0.001)).toFixed(1)}×.
Status codes of the workload: ${JSON.stringify(w.codes)}. 5xx: ${fivexx}.
Loss check: ${sessions.filter((s) => s.accepted > 0).length} sessions, ${checked} events replayed, ${lost} lost, ${duplicated} duplicated.
<!-- bench:load:end -->`;
  const doc = 'docs/benchmarks.md';
  let before = '# Benchmarks\n';
  try {
    before = readFileSync(doc, 'utf8');
  } catch {
    // first run
  }
  writeFileSync(
    doc,
    before.includes('<!-- bench:load:start -->')
      ? before.replace(/<!-- bench:load:start -->[\s\S]*<!-- bench:load:end -->/, section)
      : `${before.trimEnd()}\n\n## Load: ingest and status reports\n\n${section}\n`,
  );
  process.stdout.write(`${section}\n`);
  if (fivexx > 0 || lost > 0 || duplicated > 0) process.exitCode = 1;
} finally {
  proc.kill('SIGTERM');
  rmSync(data, { recursive: true, force: true });
}
