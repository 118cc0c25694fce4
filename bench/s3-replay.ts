/**
 * `npx tsx bench/s3-replay.ts`: the raw replay of a session stored on S3 (issue 16.4) against a plain
 * `GetObject` of the same bytes, in the same run. s3rver and DynamoDB Local on loopback (the emulators of
 * the tests; s3rver is far slower than S3 per request and serves the requests of one key one at a time,
 * so the ratio is the figure, not the MB/s). A session of `mb` MB over `writers` writers (bench/gen.ts)
 * goes in through the service's ingest in chunks of at most `chunkMiB` and 10,000 lines; each writer's
 * segment is also put whole as one object. Then, alternately, `rounds` times each, each in a child
 * process of its own (the replay function's handler bundled as the stack bundles it):
 * - replay: the replay function answers `GET …/replay?raw=1` (function URL event, streamed response
 *   hashed and dropped);
 * - getobject: one `GetObject` per writer's whole object, all at once, each body hashed as it streams.
 * Reports MB/s (median), the ratio replay / getobject, each one's peak RSS, and GETs per MB.
 * `--small` adds a session of 1 KB chunk objects (the request-count cost: one GET per object).
 * Usage: npx tsx bench/s3-replay.ts [--mb 200 --writers 4 --chunk-mib 4 --rounds 3 --small 2 --quick]
 * (`--quick`: 16 MB, 1 round, small 0.5 MB; prints the figures and leaves docs/benchmarks.md alone)
 */
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { cpus, tmpdir, totalmem } from 'node:os';
import { join } from 'node:path';
import {
  type ChildResult,
  runChild,
  type S3ReplayWorld,
  startS3ReplayWorld,
  storeSession,
} from '../harness/s3-replay-world.js';
import { segmentBlockBytes } from '../lib/log/read/segment-blocks.js';
import { generateSession } from './gen.js';

/** functions/app.ts's default for the replay function (REPLAY_READ_BYTES unset). */
const REPLAY_FUNCTION_READ_BYTES = 16 * 1024 * 1024;

export interface S3ReplayOptions {
  /** session size, MB (default 200) */
  mb?: number;
  writers?: number;
  /** chunk objects of at most this many MiB (default 4) */
  chunkMiB?: number;
  rounds?: number;
  /** MB of a second session stored in 1 KB chunks (0: none; default 2) */
  smallMb?: number;
  /** 16 MB, one round, 0.5 MB of small chunks */
  quick?: boolean;
  /** progress lines (default console.error) */
  log?: (line: string) => void;
}

export interface S3ReplayFigures {
  mb: number;
  writers: number;
  chunk_mib: number;
  chunk_objects: number;
  rounds: number;
  replay: ChildResult[];
  getobject: ChildResult[];
  /** `S3SegmentStore.readSegment` of every writer at once, no merge, per window (chunkBytes) */
  store: Array<{ window: number; runs: ChildResult[] }>;
  /** median replay MB/s over median getobject MB/s */
  ratio: number;
  small: { mb: number; chunk_objects: number; replay: ChildResult; getobject: ChildResult } | null;
  /** the markdown section for docs/benchmarks.md */
  section: string;
}

/** The windows (`chunkBytes`) of the store-only reads: the replay function's raw replay of 4 writers asks 1 MiB. */
const WINDOWS = [64 * 1024, 1024 * 1024, 8 * 1024 * 1024];
/** ~313 bytes an event (bench/gen.ts) */
const BYTES_PER_EVENT = 313;
const mbps = (r: ChildResult) => r.bytes / 2 ** 20 / r.seconds;
const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!;

/**
 * Runs the benchmark (see the module doc) and returns its figures with the markdown section; writes
 * nothing. @throws Error when a replay's bytes differ from the writers' (count) or a child fails
 */
export async function runS3Replay(opts: S3ReplayOptions = {}): Promise<S3ReplayFigures> {
  const quick = opts.quick ?? false;
  const mb = opts.mb ?? (quick ? 16 : 200);
  const writers = opts.writers ?? 4;
  const chunkMiB = opts.chunkMiB ?? 4;
  const rounds = opts.rounds ?? (quick ? 1 : 3);
  const smallMb = opts.smallMb ?? (quick ? 0.5 : 2);
  const log = opts.log ?? ((l: string) => console.error(l));
  const root = mkdtempSync(join(tmpdir(), 'hansard-bench-s3-'));
  let world: S3ReplayWorld | null = null;
  try {
    world = await startS3ReplayWorld();
    log(`generating ${mb} MB over ${writers} writers`);
    const dir = await generateSession(root, Math.round((mb * 2 ** 20) / BYTES_PER_EVENT), writers);
    log('storing it through ingest');
    const big = await storeSession(world, dir, chunkMiB * 2 ** 20);
    const replay: ChildResult[] = [];
    const getobject: ChildResult[] = [];
    const store = WINDOWS.map((window) => ({ window, runs: [] as ChildResult[] }));
    const total = big.plain.reduce((n, p) => n + p.size, 0);
    for (let i = 0; i < rounds; i++) {
      const r = await runChild({ mode: 'replay', env: world.env, token: world.token, sid: big.sid });
      if (r.status !== 200 || r.bytes !== total)
        throw new Error(`replay gave ${r.status}, ${r.bytes} of ${total} bytes`);
      replay.push(r);
      const g = await runChild({ mode: 'getobject', env: world.env, keys: big.plain.map((p) => p.key) });
      getobject.push(g);
      for (const s of store) {
        const job = { mode: 'store' as const, env: world.env, segments: big.segments, chunkBytes: s.window };
        const got = await runChild(job);
        if (got.bytes !== total) throw new Error(`store read gave ${got.bytes} of ${total} bytes`);
        s.runs.push(got);
      }
      log(
        `round ${i + 1}: replay ${mbps(r).toFixed(1)} MB/s, getobject ${mbps(g).toFixed(1)} MB/s, store ${store.map((s) => mbps(s.runs.at(-1)!).toFixed(1)).join('/')} MB/s`,
      );
    }
    let small: S3ReplayFigures['small'] = null;
    if (smallMb > 0) {
      log(`generating ${smallMb} MB stored in 1 KB chunks`);
      const sdir = await generateSession(root, Math.round((smallMb * 2 ** 20) / BYTES_PER_EVENT), writers);
      const s = await storeSession(world, sdir, 1024);
      const r = await runChild({ mode: 'replay', env: world.env, token: world.token, sid: s.sid });
      const g = await runChild({ mode: 'getobject', env: world.env, keys: s.plain.map((p) => p.key) });
      small = { mb: smallMb, chunk_objects: s.chunks, replay: r, getobject: g };
    }
    const ratio = median(replay.map(mbps)) / median(getobject.map(mbps));
    const figures = {
      mb,
      writers,
      chunk_mib: chunkMiB,
      chunk_objects: big.chunks,
      rounds,
      replay,
      getobject,
      store,
      ratio,
      small,
    };
    return { ...figures, section: section(figures) };
  } finally {
    await world?.close();
    rmSync(root, { recursive: true, force: true });
  }
}

function section(f: Omit<S3ReplayFigures, 'section'>): string {
  const fmt = (rs: ChildResult[], g: (r: ChildResult) => number, d = 1) =>
    rs.map((r) => g(r).toFixed(d)).join(', ');
  const rss = (rs: ChildResult[]) => Math.max(...rs.map((r) => r.max_rss_mb)).toFixed(0);
  const perMb = (r: ChildResult) => (r.gets / (r.bytes / 2 ** 20)).toFixed(1);
  const rows = [
    `| raw replay (replay function, \`GET …/replay?raw=1\`) | ${median(f.replay.map(mbps)).toFixed(1)} (${fmt(f.replay, mbps)}) | ${rss(f.replay)} | ${perMb(f.replay[0]!)} |`,
    `| \`GetObject\` of each writer's whole segment, all at once | ${median(f.getobject.map(mbps)).toFixed(1)} (${fmt(f.getobject, mbps)}) | ${rss(f.getobject)} | ${perMb(f.getobject[0]!)} |`,
  ];
  const base = median(f.getobject.map(mbps));
  for (const s of f.store) {
    const m = median(s.runs.map(mbps));
    rows.push(
      `| \`S3SegmentStore.readSegment\` of every writer at once, window ${s.window / 1024} KiB, no merge | ${m.toFixed(1)} (${fmt(s.runs, mbps)}) | ${rss(s.runs)} | ${perMb(s.runs[0]!)} |`,
    );
  }
  const storeRatios = f.store
    .map((s) => `${s.window / 1024} KiB ${(median(s.runs.map(mbps)) / base).toFixed(2)}`)
    .join(', ');
  const small = f.small
    ? `\n\nThe same for ${f.small.mb} MB in 1 KB chunk objects (${f.small.chunk_objects} objects; a ranged GET cannot span objects, so one GET each): replay ${mbps(f.small.replay).toFixed(2)} MB/s with ${perMb(f.small.replay)} GETs per MiB, peak RSS ${f.small.replay.max_rss_mb.toFixed(0)} MB; \`GetObject\` of the whole segments ${mbps(f.small.getobject).toFixed(1)} MB/s.`
    : '';
  return `<!-- bench:s3-replay:start -->
Measured ${new Date().toISOString().slice(0, 16).replace('T', ' ')} UTC on ${cpus()[0]?.model ?? 'unknown CPU'}, ${cpus().length} cores, ${(totalmem() / 2 ** 30).toFixed(0)} GiB, Node ${process.version}: \`npx tsx bench/s3-replay.ts\`, s3rver and DynamoDB Local on loopback, a ${f.mb} MB session of ${f.writers} writers stored through ingest in ${f.chunk_objects} chunk objects (at most ${f.chunk_mib} MiB and 10,000 lines each), ${f.rounds} rounds alternating, each read in a child process of its own.

| read | MB/s, median (each round) | peak RSS, MB | GETs per MiB |
|---|---:|---:|---:|
${rows.join('\n')}

Replay / \`GetObject\`: **${f.ratio.toFixed(2)}** (the replay function reads ${(segmentBlockBytes(f.writers, REPLAY_FUNCTION_READ_BYTES) / 1024).toFixed(0)} KiB windows for ${f.writers} writers: 16 MiB ahead per response, REPLAY_READ_BYTES, spread over the writers and at most 1 MiB each). Store reads alone / \`GetObject\`: ${storeRatios}.${small}
<!-- bench:s3-replay:end -->`;
}

/** Puts `section` between its markers in docs/benchmarks.md (appended when they are not there yet). */
export function writeSection(
  section: string,
  doc = join(import.meta.dirname, '../docs/benchmarks.md'),
): void {
  const before = readFileSync(doc, 'utf8');
  const re = /<!-- bench:s3-replay:start -->[\s\S]*<!-- bench:s3-replay:end -->/;
  writeFileSync(
    doc,
    re.test(before)
      ? before.replace(re, section)
      : `${before.trimEnd()}\n\n## Replay from S3\n\n${section}\n`,
  );
}

if (process.argv[1]?.endsWith('s3-replay.ts')) {
  const args = process.argv.slice(2);
  const arg = (name: string) => {
    const i = args.indexOf(`--${name}`);
    return i >= 0 && args[i + 1] ? Number(args[i + 1]) : undefined;
  };
  const quick = args.includes('--quick');
  const f = await runS3Replay({
    quick,
    ...(arg('mb') !== undefined ? { mb: arg('mb')! } : {}),
    ...(arg('writers') !== undefined ? { writers: arg('writers')! } : {}),
    ...(arg('chunk-mib') !== undefined ? { chunkMiB: arg('chunk-mib')! } : {}),
    ...(arg('rounds') !== undefined ? { rounds: arg('rounds')! } : {}),
    ...(arg('small') !== undefined ? { smallMb: arg('small')! } : {}),
  });
  console.log(f.section);
  if (!quick) writeSection(f.section);
}
