/**
 * `npm run bench:load`: the bounded load test of issue 5. Starts `bin/hansard serve` on loopback with a
 * fresh data directory, then with autocannon:
 * 1. baseline: 50 connections for DURATION s on `GET /healthz` (a bare Hono route of the same server);
 * 2. workload: 50 connections for DURATION s, each owning one of 50 sessions, alternately ingesting the
 *    next chunk of its writer's segment and posting a status report.
 * Then checks that nothing was lost: every session's stored length equals what its client was told,
 * and its merged replay holds every accepted event exactly once. Zero 5xx is required. Figures (p50, p99,
 * requests/s, and the ratios to the baseline) go to docs/benchmarks.md between markers.
 * Usage: npm run bench:load [-- --duration 30 --connections 50 | --quick (3 s a phase)]; the script builds dist/ first (the server
 * it starts is the built CLI), so the figures are always those of this tree, never of a stale build.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { cpus, loadavg, tmpdir, totalmem } from 'node:os';
import { join } from 'node:path';
import { writeSection } from './ingest-scale.js';
import { startBenchServer } from './ingest-server.js';
import { bareRoute, checkLoss, ingestWorkload } from './ingest-workload.js';

const args = process.argv.slice(2);
const arg = (name: string, def: string) => {
  const i = args.indexOf(`--${name}`);
  return i >= 0 && args[i + 1] ? args[i + 1]! : def;
};
const DURATION = args.includes('--quick') ? 3 : Number(arg('duration', '30'));
const CONNECTIONS = Number(arg('connections', '50'));
const EVENTS_PER_CHUNK = 5;
const ADMIN = `hns_${'L'.repeat(43)}`;

const data = mkdtempSync(join(tmpdir(), 'hansard-load-'));
// The server's stderr (a request log line a request) is dropped, as bench/ingest-scale.ts does.
const srv = await startBenchServer(data, ADMIN, { env: { HANSARD_RATE_LIMIT: '0' } });
const { url } = srv;
try {
  process.stderr.write(
    `server at ${url}; baseline: ${CONNECTIONS} connections × ${DURATION} s on GET /healthz\n`,
  );
  const b = await bareRoute(url, CONNECTIONS, DURATION);
  process.stderr.write(
    `workload: ${CONNECTIONS} connections × ${DURATION} s, chunks of ${EVENTS_PER_CHUNK} events and status reports into ${CONNECTIONS} sessions\n`,
  );
  const { summary: w, sessions } = await ingestWorkload({
    url,
    admin: ADMIN,
    connections: CONNECTIONS,
    duration: DURATION,
    withStatus: true,
    eventsPerChunk: EVENTS_PER_CHUNK,
  });
  // Zero loss: the server holds exactly what it acknowledged, each event once.
  const { lost, duplicated, checked } = await checkLoss(url, ADMIN, sessions);
  const fivexx = Object.entries(w.codes)
    .filter(([k]) => k.startsWith('5'))
    .reduce((n, [, v]) => n + Number(v), 0);
  const section = `<!-- bench:load:start -->
Measured ${new Date().toISOString().slice(0, 10)} on ${cpus()[0]?.model ?? 'unknown CPU'}, ${cpus().length} cores, ${(totalmem() / 2 ** 30).toFixed(0)} GiB, Node ${process.version}, load average ${loadavg()[0]!.toFixed(1)} at the end: \`npm run bench:load\` (autocannon in the same process as the checks, the server in its own process, loopback), ${CONNECTIONS} connections × ${DURATION} s per phase, local mode (files + SQLite), rate limit off for the run.

| phase | requests | requests/s | p50 (ms) | p99 (ms) | non-2xx | errors |
|---|---|---|---|---|---|---|
| bare route \`GET /healthz\` | ${b.requests} | ${b.rps.toFixed(0)} | ${b.p50} | ${b.p99} | ${b.non2xx} | ${b.errors} |
| chunks + status reports, ${CONNECTIONS} sessions | ${w.requests} | ${w.rps.toFixed(0)} | ${w.p50} | ${w.p99} | ${w.non2xx} | ${w.errors} |

Ratios to the bare route: throughput ${(w.rps / b.rps).toFixed(3)}×, p50 ${(w.p50 / Math.max(b.p50, 0.001)).toFixed(1)}×, p99 ${(w.p99 / Math.max(b.p99, 0.001)).toFixed(1)}×.
Status codes of the workload: ${JSON.stringify(w.codes)}. 5xx: ${fivexx}.
Loss check: ${sessions.filter((s) => s.accepted > 0).length} sessions, ${checked} events replayed, ${lost} lost, ${duplicated} duplicated.
<!-- bench:load:end -->`;
  writeSection(
    section,
    '<!-- bench:load:start -->',
    '<!-- bench:load:end -->',
    'Load: ingest and status reports',
  );
  process.stdout.write(`${section}\n`);
  if (fivexx > 0 || lost > 0 || duplicated > 0) process.exitCode = 1;
} finally {
  // Stopped before its data directory goes: a server still running would log its digests failing to be written.
  await srv.stop();
  rmSync(data, { recursive: true, force: true });
}
