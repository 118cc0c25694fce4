/**
 * Extracting a .tar / .tar.gz export bundle for the offline verifier (issue 15.3, DESIGN §6b), safely:
 * the bundle comes from someone else, so extraction is bounded while it streams (total bytes and entry
 * count, checked before anything is written past them) and every stream error, a file cut short
 * included, becomes a `BundleError` the CLI reports with exit 2. `bundle.ts`'s `openBundle` removes the
 * temporary directory on any failure.
 */
import { createReadStream, createWriteStream } from 'node:fs';
import { mkdir } from 'node:fs/promises';
import { dirname, resolve, sep } from 'node:path';
import { Transform, type Writable } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import { createGunzip } from 'node:zlib';
import tar from 'tar-stream';

/** A bundle that cannot be read at all (not a tar, no manifest): the CLI exits 2 with the message. */
export class BundleError extends Error {
  override name = 'BundleError';
}

/** Limits on what extracting a bundle may write; the defaults are `extractionCap`'s. */
export interface ExtractLimits {
  /** total bytes of file content extracted; replaces every default byte cap when given */
  maxBytes?: number;
  /** tar entries (files and directories) */
  maxEntries?: number;
}

/** A .tar.gz may extract to at most this many times its compressed size (real exports: about 10×). */
export const MAX_GZIP_RATIO = 100;
/** …but always at least this much, so a tiny bundle is never refused by the ratio (bytes). */
export const MIN_GZIP_ALLOWANCE = 16 * 1024 ** 2;
/** The absolute cap on bytes extracted when no --max-bytes is given: 64 GiB. */
export const DEFAULT_MAX_BYTES = 64 * 1024 ** 3;
/** The cap on entries: a real bundle holds one per digest, key and segment (a digest every 5 min is
 * about 105,000 a year of non-stop activity). */
export const DEFAULT_MAX_ENTRIES = 1_000_000;

const HOW_TO_RAISE =
  'raise it with --max-bytes BYTES (or HANSARD_VERIFY_MAX_BYTES) if you trust the bundle, or extract it yourself and verify the directory';

/**
 * The byte cap for extracting a bundle of `fileSize` bytes: `limits.maxBytes` when given, else for a
 * .tar.gz the least of DEFAULT_MAX_BYTES and max(MIN_GZIP_ALLOWANCE, MAX_GZIP_RATIO × fileSize), for a
 * .tar DEFAULT_MAX_BYTES. Answers the cap and the sentence that explains it when it is passed.
 */
export function extractionCap(
  fileSize: number,
  gz: boolean,
  limits: ExtractLimits = {},
): { bytes: number; why: string } {
  if (limits.maxBytes !== undefined)
    return { bytes: limits.maxBytes, why: `the --max-bytes limit of ${limits.maxBytes} bytes` };
  const ratio = Math.max(MIN_GZIP_ALLOWANCE, MAX_GZIP_RATIO * fileSize);
  if (gz && ratio < DEFAULT_MAX_BYTES)
    return {
      bytes: ratio,
      why: `${ratio} bytes (${MAX_GZIP_RATIO}× its ${fileSize} compressed bytes, at least 16 MiB; real exports expand about 10×): refused as a likely decompression bomb`,
    };
  return { bytes: DEFAULT_MAX_BYTES, why: `the default limit of ${DEFAULT_MAX_BYTES} bytes (64 GiB)` };
}

/**
 * Extracts regular files and directories only, each inside `dir`; anything else is refused. Stops as
 * soon as the next entry would pass `cap.bytes` or `maxEntries`, before writing it.
 * @throws BundleError for a cap passed, an entry outside `dir` or not a file, a bundle cut short
 *   ("the bundle ends early"), or any other read error (the message names `path`)
 */
export async function extractTar(
  path: string,
  gz: boolean,
  dir: string,
  cap: { bytes: number; why: string },
  maxEntries = DEFAULT_MAX_ENTRIES,
): Promise<void> {
  const extract = tar.extract();
  const source = createReadStream(path);
  const gunzip = gz ? createGunzip() : null;
  const base = resolve(dir);
  let bytes = 0;
  let entries = 0;
  const over = () =>
    new BundleError(`${path} extracts to more than ${cap.why}; nothing is kept; ${HOW_TO_RAISE}`);

  const writeEntry = async (header: tar.Header, stream: NodeJS.ReadableStream): Promise<void> => {
    const { name, type, size } = header;
    if (++entries > maxEntries) {
      throw new BundleError(
        `${path} holds more than ${maxEntries} entries: refused, nothing is kept; raise it with --max-entries N if you trust the bundle`,
      );
    }
    const target = resolve(base, name);
    // `./` (the root itself, as `tar cf x.tar -C dir .` writes it) is inside; `..` and absolute paths are not
    const root = target === base && type === 'directory';
    if ((!root && !target.startsWith(base + sep)) || name.startsWith('/') || name.split('/').includes('..')) {
      throw new BundleError(`${path}: entry ${JSON.stringify(name)} points outside the bundle: refused`);
    }
    if (root) stream.resume();
    else if (type === 'directory') {
      await mkdir(target, { recursive: true });
      stream.resume();
    } else if (type === 'file' || type === 'contiguous-file') {
      if (bytes + (size ?? 0) > cap.bytes) throw over();
      await mkdir(dirname(target), { recursive: true });
      // counted as it streams too: the header's size is only what the bundle claims
      const count = new Transform({
        transform(chunk: Buffer, _enc, done) {
          bytes += chunk.length;
          done(bytes > cap.bytes ? over() : null, chunk);
        },
      });
      await pipeline(stream, count, createWriteStream(target, { flags: 'wx' }));
    } else {
      throw new BundleError(`${path}: entry ${JSON.stringify(name)} is a ${type}, not a file: refused`);
    }
  };

  // Events, not the async iterator or stream.pipeline: a tar cut short fails tar-stream's (streamx)
  // _final, which neither of those heard: the iterator then waited for ever (the process exited 0
  // with no report) or the error was thrown uncaught (a stack, exit 1, the temporary directory left).
  await new Promise<void>((ok, fail) => {
    let settled = false;
    const finish = (err?: unknown) => {
      if (settled) return;
      settled = true;
      if (err === undefined) return ok();
      source.destroy();
      gunzip?.destroy();
      extract.destroy();
      fail(asBundleError(path, err));
    };
    extract.on('entry', (header, stream, next) => {
      // a bundle cut short destroys the entry with the error, maybe while writeEntry awaits a mkdir
      // and nothing listens to it yet; extract's own 'error' reports it
      stream.on('error', () => {});
      writeEntry(header, stream as unknown as NodeJS.ReadableStream).then(() => next(), finish);
    });
    extract.on('finish', () => finish());
    extract.on('error', finish);
    source.on('error', finish);
    gunzip?.on('error', finish);
    const sink = extract as unknown as Writable;
    if (gunzip) source.pipe(gunzip).pipe(sink);
    else source.pipe(sink);
  });
}

/** The error to report: a BundleError as it is; a bundle cut short, said so; else the reader's words. */
function asBundleError(path: string, err: unknown): BundleError {
  if (err instanceof BundleError) return err;
  const msg = err instanceof Error ? err.message : String(err);
  if (/unexpected end of (data|file)/i.test(msg) || (err as NodeJS.ErrnoException)?.code === 'Z_BUF_ERROR') {
    return new BundleError(
      `${path}: the bundle ends early: the file is truncated or not a complete export (download it again with hansard export SID --out FILE)`,
    );
  }
  return new BundleError(`${path} is not a readable export bundle: ${msg}`);
}
