/**
 * `hansard export SID --out FILE [--force] [--url] [--replay-url] [--token] [--json]` (issue 15.3,
 * docs/audit.md): downloads the session's audit bundle (`GET /v1/sessions/{sid}/export`: segments, signed
 * digests, public keys, manifest) to FILE, gzip-compressed when FILE ends in .gz or .tgz. An existing
 * FILE is kept (exit 2) unless --force: auditors keep earlier bundles (docs/audit.md). With a replay
 * URL (AWS: the API buffers answers, so a bundle over a few MB fails there) it asks the API to sign a
 * digest (`POST …/digests`) and downloads `…/export?head={seq}` from the replay URL, which streams up to
 * 200 MB. The bytes go to FILE.partial, renamed to FILE only once the whole bundle arrived, so an
 * interrupted download never leaves a file that looks complete.
 */
import { createWriteStream, statSync } from 'node:fs';
import { link, open, rename, rm, unlink } from 'node:fs/promises';
import { dirname, resolve } from 'node:path';
import { Readable, Transform, type Writable } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import { createGzip } from 'node:zlib';
import type { Command } from 'commander';
import { isId } from '../../log/format/ids.js';
import { clientFrom, DEFAULT_URL, retryNotice } from '../api/config.js';
import { FailureError, UsageError } from '../api/errors.js';
import { type Io, printJson } from '../api/io.js';
import { describeFsError } from '../api/upload.js';
import { jsonOption } from './options.js';

/** What `hansard export --json` prints. */
export interface ExportResult {
  /** the bundle's path, absolute */
  file: string;
  /** bytes written to it (compressed when it is a .gz) */
  bytes: number;
  sid: string;
  /** the seq of the bundle's newest digest, the one written for this export */
  head_seq: number;
}

const HELP = `
The bundle holds, under {sid}/: each writer's segment as stored, every signed digest of the session
(the newest written for this export, covering every byte exported), the deployment's public keys and
manifest.json. Anyone can check it offline, without the server and without trusting it:

  hansard export s_01KZ… --out s.tar.gz                  needs a token with the read scope
  curl -s $HANSARD_URL/v1/keys > keys.json               the public keys (no token needed): keep a copy
                                                         you fetched yourself, not the bundle's own
  hansard verify --digests s.tar.gz --public-key keys.json

On AWS, a session over a few MB: pass --replay-url (env HANSARD_REPLAY_URL; the stack's ReplayUrl
output, or ReplayEdgeUrl when the stack has the edge on: the function URL then refuses direct calls). The API URL signs the bundle's digest and the replay URL, which streams, sends the bundle:
  hansard export s_01KZ… --out s.tar.gz --replay-url https://….lambda-url.us-east-1.on.aws

FILE ending in .gz or .tgz (s.tar.gz, s.tgz) is gzip-compressed; any other name holds a plain tar (a
name such as s.zip is said on stderr: the bundle is a tar whatever its name). An existing FILE is never
replaced unless --force is given. The download goes to FILE.partial and is renamed to FILE once complete. What a bundle proves, and what it does not: docs/audit.md.
Exit codes: 0 written, 1 the download failed, 2 a bad id, FILE exists (no --force), an unwritable FILE
or a refusal (404, 403).`;

export function registerExport(program: Command, io: Io): void {
  program
    .command('export')
    .description('download a session as an audit bundle (segments, signed digests, keys) to verify offline')
    .argument('<sid>', 'the session id (s_…)')
    .requiredOption('--out <file>', 'where to write the bundle (.tar; .tar.gz or .tgz to gzip it)')
    .option('--force', 'replace FILE if it exists (by default an existing FILE is kept: exit 2)')
    .option('--url <url>', 'server URL (env HANSARD_URL)')
    .option(
      '--replay-url <url>',
      'AWS: the replay function URL, for sessions over a few MB (env HANSARD_REPLAY_URL; see below)',
    )
    .option('--token <token>', 'token with the read scope (env HANSARD_TOKEN)')
    .addOption(jsonOption())
    .addHelpText('after', HELP)
    .action((sid: string, o: ExportFlags) => exportSession(sid, o, io));
}

/** The options of `hansard export`, as commander parses them. */
export interface ExportFlags {
  out: string;
  force?: boolean;
  url?: string;
  replayUrl?: string;
  token?: string;
  json?: boolean;
}

/**
 * The bundle's response, its body not read yet: from the server alone, or (a replay URL given) a digest
 * signed by the server (`POST …/digests`) and the bundle up to it from the replay URL.
 * @throws ServerError, NetworkError, UsageError (no token, a bad URL)
 */
async function requestBundle(sid: string, o: ExportFlags, io: Io): Promise<Response> {
  const onRetry = o.json ? undefined : retryNotice(io);
  const client = clientFrom(o, io.env, onRetry);
  const replayUrl = o.replayUrl ?? io.env.HANSARD_REPLAY_URL;
  if (!replayUrl) return client.stream(`/v1/sessions/${sid}/export`);
  if (!/^https?:\/\/[^/]/.test(replayUrl)) {
    throw new UsageError(
      `--replay-url ${JSON.stringify(replayUrl)} is not an http(s) URL: use the stack's ReplayUrl output (https://….lambda-url.<region>.on.aws), or ReplayEdgeUrl behind the edge`,
    );
  }
  const made = await client.request('POST', `/v1/sessions/${sid}/digests`);
  const seq = (made.body as { seq?: unknown } | null)?.seq;
  if (typeof seq !== 'number') {
    throw new FailureError(`the server answered POST /v1/sessions/${sid}/digests without a digest seq`);
  }
  const replay = clientFrom({ ...o, url: replayUrl }, io.env, onRetry);
  return replay.stream(`/v1/sessions/${sid}/export?head=${seq}`);
}

/** Whether the bundle is gzip-compressed for this FILE name: .gz (s.tar.gz) or .tgz, any case. */
function gzipsName(file: string): boolean {
  return /\.(gz|tgz)$/i.test(file);
}

/** The refusal when FILE exists and --force was not given (`--json`: code `file_exists`, exit 2). */
function existsRefusal(file: string): UsageError {
  return new UsageError(`${file} exists: pass --force to replace it, or choose another name`, 'file_exists');
}

/**
 * Fails early, before anything is asked of the server, when FILE cannot be written: its folder is
 * missing or read-only, FILE is a directory, or FILE exists and `force` is false. Leaves no file behind.
 * @throws UsageError naming the path and why
 */
async function checkWritable(file: string, partial: string, force: boolean): Promise<void> {
  try {
    if (statSync(file).isDirectory()) {
      throw new UsageError(`--out ${file} is a directory: name a file in it, e.g. ${file}/bundle.tar.gz`);
    }
    if (!force) throw existsRefusal(file);
  } catch (err) {
    if (err instanceof UsageError) throw err;
  }
  try {
    const fh = await open(partial, 'w');
    await fh.close();
  } catch (err) {
    const why =
      (err as NodeJS.ErrnoException).code === 'ENOENT'
        ? `its folder ${dirname(file)} does not exist`
        : describeFsError(err);
    throw new UsageError(`cannot write the bundle to ${file}: ${why}`);
  }
}

/**
 * Moves the complete download to FILE. Without `force`, a hard link (which fails when FILE exists) so a
 * FILE made during the download is not replaced either; where links are not supported, a rename after
 * checking FILE is still absent.
 * @throws UsageError when FILE exists and `force` is false
 */
async function putInPlace(partial: string, file: string, force: boolean): Promise<void> {
  if (force) return rename(partial, file);
  try {
    await link(partial, file);
  } catch (err) {
    const code = (err as NodeJS.ErrnoException).code;
    if (code === 'EEXIST') throw existsRefusal(file);
    if (code !== 'EPERM' && code !== 'ENOTSUP' && code !== 'EOPNOTSUPP') throw err;
    let exists = true;
    try {
      statSync(file);
    } catch {
      exists = false;
    }
    if (exists) throw existsRefusal(file);
    return rename(partial, file);
  }
  await unlink(partial);
}

/** fsync, so the renamed file holds its bytes even after a crash. */
async function syncFile(path: string): Promise<void> {
  const fh = await open(path, 'r+');
  try {
    await fh.sync();
  } finally {
    await fh.close();
  }
}

/** A progress line on a terminal's stderr, redrawn at most every 200 ms. */
function progressLine(io: Io): (bytes: number) => void {
  let last = 0;
  return (bytes) => {
    const now = Date.now();
    if (now - last < 200) return;
    last = now;
    io.stderr.write(`\r\x1b[K  downloading: ${formatBytes(bytes)}`);
  };
}

function formatBytes(n: number): string {
  if (n < 1024) return `${n} B`;
  if (n < 1024 * 1024) return `${(n / 1024).toFixed(1)} KiB`;
  return `${(n / 1024 / 1024).toFixed(1)} MiB`;
}

/**
 * `hansard export <sid> --out FILE`: downloads the session's audit bundle (its segments, digests and the
 * public keys; through the replay URL on AWS for a large session) into FILE, gzipped for .tar.gz or .tgz,
 * and prints what it holds.
 * @throws UsageError for a session id that is not `s_<ULID>`, or an existing FILE without `--force`
 */
export async function exportSession(sid: string, o: ExportFlags, io: Io): Promise<void> {
  if (!isId('s', sid)) {
    throw new UsageError(
      `${JSON.stringify(sid)} is not a session id (s_ and 26 letters and digits): hansard upload prints it, the board lists them`,
    );
  }
  const file = resolve(io.cwd, o.out);
  const partial = `${file}.partial`;
  const gzip = gzipsName(file);
  await checkWritable(file, partial, o.force === true);
  if (!gzip && !/\.tar$/i.test(file)) {
    io.stderr.write(
      `hansard: ${o.out} will hold a tar archive (not gzip-compressed; name it .tar, or .tar.gz / .tgz to compress)\n`,
    );
  }
  let res: Response;
  try {
    res = await requestBundle(sid, o, io);
  } catch (err) {
    await rm(partial, { force: true });
    throw err;
  }
  const headSeq = Number(res.headers.get('hansard-head-seq'));
  const progress = !o.json && io.stderr.isTTY === true ? progressLine(io) : null;
  let received = 0;
  let written = 0;
  const count = new Transform({
    transform(chunk: Buffer, _enc, done) {
      received += chunk.length;
      progress?.(received);
      done(null, chunk);
    },
  });
  const countOut = new Transform({
    transform(chunk: Buffer, _enc, done) {
      written += chunk.length;
      done(null, chunk);
    },
  });
  const sink: Writable = createWriteStream(partial);
  try {
    const body = Readable.fromWeb(res.body as import('node:stream/web').ReadableStream<Uint8Array>);
    if (gzip) await pipeline(body, count, createGzip(), countOut, sink);
    else await pipeline(body, count, countOut, sink);
    await syncFile(partial);
    await putInPlace(partial, file, o.force === true);
  } catch (err) {
    if (err instanceof UsageError) {
      await rm(partial, { force: true });
      throw err;
    }
    await rm(partial, { force: true });
    const why = err instanceof Error ? err.message : String(err);
    throw new FailureError(
      `the export of ${sid} stopped after ${received} bytes (${why}): nothing was written to ${o.out}. Run the same command again`,
    );
  } finally {
    if (progress) io.stderr.write('\r\x1b[K');
  }
  const result: ExportResult = {
    file,
    bytes: written,
    sid,
    head_seq: Number.isSafeInteger(headSeq) ? headSeq : 0,
  };
  if (o.json) {
    printJson(io, result);
    return;
  }
  const url = (o.url ?? io.env.HANSARD_URL ?? DEFAULT_URL).replace(/\/+$/, '');
  io.stdout.write(
    `exported ${sid} to ${o.out} (${formatBytes(written)}; its newest digest is seq ${result.head_seq})\n`,
  );
  io.stderr.write(
    `next: get the key:       curl -s ${url}/v1/keys > keys.json\n` +
      `      verify offline:    hansard verify --digests ${o.out} --public-key keys.json\n` +
      '      what it proves:    docs/audit.md\n',
  );
}
