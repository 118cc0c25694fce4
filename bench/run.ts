/**
 * `npm run bench` (issue 16): replay against the parse-only pass, as sessions grow in events and in
 * writers, with ingest and S3 replay from their own benches when present. Every mode runs in its own
 * process (bench/replay-bench.ts) over sessions from bench/gen.ts, and every figure has its baseline from
 * the same run. Writes the tables, the machine and the date to docs/benchmarks.md between the
 * `bench:merge` markers (not with --quick unless --write).
 *
 * Usage: npm run bench [-- OPTIONS]
 *   --quick              small sizes (10k, 20k events; 20k for the writers), one counted run per mode,
 *                        under a minute on a quiet machine; prints the tables, writes nothing
 *   --write              write docs/benchmarks.md even with --quick
 *   --runs N             timed runs per mode after the counted one (default 3; the median is kept)
 *   --events A,B,…       sizes of the events table (default 10000,100000,1000000,10000000), at 64 writers
 *   --writers A,B,…      writer counts of the writers table (default 1,8,64,512,2000)
 *   --writers-events N   events of each session of the writers table (default 1000000)
 *   --nofile N           open-files limit for writer counts above it (default 1024)
 *   --timeout S          kill a run after S seconds (default 1200)
 *   --bin PATH           the hansard command to measure (default bin/hansard, which runs dist/cli.js)
 *   --skip A,B           leave out the ingest, S3 replay and/or search benches (`--skip ingest,s3,search`)
 *   --search-sessions N  sessions of the search bench's corpus (default 100, 20 with --quick; its own
 *                        `npm run bench:search` runs the issue's 1,000, about 1 M events)
 *   --s3-mb N            size of the S3 replay bench's session (default 200 MB; 8 with --quick)
 *   --profile MODE       instead: one run of MODE (parse|raw|merged|text) under --cpu-prof and its top
 *                        functions by self time (--profile-events N, default 1000000; --profile-writers W, 64)
 */
import { execFileSync } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { cpus, tmpdir, totalmem } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { type BenchSession, generateBenchSession } from './gen.js';
import { latestProfile, selfTimes, selfTimeTable } from './profile.js';
import { benchSession, buildModes, MODES, type Mode, type ModeStat, runMode } from './replay-bench.js';
import { searchSection } from './search.js';
import {
  eventsTable,
  ingestSection,
  type OtherSection,
  s3Section,
  upsertSection,
  writersTable,
} from './tables.js';

const args = process.argv.slice(2);
const flag = (name: string) => args.includes(`--${name}`);
const opt = (name: string, def: string) => {
  const i = args.indexOf(`--${name}`);
  return i >= 0 && args[i + 1] ? args[i + 1]! : def;
};
const list = (s: string) => s.split(',').map((x) => Number(x.replaceAll('_', '')));
const quick = flag('quick');
const runs = Number(opt('runs', quick ? '0' : '3'));
const eventSizes = list(opt('events', quick ? '10000,20000' : '10000,100000,1000000,10000000'));
const writerCounts = list(opt('writers', '1,8,64,512,2000'));
const writersEvents = Number(opt('writers-events', quick ? '20000' : '1000000'));
const nofile = Number(opt('nofile', '1024'));
const timeoutS = Number(opt('timeout', quick ? '120' : '1200'));
const WRITERS = 64;
const started = Date.now();
const log = (line: string) => process.stderr.write(`${line}\n`);

const bin = resolve(opt('bin', 'bin/hansard'));
const distCli = join(dirname(bin), '../dist/cli.js');
if (!existsSync(distCli)) throw new Error(`${distCli} is missing: run \`npm run build\` first`);
await buildModes();
const root = mkdtempSync(join(tmpdir(), 'hansard-bench-'));
process.on('exit', () => rmSync(root, { recursive: true, force: true }));
process.on('SIGINT', () => process.exit(130));

/** Free bytes where the sessions are written (`df -Pk`). */
function freeBytes(): number {
  const out = execFileSync('df', ['-Pk', root], { encoding: 'utf8' }).trim().split('\n').at(-1)!;
  return Number(out.split(/\s+/)[3]) * 1024;
}
let bytesPerEvent = 330;

/** Generates a session unless the disk is short (then says why and returns the reason). */
function generate(events: number, writers: number): BenchSession | string {
  const need = events * bytesPerEvent * 1.05 + 2 ** 30;
  const free = freeBytes();
  if (free < need) {
    const why = `skipped: ${(free / 1e9).toFixed(1)} GB free in ${root}, ${(need / 1e9).toFixed(1)} GB needed`;
    log(`${events} events × ${writers} writers ${why}`);
    return why;
  }
  const t = Date.now();
  const s = generateBenchSession(root, { events, writers });
  bytesPerEvent = Math.max(bytesPerEvent, s.bytes / s.events);
  log(
    `generated ${events.toLocaleString('en')} events × ${writers} writers: ${(s.bytes / 1e6).toFixed(0)} MB, ` +
      `${s.corrections} corrections (${s.targetsAfter} aimed after), ${s.quarantined} quarantined, ${((Date.now() - t) / 1000).toFixed(1)} s`,
  );
  return s;
}

if (flag('profile')) {
  const mode = opt('profile', 'merged') as Mode;
  if (!MODES.includes(mode)) throw new Error(`--profile takes one of ${MODES.join(', ')}`);
  const s = generate(Number(opt('profile-events', '1000000')), Number(opt('profile-writers', '64')));
  if (typeof s === 'string') throw new Error(s);
  const dir = join(root, 'prof');
  const r = await runMode(mode, s.dir, {
    bin,
    nodeFlags: ['--cpu-prof', `--cpu-prof-dir=${dir}`],
    timeoutS,
  });
  if (!r.ok) throw new Error(`${mode} failed: ${r.error}`);
  const file = latestProfile(dir);
  const keep = join(tmpdir(), `hansard-bench-${mode}-${s.events}.cpuprofile`);
  writeFileSync(keep, readFileSync(file));
  process.stdout.write(
    `${mode}, ${s.events.toLocaleString('en')} events × ${s.writers} writers: ${r.seconds.toFixed(2)} s under the profiler ` +
      `(${keep}, opens in Chrome DevTools)\n\n${selfTimeTable(selfTimes(file))}\n`,
  );
  process.exit(0);
}

type Cell = Record<Mode, ModeStat> | string;
const cells = new Map<string, { s?: BenchSession; stats: Cell }>();
async function measure(events: number, writers: number): Promise<{ s?: BenchSession; stats: Cell }> {
  const key = `${events}x${writers}`;
  const had = cells.get(key);
  if (had) return had;
  const s = generate(events, writers);
  let cell: { s?: BenchSession; stats: Cell };
  if (typeof s === 'string') cell = { stats: s };
  else {
    const limit = writers > nofile ? nofile : undefined;
    cell = { s, stats: await benchSession(s, { bin, runs, timeoutS, nofile: limit, log }) };
    rmSync(s.dir, { recursive: true, force: true });
  }
  cells.set(key, cell);
  return cell;
}

const byEvents: { events: number; s?: BenchSession; stats: Cell }[] = [];
for (const n of eventSizes) byEvents.push({ events: n, ...(await measure(n, WRITERS)) });
const byWriters: { writers: number; s?: BenchSession; stats: Cell }[] = [];
for (const w of writerCounts) byWriters.push({ writers: w, ...(await measure(writersEvents, w)) });

/** Median wall time of `argv` run `n` times, s: the fixed cost of starting Node, and the CLI, in every row. */
function startSeconds(argv: string[], n: number): number {
  const xs: number[] = [];
  for (let i = 0; i < n; i++) {
    const t = process.hrtime.bigint();
    execFileSync(process.execPath, argv, { stdio: 'ignore' });
    xs.push(Number(process.hrtime.bigint() - t) / 1e9);
  }
  return xs.sort((a, b) => a - b)[Math.floor(n / 2)]!;
}
const startNode = startSeconds(['-e', '0'], quick ? 3 : 5);
const startCli = startSeconds([bin, '--version'], quick ? 3 : 5);

const skip = new Set(opt('skip', '').split(',').filter(Boolean));
const notRun = (what: string): OtherSection => ({ inline: `Not measured in this run (\`--skip ${what}\`).` });
const ingest = skip.has('ingest') ? notRun('ingest') : await ingestSection(quick, log);
const s3 = skip.has('s3')
  ? notRun('s3')
  : await s3Section(quick, log, Number(opt('s3-mb', '0')) || undefined);
const search = skip.has('search')
  ? notRun('search')
  : await searchSection(quick, log, Number(opt('search-sessions', '0')) || undefined);

const minutes = (Date.now() - started) / 60000;
const lineBytes = () => {
  const s = byEvents.findLast((r) => r.s)?.s;
  return s ? (s.bytes / s.events).toFixed(0) : '?';
};
const cpu = cpus()[0]?.model ?? 'unknown CPU';
// the command as run, less a --bin path (a test's build)
const shownArgs = args.filter((a, i) => a !== '--bin' && args[i - 1] !== '--bin');
const section = `<!-- bench:merge:start -->
Measured ${new Date().toISOString().slice(0, 16).replace('T', ' ')} UTC on ${cpu}, ${cpus().length} cores, ${(totalmem() / 2 ** 30).toFixed(0)} GiB, Node ${process.version}: \`npm run bench${shownArgs.length ? ` -- ${shownArgs.join(' ')}` : ''}\`, which took ${minutes.toFixed(1)} min. ${
  runs > 0
    ? `Each mode ran once with its output counted, then ${runs} ${runs === 1 ? 'time' : 'times'} with its output on /dev/null, modes interleaved; the median is kept, and the peak RSS is the largest of the timed runs.`
    : 'Each mode ran once, its output piped to the bench and counted (a check, not a measurement).'
} Starting a process is in every row: \`node -e 0\` took ${startNode.toFixed(3)} s and \`hansard --version\` ${startCli.toFixed(3)} s (medians), which is most of a 10k-event row. Sessions of ~${lineBytes()} bytes an event at ${WRITERS} writers (more with more writers: each writer's first line names it), 1% corrections (half aimed at a message merged after them), a few quarantined lines.

### Replay as sessions grow (${WRITERS} writers)

${eventsTable(byEvents)}

### Replay as writers grow (${writersEvents.toLocaleString('en')} events)

${writersTable(byWriters, nofile)}

### Ingest against concurrent clients

${ingest.inline}

### Replay from S3

${s3.inline}

### Search

${search.inline}
<!-- bench:merge:end -->`;

process.stdout.write(`${section}\n`);
for (const o of [ingest.own, s3.own, search.own]) if (o) process.stdout.write(`\n${o.section}\n`);
if (!quick || flag('write')) {
  const doc = 'docs/benchmarks.md';
  let text = upsertSection(readFileSync(doc, 'utf8'), 'Replay at the parse limit', section);
  for (const o of [ingest.own, s3.own, search.own]) if (o) text = upsertSection(text, o.title, o.section);
  writeFileSync(doc, text);
  log(`wrote ${doc}`);
}
const failed = [...cells.values()].some(
  (c) => typeof c.stats !== 'string' && Object.values(c.stats).some((m) => !m.ok),
);
if (failed) {
  log('some runs FAILED (see the tables)');
  process.exitCode = 1;
}
