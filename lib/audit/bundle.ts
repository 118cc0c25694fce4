/**
 * The export bundle (issue 15.3, DESIGN §6b): a tar whose entries sit under `{sid}/`:
 * `digests/{seq:09}.json` (each digest's stored bytes), `keys/{key_id}.json` (PublicKeyInfo),
 * `segments/{w}.jsonl` (the segments as stored) and `manifest.json`, written last so its segment
 * SHA-256s are computed while the segments stream through. `openBundle` reads one back for the verifier:
 * a .tar, a .tar.gz (told apart by their bytes, not their names) or a directory.
 */
import { createHash } from 'node:crypto';
import { once } from 'node:events';
import { mkdtemp, open, readdir, rm, stat } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Readable } from 'node:stream';
import tar from 'tar-stream';
import { BundleError, type ExtractLimits, extractionCap, extractTar } from './bundle-extract.js';
import { BUNDLE_FORMAT, type BundleManifest, type PublicKeyInfo } from './schemas.js';

export { BundleError, type ExtractLimits } from './bundle-extract.js';

/** What `packBundle` packs: the export route gathers it from storage. */
export interface BundleParts {
  tenant: string;
  sid: string;
  /** ISO time of the export (also every entry's mtime) */
  exported_at: string;
  /** the digest written for this export: the newest */
  head: { seq: number; sha256: string };
  /** every digest of the session, its stored bytes (`canonicalJson(signedDigest)`) */
  digests: Array<{ seq: number; bytes: Uint8Array }>;
  keys: PublicKeyInfo[];
  /** each writer's segment, read as a stream of exactly `length` bytes */
  segments: Array<{ w: string; length: number; read(): AsyncIterable<Uint8Array> }>;
}

/** A name that is safe as one path component inside the bundle. */
const SAFE_NAME = /^[A-Za-z0-9_-][A-Za-z0-9_.-]{0,127}$/;

/** The path of digest `seq` relative to the bundle root. */
export function digestPath(seq: number): string {
  return `digests/${String(seq).padStart(9, '0')}.json`;
}

/**
 * The bundle of `parts` as a plain (uncompressed) tar stream; pipe it through `createGzip()` for a
 * .tar.gz. Segments are streamed, never held whole in memory. The stream fails (emits 'error', and
 * the tar is left without its end blocks and manifest) when a segment's `read()` yields more or fewer
 * bytes than its `length`, or throws.
 * @throws TypeError at once when `sid`, a writer id or a key id cannot be a file name
 */
export function packBundle(parts: BundleParts): Readable {
  for (const name of [parts.sid, ...parts.segments.map((s) => s.w), ...parts.keys.map((k) => k.key_id)]) {
    if (!SAFE_NAME.test(name))
      throw new TypeError(`cannot pack ${JSON.stringify(name)}: not a safe file name`);
  }
  const pack = tar.pack();
  const mtime = new Date(parts.exported_at);
  const root = parts.sid;
  const add = (name: string, body: Uint8Array | string): Promise<void> =>
    new Promise((ok, fail) => {
      pack.entry({ name: `${root}/${name}`, mtime, mode: 0o644 }, Buffer.from(body), (err) =>
        err ? fail(err) : ok(),
      );
    });

  const run = async (): Promise<void> => {
    const manifest: BundleManifest = {
      format: BUNDLE_FORMAT,
      tenant: parts.tenant,
      sid: parts.sid,
      exported_at: parts.exported_at,
      head: parts.head,
      digests: [],
      segments: [],
      keys: [],
    };
    for (const d of [...parts.digests].sort((a, b) => a.seq - b.seq)) {
      const path = digestPath(d.seq);
      await add(path, d.bytes);
      manifest.digests.push({ seq: d.seq, path, sha256: sha256Hex(d.bytes) });
    }
    for (const k of parts.keys) {
      const path = `keys/${k.key_id}.json`;
      await add(path, `${JSON.stringify(k, null, 2)}\n`);
      manifest.keys.push({ key_id: k.key_id, path });
    }
    for (const s of parts.segments) {
      const path = `segments/${s.w}.jsonl`;
      const sha256 = await streamEntry(pack, `${root}/${path}`, mtime, s);
      manifest.segments.push({ w: s.w, path, length: s.length, sha256 });
    }
    await add('manifest.json', `${JSON.stringify(manifest, null, 2)}\n`);
    pack.finalize();
  };
  run().catch((err: unknown) => pack.destroy(err instanceof Error ? err : new Error(String(err))));
  return Readable.from(pack as unknown as AsyncIterable<Buffer>, { objectMode: false });
}

/** Streams one segment into the tar, checking its length; answers its SHA-256 (hex). */
async function streamEntry(
  pack: tar.Pack,
  name: string,
  mtime: Date,
  s: BundleParts['segments'][number],
): Promise<string> {
  const hash = createHash('sha256');
  let done!: Promise<void>;
  const sink = await new Promise<NodeJS.WritableStream & { destroy(e?: Error): void }>((ok) => {
    done = new Promise<void>((resolveEntry, rejectEntry) => {
      ok(
        pack.entry({ name, size: s.length, mtime, mode: 0o644 }, (err) =>
          err ? rejectEntry(err) : resolveEntry(),
        ) as never,
      );
    });
  });
  // destroyed with the pack on a failure: the error goes to the reader of the pack, not here
  (sink as unknown as { on(e: string, f: () => void): void }).on('error', () => {});
  let n = 0;
  done.catch(() => {}); // observed now, awaited below: it may fail while a write waits
  try {
    for await (const chunk of s.read()) {
      n += chunk.length;
      if (n > s.length) {
        throw new Error(`segment ${s.w} yielded more than its ${s.length} bytes: the bundle is not written`);
      }
      hash.update(chunk);
      // Raced with the entry's end: a pack destroyed meanwhile (the export's client went away) fails the
      // entry and never drains, so waiting for 'drain' alone would hang and leave `done` unheard.
      if (!sink.write(Buffer.from(chunk))) await Promise.race([once(sink as never, 'drain'), done]);
    }
    if (n !== s.length) {
      throw new Error(`segment ${s.w} yielded ${n} bytes, not its ${s.length}: the bundle is not written`);
    }
  } catch (err) {
    // packBundle's caller destroys the whole pack with this error; the entry just stays unfinished
    done.catch(() => {});
    throw err;
  }
  sink.end();
  await done;
  return hash.digest('hex');
}

function sha256Hex(bytes: Uint8Array): string {
  return createHash('sha256').update(bytes).digest('hex');
}

/** An opened bundle: `root` is the directory holding manifest.json; `close()` removes any extraction. */
export interface OpenedBundle {
  root: string;
  kind: 'tar' | 'tar.gz' | 'dir';
  close(): Promise<void>;
}

/**
 * Opens a bundle for the verifier: a directory (the bundle root holding manifest.json, or a directory
 * holding one such `{sid}/` root), or a .tar / .tar.gz (detected by magic bytes), which is extracted
 * entry by entry into a fresh temporary directory that `close()` removes, within `limits`
 * (bundle-extract.ts: a byte cap from the compressed size or --max-bytes, an entry cap).
 * @throws BundleError when `path` is unreadable, not a tar, cut short, extracts past a limit, holds a
 *   link or a path outside its root, or has no manifest.json; the temporary directory is removed then
 */
export async function openBundle(path: string, limits: ExtractLimits = {}): Promise<OpenedBundle> {
  const st = await stat(path).catch((e: NodeJS.ErrnoException) => {
    throw new BundleError(
      `cannot read ${path}: ${e.code === 'ENOENT' ? 'no such file or directory' : e.message}`,
    );
  });
  if (st.isDirectory()) return { root: await findRoot(path, path), kind: 'dir', close: async () => {} };
  const head = Buffer.alloc(512);
  const fh = await open(path, 'r').catch((e: Error) => {
    throw new BundleError(`cannot read ${path}: ${e.message}`);
  });
  let got: number;
  try {
    ({ bytesRead: got } = await fh.read(head, 0, 512, 0));
  } finally {
    await fh.close();
  }
  const gz = got >= 2 && head[0] === 0x1f && head[1] === 0x8b;
  const isTar = got >= 262 && head.subarray(257, 262).toString('latin1') === 'ustar';
  if (!gz && !isTar) {
    throw new BundleError(
      `${path} is not an export bundle: neither a tar, a gzip-compressed tar, nor a directory (make one with hansard export SID --out FILE)`,
    );
  }
  const dir = await mkdtemp(join(tmpdir(), 'hansard-bundle-'));
  const close = () => rm(dir, { recursive: true, force: true });
  try {
    await extractTar(path, gz, dir, extractionCap(st.size, gz, limits), limits.maxEntries);
    return { root: await findRoot(dir, path), kind: gz ? 'tar.gz' : 'tar', close };
  } catch (err) {
    await close();
    if (err instanceof BundleError) throw err;
    throw new BundleError(`${path} is not a readable export bundle: ${(err as Error).message}`);
  }
}

/** The directory holding manifest.json: `dir` itself or its one subdirectory. */
async function findRoot(dir: string, shown: string): Promise<string> {
  const names = await readdir(dir, { withFileTypes: true }).catch((e: Error) => {
    throw new BundleError(`cannot read ${shown}: ${e.message}`);
  });
  if (names.some((n) => n.name === 'manifest.json' && n.isFile())) return dir;
  const subs = names.filter((n) => n.isDirectory());
  if (subs.length === 1) {
    const sub = join(dir, subs[0]!.name);
    const inner = await readdir(sub).catch(() => [] as string[]);
    if (inner.includes('manifest.json')) return sub;
  }
  throw new BundleError(
    `${shown} is not an export bundle: no manifest.json (nor one {sid}/ folder holding one); make one with hansard export SID --out FILE`,
  );
}
