/**
 * The replay modes of `npm run bench` (issue 16), each run as its own process, timed from spawn to exit
 * and checked against what the session holds: a mode that read fewer lines than were written, or a merge
 * that applied fewer corrections, is a failed run, never a fast one.
 *
 * Modes (seconds are wall time of the whole process, Node's start and the CLI's loading included, as
 * `time hansard replay …` measures them):
 * - `parse`: the baseline, bench/mode.ts: read each file whole, JSON.parse every line;
 * - `raw`: `node bin/hansard replay DIR --raw --format ndjson > /dev/null` (the issue's command);
 * - `merged`: `node bin/hansard replay DIR --format ndjson > /dev/null`, corrections applied;
 * - `text`: `node bin/hansard replay DIR --format text > /dev/null`.
 */
import { spawn } from 'node:child_process';
import { closeSync, existsSync, mkdtempSync, openSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { build } from 'esbuild';
import type { BenchSession } from './gen.js';

export const MODES = ['parse', 'raw', 'merged', 'text'] as const;
export type Mode = (typeof MODES)[number];

/** One process run of one mode. `ok: false` says why in `error`; its figures are then not to be used. */
export interface ModeRun {
  mode: Mode;
  ok: boolean;
  error?: string;
  /** wall time, spawn to exit, s */
  seconds: number;
  /** the process's own time from its start to its exit (Node's bootstrap excluded), s */
  uptime_s: number;
  /** user + system CPU time of the process, s (NaN when it wrote no probe) */
  cpu_s: number;
  /** peak RSS of the process, MB (10^6 bytes): VmHWM where there is one, else getrusage maxRSS */
  rss_mb: number;
  /** lines the mode read (parse) or wrote (replays); only counted runs and `parse` */
  lines?: number;
  /** corrected events the merged and text replays marked; only counted runs */
  corrected?: number;
  /** the open-files limit the process ran under */
  nofile?: string | null;
}

export interface RunOptions {
  /** path of bin/hansard (default: this checkout's) */
  bin?: string;
  /** pipe stdout to this process and count its lines and correction marks (else /dev/null) */
  count?: boolean;
  /** run under this open-files limit (soft and hard), via `sh -c 'ulimit -n N'` */
  nofile?: number;
  /** kill the run after this many seconds and report it failed (default 1200) */
  timeoutS?: number;
  /** extra Node flags, e.g. --cpu-prof */
  nodeFlags?: string[];
}

const ROOT = resolve(import.meta.dirname, '..');
const BUILD = join(ROOT, 'bench/.build');

/**
 * Bundles bench/mode.ts and bench/probe.ts into bench/.build/ (plain Node runs them, as it runs the built
 * CLI, not tsx's loader). Call once before `runMode`.
 */
export async function buildModes(): Promise<void> {
  await build({
    entryPoints: { mode: join(ROOT, 'bench/mode.ts'), probe: join(ROOT, 'bench/probe.ts') },
    outdir: BUILD,
    outExtension: { '.js': '.mjs' },
    bundle: true,
    platform: 'node',
    format: 'esm',
    target: 'node20',
    packages: 'external',
    logLevel: 'warning',
  });
}

function argv(mode: Mode, dir: string, bin: string): string[] {
  switch (mode) {
    case 'parse':
      return [join(BUILD, 'mode.mjs'), 'parse', dir];
    case 'raw':
      return [bin, 'replay', dir, '--raw', '--format', 'ndjson'];
    case 'merged':
      return [bin, 'replay', dir, '--format', 'ndjson'];
    case 'text':
      return [bin, 'replay', dir, '--format', 'text'];
  }
}

const MARKS: Partial<Record<Mode, Buffer>> = {
  merged: Buffer.from('"corrected":['),
  text: Buffer.from(' [corrected: '),
};

/** Counts newlines and occurrences of `mark` in a stream of chunks (a mark may straddle two chunks). */
class Counter {
  lines = 0;
  marks = 0;
  private tail = Buffer.alloc(0);
  constructor(private readonly mark?: Buffer) {}
  push(chunk: Buffer): void {
    for (let p = chunk.indexOf(10); p !== -1; p = chunk.indexOf(10, p + 1)) this.lines++;
    if (!this.mark) return;
    const buf = this.tail.length ? Buffer.concat([this.tail, chunk]) : chunk;
    for (let p = buf.indexOf(this.mark); p !== -1; p = buf.indexOf(this.mark, p + this.mark.length)) {
      this.marks++;
    }
    // keep what could be the start of a mark cut at the chunk's end, and nothing already counted
    this.tail = Buffer.from(buf.subarray(Math.max(0, buf.length - this.mark.length + 1)));
  }
}

/**
 * Runs `mode` over `dir` once in a new process (with bench/.build/probe.mjs preloaded for its peak RSS).
 * Never throws for the run's own failure (exit code, signal, timeout): it is in the result.
 */
export async function runMode(mode: Mode, dir: string, o: RunOptions = {}): Promise<ModeRun> {
  const tmp = mkdtempSync(join(tmpdir(), 'hansard-probe-'));
  const probeFile = join(tmp, 'probe.json');
  const node = [
    ...(o.nodeFlags ?? []),
    '--import',
    join(BUILD, 'probe.mjs'),
    ...argv(mode, dir, o.bin ?? join(ROOT, 'bin/hansard')),
  ];
  const [cmd, args] =
    o.nofile === undefined
      ? [process.execPath, node]
      : ['sh', ['-c', 'ulimit -n "$0" && exec "$@"', String(o.nofile), process.execPath, ...node]];
  const piped = o.count === true || mode === 'parse';
  const devnull = piped ? -1 : openSync('/dev/null', 'w');
  const counter = new Counter(MARKS[mode]);
  let out = '';
  let stderr = '';
  const t0 = process.hrtime.bigint();
  const child = spawn(cmd, args, {
    cwd: ROOT,
    stdio: ['ignore', piped ? 'pipe' : devnull, 'pipe'],
    env: { ...process.env, HANSARD_BENCH_PROBE: probeFile },
  });
  child.stdout?.on('data', (b: Buffer) => {
    if (mode === 'parse') out += b.toString();
    else counter.push(b);
  });
  child.stderr?.on('data', (b: Buffer) => {
    if (stderr.length < 4000) stderr += b.toString();
  });
  let timedOut = false;
  const timer = setTimeout(
    () => {
      timedOut = true;
      child.kill('SIGKILL');
    },
    (o.timeoutS ?? 1200) * 1000,
  );
  const [code, signal] = await new Promise<[number | null, NodeJS.Signals | null]>((res) =>
    child.on('close', (c, s) => res([c, s])),
  );
  const seconds = Number(process.hrtime.bigint() - t0) / 1e9;
  clearTimeout(timer);
  if (devnull >= 0) closeSync(devnull);
  const probe = existsSync(probeFile)
    ? (JSON.parse(readFileSync(probeFile, 'utf8')) as {
        max_rss_kb: number;
        vm_hwm_kb: number;
        uptime_s: number;
        cpu_s?: number;
        nofile: string | null;
      })
    : undefined;
  rmSync(tmp, { recursive: true, force: true });
  const run: ModeRun = {
    mode,
    ok: code === 0 && !timedOut,
    seconds,
    uptime_s: probe?.uptime_s ?? Number.NaN,
    cpu_s: probe?.cpu_s ?? Number.NaN,
    rss_mb: probe
      ? (Number.isFinite(probe.vm_hwm_kb) ? probe.vm_hwm_kb : probe.max_rss_kb) / 1000
      : Number.NaN,
    nofile: probe?.nofile,
  };
  if (!run.ok) {
    // the first line says what went wrong (EMFILE, a usage error); session paths are the bench's own
    const first = (stderr.trim().split('\n')[0] ?? '').replaceAll(dir, 'DIR').slice(0, 160);
    run.error = timedOut ? `timed out after ${o.timeoutS ?? 1200} s` : `exit ${code ?? signal}: ${first}`;
  } else if (mode === 'parse') {
    run.lines = (JSON.parse(out.trim().split('\n').at(-1)!) as { lines: number }).lines;
  } else if (piped) {
    run.lines = counter.lines;
    if (MARKS[mode]) run.corrected = counter.marks;
  }
  return run;
}

/**
 * What a mode must have read or written of `s`, as the check of `checkRun`: every line for `parse` and
 * `raw` (quarantined ones included), every event for `merged` and `text` (quarantined lines skipped), with
 * each corrected message marked once.
 */
export function expected(mode: Mode, s: BenchSession): { lines: number; corrected?: number } {
  if (mode === 'parse' || mode === 'raw') return { lines: s.events + s.quarantined };
  return { lines: s.events, corrected: s.correctedTargets };
}

/** Marks `run` failed when its counts differ from what the session holds (counted runs and `parse`). */
export function checkRun(run: ModeRun, s: BenchSession): ModeRun {
  if (!run.ok || run.lines === undefined) return run;
  const want = expected(run.mode, s);
  const bad: string[] = [];
  if (run.lines !== want.lines) bad.push(`${run.lines} lines, ${want.lines} expected`);
  if (want.corrected !== undefined && run.corrected !== undefined && run.corrected !== want.corrected) {
    bad.push(`${run.corrected} corrected events, ${want.corrected} expected`);
  }
  if (bad.length) return { ...run, ok: false, error: `count mismatch: ${bad.join('; ')}` };
  return run;
}

/** The median of the successful runs' figures, and the peak RSS of all of them. */
export interface ModeStat {
  mode: Mode;
  runs: ModeRun[];
  ok: boolean;
  error?: string;
  seconds: number;
  /** median CPU time of the runs, s */
  cpu_s: number;
  rss_mb: number;
  nofile?: string | null;
}

const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!;

export function summarize(mode: Mode, runs: ModeRun[]): ModeStat {
  const failed = runs.find((r) => !r.ok);
  return {
    mode,
    runs,
    ok: !failed && runs.length > 0,
    error: failed?.error,
    seconds: failed ? Number.NaN : median(runs.map((r) => r.seconds)),
    cpu_s: failed ? Number.NaN : median(runs.map((r) => r.cpu_s)),
    rss_mb: Math.max(...runs.map((r) => (Number.isFinite(r.rss_mb) ? r.rss_mb : 0))),
    nofile: runs[0]?.nofile,
  };
}

/**
 * All modes over one session: one counted run of each (stdout piped, checked with `checkRun`), then
 * `runs` timed runs with stdout on /dev/null, the modes interleaved so a busy moment hits all of them
 * alike. With `runs` 0 the counted run is the timed one (the quick check). A mode whose counted run failed
 * is not timed.
 */
export async function benchSession(
  s: BenchSession,
  o: RunOptions & { runs: number; log?: (line: string) => void },
): Promise<Record<Mode, ModeStat>> {
  const log = o.log ?? (() => {});
  const counted = {} as Record<Mode, ModeRun>;
  for (const mode of MODES) {
    counted[mode] = checkRun(await runMode(mode, s.dir, { ...o, count: true }), s);
    const r = counted[mode];
    log(
      `  ${mode} counted: ${r.ok ? `${r.seconds.toFixed(3)} s, ${r.rss_mb.toFixed(0)} MB, ${r.lines} lines` : `FAILED ${r.error}`}`,
    );
  }
  const timed = Object.fromEntries(MODES.map((m) => [m, [] as ModeRun[]])) as Record<Mode, ModeRun[]>;
  for (let i = 0; i < o.runs; i++) {
    for (const mode of MODES) {
      if (!counted[mode].ok) continue;
      const r = checkRun(await runMode(mode, s.dir, { ...o, count: false }), s);
      timed[mode].push(r);
      log(
        `  ${mode} run ${i + 1}: ${r.ok ? `${r.seconds.toFixed(3)} s, ${r.rss_mb.toFixed(0)} MB` : `FAILED ${r.error}`}`,
      );
    }
  }
  return Object.fromEntries(
    MODES.map((m) => [m, summarize(m, counted[m].ok && o.runs > 0 ? timed[m] : [counted[m]])]),
  ) as Record<Mode, ModeStat>;
}
