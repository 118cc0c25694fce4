/**
 * Server CPU per request of the ingest workloads (issue 16.3): the steadier figure on a shared machine,
 * where req/s moves with whatever else runs. Starts the built `hansard serve` (bench/ingest-server.ts),
 * optionally under `node --cpu-prof`, runs one phase at a time, and reads the server process's CPU time
 * (utime + stime of /proc/PID/stat, 10 ms ticks) before and after it: CPU ms a request, beside req/s.
 *
 * `npx tsx bench/ingest-profile.ts [--phase bare,authed,refused,small,status,big] [--clients 50] [--duration 5]
 *   [--profile] [--checkout DIR,DIR2] [--rounds N] [--env K=V,…]`: `small` is 5-event chunks (bench:ingest), `status` chunks + status
 * reports (bench:load's mix), `big` 4 MiB chunks; `--profile` prints the top self times (bench/profile.ts);
 * `--checkout A,B --rounds N` runs the builds of those checkouts in turn, N rounds, and prints each one's
 * medians (an A/B on a busy machine; `.` is this checkout). Builds nothing: run `npm run build` first.
 */
import { copyFileSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { startBenchServer } from './ingest-server.js';
import {
  bareRoute,
  chunkFor,
  fixedRequest,
  ingestWorkload,
  newSession,
  type Summary,
} from './ingest-workload.js';
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

/**
 * A phase: `bare` GET /healthz; `authed` a writer's chunk list (auth, routing, two selects); `refused` 5-event
 * chunks refused for want of a writer.start (body, hash, scan, no disk); `small` 5-event chunks; `status`
 * chunks and status reports; `big` 4 MiB chunks.
 */
export type Phase = 'bare' | 'authed' | 'refused' | 'small' | 'status' | 'big';

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
  phase: Phase,
  clients: number,
  duration: number,
): Promise<PhaseCpu> {
  const auth = { authorization: `Bearer ${ADMIN}` };
  let fixed: Parameters<typeof fixedRequest>[3] | null = null;
  if (phase === 'authed') {
    // A writer's chunk list, one chunk a page: authentication, routing, validation, two selects, a JSON
    // answer, and no file (the writer's GET looks at its file).
    const s = newSession();
    const c = chunkFor(s, 5);
    const r = await fetch(`${url}/v1/sessions/${s.sid}/writers/${s.w}/chunks?offset=0`, {
      method: 'POST',
      headers: { ...auth, 'content-type': 'application/x-ndjson' },
      body: c.body,
    });
    if (r.status !== 201) throw new Error(`the writer of the authed phase was not stored: ${r.status}`);
    fixed = { method: 'GET', path: `/v1/sessions/${s.sid}/writers/${s.w}/chunks?limit=1`, headers: auth };
  } else if (phase === 'refused') {
    // A chunk ingest reads, hashes and scans, then refuses (no writer.start): all of a chunk but the disk.
    const s = newSession();
    s.seq = 1;
    fixed = {
      method: 'POST',
      path: `/v1/sessions/${s.sid}/writers/${s.w}/chunks?offset=0`,
      headers: { ...auth, 'content-type': 'application/x-ndjson' },
      body: chunkFor(s, 5).body,
    };
  }
  const before = processCpuMs(pid);
  const summary = fixed
    ? await fixedRequest(url, clients, duration, fixed)
    : phase === 'bare'
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
  const phases = arg('phase', 'bare,small').split(',') as Phase[];
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
  const rounds = Number(arg('rounds', '1'));
  // --checkout A,B: each round runs every checkout in turn (an A/B on a busy machine); '.' is this one.
  const checkouts = (checkout || '.').split(',');
  const results = new Map<string, PhaseCpu[]>();
  let lastProfile: string | null = null;
  for (let round = 0; round < rounds; round++) {
    for (const co of checkouts) {
      const data = mkdtempSync(join(tmpdir(), 'hansard-ingest-prof-'));
      const profDir = join(data, 'prof');
      const srv = await startBenchServer(join(data, 'serve'), ADMIN, {
        env: { HANSARD_RATE_LIMIT: '0', ...extraEnv },
        nodeArgs: profile ? ['--cpu-prof', `--cpu-prof-dir=${profDir}`] : [],
        ...(co !== '.' ? { checkout: co } : {}),
      });
      try {
        for (const phase of phases) {
          const r = await measurePhase(srv.url, srv.proc.pid!, phase, clients, duration);
          const k = `${co} ${phase}`;
          results.set(k, [...(results.get(k) ?? []), r]);
          process.stdout.write(
            `${checkouts.length > 1 ? `${co}: ` : ''}${phase} × ${clients}: ${r.summary.rps.toFixed(0)} req/s, ` +
              `${r.summary.requests} requests, non-2xx ${r.summary.non2xx}, p50 ${r.summary.p50} ms, ` +
              `p99 ${r.summary.p99} ms, ${r.summary.chunkMiBps.toFixed(1)} MiB/s; server CPU ` +
              `${r.cpuMs.toFixed(0)} ms, ${(r.cpuMsPerRequest * 1000).toFixed(0)} µs a request\n`,
          );
        }
      } finally {
        await srv.stop();
      }
      if (profile) {
        lastProfile = join(tmpdir(), 'hansard-ingest.cpuprofile');
        copyFileSync(latestProfile(profDir), lastProfile);
      }
      rmSync(data, { recursive: true, force: true });
    }
  }
  if (rounds > 1) {
    const median = (xs: number[]) => [...xs].sort((x, y) => x - y)[Math.floor(xs.length / 2)]!;
    for (const [k, rs] of results) {
      process.stdout.write(
        `median of ${rs.length}, ${k}: ${median(rs.map((r) => r.summary.rps)).toFixed(0)} req/s, ` +
          `${median(rs.map((r) => r.summary.chunkMiBps)).toFixed(1)} MiB/s, ` +
          `${(median(rs.map((r) => r.cpuMsPerRequest)) * 1000).toFixed(0)} µs server CPU a request\n`,
      );
    }
  }
  if (lastProfile) {
    process.stdout.write(
      `${selfTimeTable(selfTimes(lastProfile, checkouts.at(-1) === '.' ? process.cwd() : checkouts.at(-1)), 40)}\n`,
    );
    process.stdout.write(`profile kept as ${lastProfile}\n`);
  }
}
