/**
 * `npx tsx bench/s3-compaction.ts`: what compaction (issue 17.2, lib/service/ingest/compaction.ts) does to the
 * replay of a session shipped as hooks ship it, in one run. s3rver and DynamoDB Local on loopback (the
 * emulators of the tests; s3rver is far slower than S3 per request, so the before/after ratio is the
 * figure, not the MB/s). A session of `mb` MB over `writers` writers (bench/gen.ts, each ending with
 * writer.end) goes in through the service's ingest in 1 KB chunks, one object each; then, each in a
 * child process of its own (as bench/s3-replay.ts): the replay function's raw replay
 * (`GET …/replay?raw=1`) and `S3SegmentStore.readSegment` of every writer (1 MiB windows); then one
 * compaction pass (`awsCompactor`, timed, its S3 requests counted); then the same two reads again, whose
 * bytes must be the same. Reports MB/s and GETs per MiB before and after, and the pass's cost.
 * Usage: npx tsx bench/s3-compaction.ts [--mb 2 --writers 4 --quick]
 * (`--quick`: 0.5 MB; prints the figures and leaves docs/benchmarks.md alone)
 */
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { cpus, loadavg, tmpdir, totalmem } from 'node:os';
import { join } from 'node:path';
import { DynamoDBClient } from '@aws-sdk/client-dynamodb';
import { S3Client } from '@aws-sdk/client-s3';
import {
  type ChildResult,
  runChild,
  type S3ReplayWorld,
  startS3ReplayWorld,
  storeSession,
} from '../harness/s3-replay-world.js';
import { awsCompactor } from '../lib/deploy/aws-compaction.js';
import { generateSession } from './gen.js';

/** ~313 bytes an event (bench/gen.ts) */
const BYTES_PER_EVENT = 313;
const mbps = (r: ChildResult) => r.bytes / 2 ** 20 / r.seconds;
const perMib = (r: ChildResult) => r.gets / (r.bytes / 2 ** 20);

export interface CompactionFigures {
  mb: number;
  writers: number;
  chunk_objects: number;
  before: { replay: ChildResult; store: ChildResult };
  after: { replay: ChildResult; store: ChildResult };
  pass: { seconds: number; requests: Record<string, number>; objects_after: number; runs: number };
  section: string;
}

/** Runs the benchmark (see the module doc); writes nothing. @throws Error when bytes differ or a child fails */
export async function runS3Compaction(
  o: { mb?: number; writers?: number; quick?: boolean; log?: (l: string) => void } = {},
): Promise<CompactionFigures> {
  const mb = o.mb ?? (o.quick ? 0.5 : 2);
  const writers = o.writers ?? 4;
  const log = o.log ?? ((l: string) => console.error(l));
  const root = mkdtempSync(join(tmpdir(), 'hansard-bench-compaction-'));
  let world: S3ReplayWorld | null = null;
  try {
    world = await startS3ReplayWorld();
    log(`generating ${mb} MB over ${writers} writers, storing it in 1 KB chunks`);
    const dir = await generateSession(root, Math.round((mb * 2 ** 20) / BYTES_PER_EVENT), writers);
    const s = await storeSession(world, dir, 1024);
    const env = world.env;
    const reads = async () => {
      const replay = await runChild({ mode: 'replay', env, token: world!.token, sid: s.sid });
      const store = await runChild({ mode: 'store', env, segments: s.segments, chunkBytes: 1024 * 1024 });
      if (replay.status !== 200) throw new Error(`replay answered ${replay.status}`);
      return { replay, store };
    };
    const before = await reads();
    log(
      `before: replay ${mbps(before.replay).toFixed(2)} MB/s, ${perMib(before.replay).toFixed(0)} GETs/MiB`,
    );

    const requests: Record<string, number> = {};
    const s3 = new S3Client({
      endpoint: world.s3.endpoint,
      forcePathStyle: true,
      region: env.AWS_REGION!,
      credentials: { accessKeyId: env.AWS_ACCESS_KEY_ID!, secretAccessKey: env.AWS_SECRET_ACCESS_KEY! },
    });
    s3.middlewareStack.add(
      (next, context) => (args) => {
        const name = (context.commandName ?? '?').replace(/Command$/, '');
        requests[name] = (requests[name] ?? 0) + 1;
        return next(args);
      },
      { step: 'initialize', name: 'countRequests' },
    );
    const dynamodb = new DynamoDBClient({
      endpoint: world.dynamo.endpoint,
      region: env.AWS_REGION!,
      credentials: { accessKeyId: env.AWS_ACCESS_KEY_ID!, secretAccessKey: env.AWS_SECRET_ACCESS_KEY! },
    });
    const started = performance.now();
    const result = await awsCompactor({
      clients: { s3, dynamodb },
      bucket: world.bucket,
      table: env.TABLE_NAME!,
    })('acme', s.sid);
    const seconds = (performance.now() - started) / 1000;
    s3.destroy();
    dynamodb.destroy();
    if (result.some((r) => r.outcome !== 'compacted'))
      throw new Error(`compaction: ${JSON.stringify(result)}`);
    log(`compacted in ${seconds.toFixed(1)} s: ${JSON.stringify(requests)}`);

    const after = await reads();
    for (const k of ['replay', 'store'] as const) {
      if (after[k].sha256 !== before[k].sha256 || after[k].bytes !== before[k].bytes) {
        throw new Error(`the ${k} read after compaction differs from the one before`);
      }
    }
    const pass = {
      seconds,
      requests,
      objects_after: result.reduce((n, r) => n + r.objects_after, 0),
      runs: result.reduce((n, r) => n + r.runs, 0),
    };
    const figures = { mb, writers, chunk_objects: s.chunks, before, after, pass };
    return { ...figures, section: section(figures) };
  } finally {
    await world?.close();
    rmSync(root, { recursive: true, force: true });
  }
}

function section(f: Omit<CompactionFigures, 'section'>): string {
  const row = (what: string, b: ChildResult, a: ChildResult) =>
    `| ${what} | ${mbps(b).toFixed(2)} | ${perMib(b).toFixed(0)} | ${mbps(a).toFixed(2)} | ${perMib(a).toFixed(1)} | ${(mbps(a) / mbps(b)).toFixed(0)}× |`;
  const req = Object.entries(f.pass.requests)
    .sort()
    .map(([k, v]) => `${v.toLocaleString('en')} ${k}`)
    .join(', ');
  return `<!-- bench:s3-compaction:start -->
Measured ${new Date().toISOString().slice(0, 16).replace('T', ' ')} UTC on ${cpus()[0]?.model ?? 'unknown CPU'}, ${cpus().length} cores, ${(totalmem() / 2 ** 30).toFixed(0)} GiB, Node ${process.version} (load average ${loadavg()[1]!.toFixed(1)} over the last 5 minutes at the end): \`npx tsx bench/s3-compaction.ts\`, s3rver and DynamoDB Local on loopback, a ${f.mb} MB session of ${f.writers} writers stored through ingest in ${f.chunk_objects.toLocaleString('en')} chunk objects of ~1 KB (as hooks ship them), read before and after one compaction pass, each read in a child process of its own; the bytes after are the bytes before.

| read | before: MB/s | GETs per MiB | after: MB/s | GETs per MiB | faster |
|---|---:|---:|---:|---:|---:|
${row('raw replay (replay function, `GET …/replay?raw=1`)', f.before.replay, f.after.replay)}
${row('`S3SegmentStore.readSegment` of every writer, 1 MiB windows', f.before.store, f.after.store)}

The pass: ${f.pass.seconds.toFixed(1)} s for ${f.chunk_objects.toLocaleString('en')} objects into ${f.pass.runs} runs (${f.pass.objects_after} objects after), S3 requests ${req} (and a DynamoDB Query per 1,000 chunk records). It reads every small object once, at the rate of the "before" reads: compacting is paid once, at the price of one replay of the small objects.
<!-- bench:s3-compaction:end -->`;
}

/** Puts `section` between its markers in docs/benchmarks.md (after "Replay from S3" when not there yet). */
export function writeSection(
  section: string,
  doc = join(import.meta.dirname, '../docs/benchmarks.md'),
): void {
  const before = readFileSync(doc, 'utf8');
  const re = /<!-- bench:s3-compaction:start -->[\s\S]*<!-- bench:s3-compaction:end -->/;
  writeFileSync(
    doc,
    re.test(before)
      ? before.replace(re, section)
      : `${before.trimEnd()}\n\n## Compaction of small chunk objects\n\n${section}\n`,
  );
}

if (process.argv[1]?.endsWith('s3-compaction.ts')) {
  const args = process.argv.slice(2);
  const arg = (name: string) => {
    const i = args.indexOf(`--${name}`);
    return i >= 0 && args[i + 1] ? Number(args[i + 1]) : undefined;
  };
  const quick = args.includes('--quick');
  const f = await runS3Compaction({
    quick,
    ...(arg('mb') !== undefined ? { mb: arg('mb')! } : {}),
    ...(arg('writers') !== undefined ? { writers: arg('writers')! } : {}),
  });
  console.log(f.section);
  if (!quick) writeSection(f.section);
}
