/**
 * hcn streams into sessions (seed 002, DESIGN §6, docs/import.md "hcn"): `hansard import hcn FILE` (a
 * saved `hcn run --json` or `hcn-observer/1` stream) and `hansard observe` (an `hcn-observer/1` stream on
 * stdin, for `HCN_OBSERVER`). Both feed lib/importers/hcn.ts's `HcnRecorder`; `hansard run` is in
 * cmd-run.ts. Sessions go to `--out DIR` (default ./sessions); `--upload` then ships them.
 */
import { createReadStream, rmSync } from 'node:fs';
import { resolve } from 'node:path';
import type { Readable } from 'node:stream';
import type { Command } from 'commander';
import { HcnFormatError, HcnRecorder, type HcnRecordResult } from '../../importers/hcn.js';
import { clientFrom, retryNotice } from '../api/config.js';
import { UsageError } from '../api/errors.js';
import { type Io, printJson } from '../api/io.js';
import { describeFsError, uploadSession } from '../api/upload.js';
import { counted, problemWords } from './import-words.js';
import { jsonOption } from './options.js';

/** An `Io` that may carry the stdin to read (tests pass their own; the CLI reads process.stdin). */
export type IoWithStdin = Io & { stdin?: Readable };

/** The flags `observe` and `run` share: where the session goes and whether to ship it. */
export interface RecordFlags {
  out: string;
  user: string;
  upload?: boolean;
  url?: string;
  token?: string;
}

/** Adds `--out`, `--user`, `--upload`, `--url`, `--token` to a recording command. */
export function recordOptions(cmd: Command): Command {
  return cmd
    .option('--out <dir>', 'where to create the session directory', './sessions')
    .option('--user <id>', "the user id for the person's prompt", 'user')
    .option('--upload', 'upload the session when the run ends (as hansard upload does)')
    .option('--url <url>', 'server URL for --upload (env HANSARD_URL)')
    .option('--token <token>', 'token with the ingest scope for --upload (env HANSARD_TOKEN)');
}

/** `hansard import hcn FILE`: a saved hcn stream. */
export function registerImportHcn(imp: Command, io: Io): void {
  imp
    .command('hcn')
    .description('import a saved hcn stream (hcn run --json NDJSON, or an hcn-observer/1 stream)')
    .argument('<stream>', 'the .ndjson file')
    .option('--out <dir>', 'where to create the session directory', './sessions')
    .option('--user <id>', "the user id for the person's prompts", 'user')
    .addOption(jsonOption())
    .action((file: string, o: ImportHcnOptions) => importHcn(file, o, io));
}

/** `hansard observe`: an `hcn-observer/1` stream on stdin (`HCN_OBSERVER`). */
export function registerObserve(program: Command, io: IoWithStdin): void {
  recordOptions(
    program
      .command('observe')
      .description(
        'record an hcn run from its hcn-observer/1 stream on stdin (point HCN_OBSERVER at a script that runs this)',
      ),
  )
    .addOption(jsonOption())
    .addHelpText(
      'after',
      '\nExample observer script (HCN_OBSERVER must be its absolute path; hcn ignores its output and exit code):\n' +
        '  #!/bin/sh\n  exec hansard observe --out "$HOME/hansard-sessions" --upload\n' +
        'A stream that ends without done is recorded as an interrupted run.',
    )
    .action((o: ObserveOptions) => observe(o, io));
}

/**
 * Feeds a byte stream to `recorder` and finishes it. Throws `UsageError` for a source that cannot be read,
 * an `out` folder the session cannot be written to, and a harness's own output (`HcnFormatError`); the
 * recorder's writer is closed on any error.
 */
async function feed(
  recorder: HcnRecorder,
  open: () => AsyncIterable<Buffer | string>,
  name: string,
  out: string,
): Promise<HcnRecordResult | null> {
  let writing = false;
  try {
    for await (const chunk of open()) {
      writing = true;
      recorder.push(typeof chunk === 'string' ? Buffer.from(chunk) : chunk);
      writing = false;
    }
    writing = true;
    return recorder.finish();
  } catch (err) {
    recorder.abort();
    if (err instanceof HcnFormatError) throw new UsageError(`${name}: ${err.message} (nothing was kept)`);
    const code = (err as NodeJS.ErrnoException).code;
    if (['ENOENT', 'EISDIR', 'ENOTDIR', 'EACCES', 'EPERM'].includes(code ?? ''))
      throw new UsageError(
        writing
          ? `cannot write the session under ${out}: ${describeFsError(err)}`
          : `cannot read ${name}: ${describeFsError(err)}`,
      );
    throw err;
  }
}

/** `N turns, N actions, …` for the line a recording command prints. */
export function summary(r: HcnRecordResult): string {
  const c = r.counts;
  return (
    `${counted(c.prompts, 'prompt')}, ${counted(c.turns, 'turn')}, ${counted(c.actions, 'action')}, ${counted(c.results, 'result')}, ${counted(c.outputs, 'output')}, ${counted(c.notes, 'note')}` +
    `${c.compactions ? `, ${counted(c.compactions, 'compaction')}` : ''}${c.coverageGaps ? `, ${counted(c.coverageGaps, 'skipped record')} (coverage gaps)` : ''}` +
    `${r.done ? `; hcn ${r.done.cause} (exit ${r.done.exitCode})` : ''}${r.interrupted ? '; no done: recorded as interrupted' : ''}` +
    problemWords(r.problems)
  );
}

/** Ships a recorded session (`--upload`); the session stays on disk whatever happens. */
export async function upload(
  io: Io,
  dir: string,
  o: RecordFlags,
): Promise<{ sid: string; sent_lines: number }> {
  const r = await uploadSession(dir, { client: clientFrom(o, io.env, retryNotice(io)) });
  return { sid: r.sid, sent_lines: r.segments.reduce((n, s) => n + s.sent_lines, 0) };
}

/** The options of `hansard import hcn`, as commander parses them. */
export interface ImportHcnOptions {
  out: string;
  user: string;
  json?: boolean;
}

/**
 * `hansard import hcn <file>`: records an hcn NDJSON file as a session under `o.out` (lib/importers), and
 * prints what it wrote.
 */
export async function importHcn(file: string, o: ImportHcnOptions, io: Io): Promise<void> {
  const recorder = new HcnRecorder({
    outDir: resolve(io.cwd, o.out),
    app: 'hansard import hcn',
    userId: o.user,
  });
  const result = await feed(recorder, () => createReadStream(resolve(io.cwd, file)), file, o.out);
  if (result === null) throw new UsageError(`${file} is empty: no hcn records (nothing was kept)`);
  if (result.format === 'unknown') {
    rmSync(result.dir, { recursive: true, force: true });
    throw new UsageError(
      `${file} does not look like an hcn stream: its first record has no "kind" (hcn run --json) or "record" (hcn-observer/1) (nothing was kept)`,
    );
  }
  if (o.json) return printJson(io, result);
  io.stdout.write(`${result.dir}\n`);
  io.stderr.write(`imported ${summary(result)}\nnext: hansard upload ${result.dir}\n`);
}

/** The options of `hansard observe`, as commander parses them. */
export interface ObserveOptions extends RecordFlags {
  json?: boolean;
}

/**
 * `hansard observe`: records an hcn observer stream from stdin as a session under `o.out`, and prints what
 * it wrote.
 */
export async function observe(o: ObserveOptions, io: IoWithStdin): Promise<void> {
  const recorder = new HcnRecorder({
    outDir: resolve(io.cwd, o.out),
    app: 'hansard observe',
    userId: o.user,
  });
  const result = await feed(recorder, () => io.stdin ?? process.stdin, 'stdin', o.out);
  if (result === null) throw new UsageError('stdin held no hcn-observer/1 records (nothing was kept)');
  let uploaded: Awaited<ReturnType<typeof upload>> | null = null;
  try {
    if (o.upload) uploaded = await upload(io, result.dir, o);
  } catch (err) {
    io.stderr.write(`hansard: the session stays in ${result.dir}\n`);
    throw err;
  }
  if (o.json) return printJson(io, { ...result, ...(uploaded ? { uploaded } : {}) });
  io.stdout.write(`${result.dir}\n`);
  io.stderr.write(`recorded ${summary(result)}\n`);
}
