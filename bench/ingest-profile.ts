/**
 * Server CPU per request of the ingest workloads (issue 16.3): the steadier figure on a shared machine,
 * where req/s moves with whatever else runs. Starts the built `hansard serve` (bench/ingest-server.ts),
 * optionally under `node --cpu-prof`, runs one phase at a time, and reads the server process's CPU time
 * (utime + stime of /proc/PID/stat, 10 ms ticks) before and after it: CPU ms a request, beside req/s.
 *
 * `npx tsx bench/ingest-profile.ts [--phase bare|small|status|big] [--clients 50] [--duration 5]
 *   [--profile] [--checkout DIR] [--env K=V,…]`: `small` is 5-event chunks (bench:ingest), `status` chunks + status
 * reports (bench:load's mix), `big` 4 MiB chunks; `--profile` prints the top self times (bench/profile.ts);
 * `--checkout DIR` runs another checkout's build (an A/B). Builds nothing: run `npm run build` first.
 */
import { copyFileSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { startBenchServer } from './ingest-server.js';
import { bareRoute, ingestWorkload, type Summary } from './ingest-workload.js';
import { latestProfile, selfTimes, selfTimeTable } from './profile.js';

const ADMIN = `hns_${'L'.repeat(43)}`;
/** Linux's USER_HZ: /proc/PID/stat counts CPU time in ticks of 1/100 s. */
const TICKS_PER_S = 100;

/** The CPU time (user + system) a process has used so far, in ms; from /proc/PID/stat (Linux only). */
export function processCpuMs(pid: number): number {
  const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
  // Fields after the command name (which may hold spaces) start after its closing parenthesis.
  const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
  // utime and stime are fields 14 and 15 of the whole line, 12 and 13 after the name.
  return ((Number(fields[11]) + Number(fields[12])) * 1000) / TICKS_PER_S;
}

/** One phase: req/s (autocannon), the server's CPU ms over the phase and per request. */
export interface PhaseCpu {
  phase: string;
  clients: number;
  summary: Summary;
  cpuMs: number;
  cpuMsPerRequest: number;
}

/**
 * Runs `phase` for `duration` s at `clients` connections against `url`, counting the CPU of `pid`.
 * @throws when /proc/PID/stat cannot be read (not Linux, or the server gone)
 */
export async function measurePhase(
  url: string,
  pid: number,
  phase: 'bare' | 'small' | 'status' | 'big',
  clients: number,
  duration: number,
): Promise<PhaseCpu> {
  const before = processCpuMs(pid);
  const summary =
    phase === 'bare'
      ? await bareRoute(url, clients, duration)
      : (
          await ingestWorkload({
            url,
            admin: ADMIN,
            connections: clients,
            duration,
            withStatus: phase === 'status',
            ...(phase === 'big' ? { eventsPerChunk: 128, chunkBytes: 4 * 2 ** 20 } : {}),
          })
        ).summary;
  const cpuMs = processCpuMs(pid) - before;
  return { phase, clients, summary, cpuMs, cpuMsPerRequest: cpuMs / Math.max(1, summary.requests) };
}

if (process.argv[1]?.endsWith('ingest-profile.ts')) {
  const args = process.argv.slice(2);
  const arg = (name: string, def: string) => {
    const i = args.indexOf(`--${name}`);
    return i >= 0 && args[i + 1] ? args[i + 1]! : def;
  };
  const phases = arg('phase', 'bare,small').split(',') as Array<'bare' | 'small' | 'status' | 'big'>;
  const clients = Number(arg('clients', '50'));
  const duration = Number(arg('duration', '5'));
  const profile = args.includes('--profile');
  const checkout = arg('checkout', '');
  // --env K=V,K2=V2: more environment for the server (e.g. UV_USE_IO_URING=0, UV_THREADPOOL_SIZE=16)
  const extraEnv = Object.fromEntries(
    arg('env', '')
      .split(',')
      .filter(Boolean)
      .map((kv) => [kv.slice(0, kv.indexOf('=')), kv.slice(kv.indexOf('=') + 1)]),
  );
  const data = mkdtempSync(join(tmpdir(), 'hansard-ingest-prof-'));
  const profDir = join(data, 'prof');
  const srv = await startBenchServer(join(data, 'serve'), ADMIN, {
    env: { HANSARD_RATE_LIMIT: '0', ...extraEnv },
    nodeArgs: profile ? ['--cpu-prof', `--cpu-prof-dir=${profDir}`] : [],
    ...(checkout ? { checkout } : {}),
  });
  try {
    for (const phase of phases) {
      const r = await measurePhase(srv.url, srv.proc.pid!, phase, clients, duration);
      process.stdout.write(
        `${phase} × ${clients}: ${r.summary.rps.toFixed(0)} req/s, ${r.summary.requests} requests, ` +
          `non-2xx ${r.summary.non2xx}, p50 ${r.summary.p50} ms, p99 ${r.summary.p99} ms, ` +
          `${r.summary.chunkMiBps.toFixed(1)} MiB/s; server CPU ${r.cpuMs.toFixed(0)} ms, ` +
          `${(r.cpuMsPerRequest * 1000).toFixed(0)} µs a request\n`,
      );
    }
  } finally {
    await srv.stop();
  }
  if (profile) {
    const file = latestProfile(profDir);
    process.stdout.write(`${selfTimeTable(selfTimes(file, checkout || process.cwd()), 40)}\n`);
    const keep = join(tmpdir(), 'hansard-ingest.cpuprofile');
    copyFileSync(file, keep);
    process.stdout.write(`profile kept as ${keep}\n`);
  }
  rmSync(data, { recursive: true, force: true });
}
