/**
 * Ingest near the disk (issue 16.3 and 16.5), against the built `hansard serve` on loopback, each figure
 * beside its baseline measured in the same run:
 * - `runIngestScale`: chunk ingest (5-event chunks, one writer per client) at 1, 10, 50, 200 concurrent
 *   clients, each after `GET /healthz` (the bare route of the same server) at the same client count;
 * - `runChunkThroughput`: 4 MiB chunks in MiB/s, against a plain `appendFile` + `fsync` loop writing the
 *   same bytes to a file on the same disk (one loop per client, one file per loop);
 * - `runCpuBreakdown`: server CPU a request of the steps of a chunk at 50 clients (the bare route, an
 *   authenticated read, a chunk refused before the disk, a chunk taken).
 * `npx tsx bench/ingest-scale.ts [--quick] [--duration S] [--clients 1,10,50,200]` runs all three and writes
 * the section between the `bench:ingest` markers of docs/benchmarks.md. `--quick`: 3 s per phase.
 * Builds nothing: run `npm run build` first (bench:load does), the server is dist/.
 */
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { open } from 'node:fs/promises';
import { cpus, loadavg, tmpdir } from 'node:os';
import { join } from 'node:path';
import { measurePhase, type Phase } from './ingest-profile.js';
import { startBenchServer } from './ingest-server.js';
import { bareRoute, chunkFor, ingestWorkload, newSession } from './ingest-workload.js';

const ADMIN = `hns_${'L'.repeat(43)}`;

/** One client count of `runIngestScale`. */
export interface ScaleRow {
  clients: number;
  /** requests/s of GET /healthz */
  bareRps: number;
  /** chunk requests/s (201 or 200) */
  ingestRps: number;
  /** ingestRps / bareRps */
  ratio: number;
  /** ms, of the chunk requests */
  p50: number;
  p99: number;
  non2xx: number;
}

/** One client count of `runChunkThroughput`. */
export interface ThroughputRow {
  clients: number;
  chunkMiB: number;
  /** MiB/s acknowledged by the server (201s) */
  ingestMiBps: number;
  /** MiB/s of `clients` plain appendFile + fsync loops on the same disk */
  plainMiBps: number;
  ratio: number;
}

/**
 * Ingest req/s against the bare route at each client count, one fresh server for all of them.
 * @param opts.duration seconds per phase (3 for a quick run); opts.clients default [1, 10, 50, 200]
 */
export async function runIngestScale(
  opts: { duration?: number; clients?: number[] } = {},
): Promise<ScaleRow[]> {
  const duration = opts.duration ?? 10;
  const data = mkdtempSync(join(tmpdir(), 'hansard-ingest-scale-'));
  const srv = await startBenchServer(data, ADMIN, { env: { HANSARD_RATE_LIMIT: '0' } });
  const rows: ScaleRow[] = [];
  try {
    for (const clients of opts.clients ?? [1, 10, 50, 200]) {
      const bare = await bareRoute(srv.url, clients, duration);
      const { summary } = await ingestWorkload({
        url: srv.url,
        admin: ADMIN,
        connections: clients,
        duration,
        withStatus: false,
      });
      rows.push({
        clients,
        bareRps: bare.rps,
        ingestRps: summary.rps,
        ratio: summary.rps / bare.rps,
        p50: summary.p50,
        p99: summary.p99,
        non2xx: summary.non2xx,
      });
    }
  } finally {
    await srv.stop();
    rmSync(data, { recursive: true, force: true });
  }
  return rows;
}

/**
 * `loops` concurrent loops, each appending `chunk` to its own file and fsyncing, for `seconds`: MiB/s.
 * What the server's ingest would be with nothing but the disk in its way.
 */
async function plainAppendLoop(dir: string, chunk: Buffer, loops: number, seconds: number): Promise<number> {
  let bytes = 0;
  const until = performance.now() + seconds * 1000;
  const started = performance.now();
  await Promise.all(
    Array.from({ length: loops }, async (_, i) => {
      const fh = await open(join(dir, `plain-${i}.jsonl`), 'a');
      try {
        while (performance.now() < until) {
          await fh.appendFile(chunk);
          await fh.sync();
          bytes += chunk.length;
        }
      } finally {
        await fh.close();
      }
    }),
  );
  return bytes / 2 ** 20 / ((performance.now() - started) / 1000);
}

/**
 * 4 MiB chunks (128 notes of 32 KiB) through the server against plain append + fsync loops, per client
 * count (default [1, 4]); the same disk (the OS temp folder) for both.
 */
export async function runChunkThroughput(
  opts: { duration?: number; clients?: number[]; chunkBytes?: number } = {},
): Promise<ThroughputRow[]> {
  const duration = opts.duration ?? 10;
  const chunkBytes = opts.chunkBytes ?? 4 * 2 ** 20;
  const data = mkdtempSync(join(tmpdir(), 'hansard-ingest-mib-'));
  const srv = await startBenchServer(join(data, 'serve'), ADMIN, { env: { HANSARD_RATE_LIMIT: '0' } });
  const rows: ThroughputRow[] = [];
  try {
    const sample = chunkFor(newSession(), 128, chunkBytes).body;
    for (const clients of opts.clients ?? [1, 4]) {
      const plainMiBps = await plainAppendLoop(data, sample, clients, duration);
      // The loop's gigabytes go before the server's turn: left on the disk, they slowed the ingest phase after
      // them to a third (30 against 75-118 MiB/s at 1 client, 2026-12-01), whatever the wait.
      for (let i = 0; i < clients; i++) rmSync(join(data, `plain-${i}.jsonl`), { force: true });
      const { summary } = await ingestWorkload({
        url: srv.url,
        admin: ADMIN,
        connections: clients,
        duration,
        withStatus: false,
        eventsPerChunk: 128,
        chunkBytes,
      });
      rows.push({
        clients,
        chunkMiB: sample.length / 2 ** 20,
        ingestMiBps: summary.chunkMiBps,
        plainMiBps,
        ratio: summary.chunkMiBps / plainMiBps,
      });
    }
  } finally {
    await srv.stop();
    rmSync(data, { recursive: true, force: true });
  }
  return rows;
}

/** One phase of `runCpuBreakdown`: what the server spends a request, and the req/s it held. */
export interface CpuRow {
  phase: Phase;
  what: string;
  rps: number;
  /** µs of server CPU (user + system, every thread) a request */
  cpuUs: number;
}

const PHASES: Array<[Phase, string]> = [
  ['bare', 'GET /healthz (the bare route)'],
  ['authed', "GET a writer's chunk list: token, /v1 middleware, validation, 2 selects, JSON"],
  ['refused', 'a 5-event chunk refused (no writer.start): all of a chunk but the disk and the index'],
  ['small', 'a 5-event chunk taken: + segment write and fsync, index advance and WAL fsync'],
];

/**
 * Server CPU a request (bench/ingest-profile.ts `measurePhase`, /proc/PID/stat) of the steps of a chunk
 * at `clients` connections, one fresh server: the steadier figure on a shared machine.
 */
export async function runCpuBreakdown(opts: { duration?: number; clients?: number } = {}): Promise<CpuRow[]> {
  const duration = opts.duration ?? 10;
  const clients = opts.clients ?? 50;
  const data = mkdtempSync(join(tmpdir(), 'hansard-ingest-cpu-'));
  const srv = await startBenchServer(data, ADMIN, { env: { HANSARD_RATE_LIMIT: '0' } });
  const rows: CpuRow[] = [];
  try {
    for (const [phase, what] of PHASES) {
      const r = await measurePhase(srv.url, srv.proc.pid!, phase, clients, duration);
      rows.push({ phase, what, rps: r.summary.rps, cpuUs: r.cpuMsPerRequest * 1000 });
    }
  } finally {
    await srv.stop();
    rmSync(data, { recursive: true, force: true });
  }
  return rows;
}

/** The markdown of the three tables and what holds the ratios back. */
export function ingestSection(
  scale: ScaleRow[],
  mib: ThroughputRow[],
  duration: number,
  cpu: CpuRow[] = [],
): string {
  const f = (n: number, d = 0) => n.toFixed(d);
  const load = loadavg()
    .map((l) => l.toFixed(1))
    .join(' / ');
  return `<!-- bench:ingest:start -->
Measured ${new Date().toISOString().slice(0, 10)} on ${cpus()[0]?.model ?? 'unknown CPU'}, ${cpus().length} cores, Node ${process.version}, load average ${load} at the end: \`npx tsx bench/ingest-scale.ts\`, ${duration} s per phase, the built server on loopback (local mode, rate limit off), autocannon in the benchmark's process.

Chunk ingest (5 events a chunk, one writer per client) against the bare route \`GET /healthz\` at the same client count:

| clients | bare route req/s | ingest req/s | ratio | ingest p50 (ms) | p99 (ms) | non-2xx |
|---|---|---|---|---|---|---|
${scale.map((r) => `| ${r.clients} | ${f(r.bareRps)} | ${f(r.ingestRps)} | ${f(r.ratio, 3)} | ${r.p50} | ${r.p99} | ${r.non2xx} |`).join('\n')}

Chunks of ${f(mib[0]?.chunkMiB ?? 4, 1)} MiB against plain \`appendFile\` + \`fsync\` loops (one file each) on the same disk:

| clients | ingest MiB/s | plain loop MiB/s | ratio |
|---|---|---|---|
${mib.map((r) => `| ${r.clients} | ${f(r.ingestMiBps, 1)} | ${f(r.plainMiBps, 1)} | ${f(r.ratio, 3)} |`).join('\n')}

${cpu.length === 0 ? '' : cpuTable(cpu)}<!-- bench:ingest:end -->`;
}

function cpuTable(cpu: CpuRow[]): string {
  return `Server CPU a request (user + system of the server process, all its threads, over each phase) at 50 clients, the steps of a chunk one above the other:

| phase | req/s | server CPU a request (µs) |
|---|---|---|
${cpu.map((r) => `| ${r.what} | ${r.rps.toFixed(0)} | ${r.cpuUs.toFixed(0)} |`).join('\n')}
`;
}

/** Replaces (or appends) the marked section of docs/benchmarks.md. */
export function writeSection(section: string, start: string, end: string, heading: string): void {
  const doc = 'docs/benchmarks.md';
  let before = '# Benchmarks\n';
  try {
    before = readFileSync(doc, 'utf8');
  } catch {
    // first run
  }
  const marked = new RegExp(`${start}[\\s\\S]*${end}`);
  writeFileSync(
    doc,
    before.includes(start)
      ? before.replace(marked, () => section)
      : `${before.trimEnd()}\n\n## ${heading}\n\n${section}\n`,
  );
}

if (process.argv[1]?.endsWith('ingest-scale.ts')) {
  const args = process.argv.slice(2);
  const arg = (name: string, def: string) => {
    const i = args.indexOf(`--${name}`);
    return i >= 0 && args[i + 1] ? args[i + 1]! : def;
  };
  const duration = args.includes('--quick') ? 3 : Number(arg('duration', '10'));
  const clients = arg('clients', '1,10,50,200').split(',').map(Number);
  const scale = await runIngestScale({ duration, clients });
  const mib = await runChunkThroughput({ duration });
  const cpu = await runCpuBreakdown({ duration });
  const section = ingestSection(scale, mib, duration, cpu);
  writeSection(section, '<!-- bench:ingest:start -->', '<!-- bench:ingest:end -->', 'Ingest near the disk');
  process.stdout.write(`${section}\n`);
}
