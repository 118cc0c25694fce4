/**
 * `hansard upload DIR…` (DESIGN §6): for each segment of each session directory, ask the server how much
 * it has, then send the rest in chunks of complete lines of at most 5 MiB and 10,000 lines, each at its
 * byte offset. A last
 * line with no newline (its writer is still writing it) waits for the next upload. A 409 means the server
 * holds a different length (another uploader got there first): resume from the offset it reports, or,
 * when the server already holds at least what this run meant to send and those bytes are this file's,
 * stop there: the other run did the work (issue 8.8).
 */
import { createReadStream, statSync } from 'node:fs';
import { type FileHandle, open } from 'node:fs/promises';
import { dirname } from 'node:path';
import { MAX_CHUNK_BYTES, MAX_CHUNK_LINES } from '../../contract/limits.js';
import { type RawLine, splitLines } from '../../log/read/reader.js';
import { listSegments, sessionIdOf } from '../../log/read/session-dir.js';
import { type ApiClient, ServerError } from './client.js';
import { FailureError, UsageError } from './errors.js';
import { appendOnlyAdvice, checkUploadedDigests, SEGMENT_CHANGED } from './upload-digests.js';

export interface SegmentUploadResult {
  w: string;
  /** bytes of the segment the server holds now */
  length: number;
  /** bytes sent in this run */
  sent_bytes: number;
  sent_lines: number;
  chunks: number;
  /** bytes of an unfinished last line left for later */
  pending_bytes: number;
}

export interface SessionUploadResult {
  sid: string;
  dir: string;
  segments: SegmentUploadResult[];
}

export interface UploadOptions {
  client: ApiClient;
  /** chunk size limit in bytes (tests make it small) */
  maxChunkBytes?: number;
  /** most lines per chunk (tests make it small) */
  maxChunkLines?: number;
  onProgress?: (p: { sid: string; w: string; sent: number; total: number }) => void;
}

/**
 * Uploads one session directory. @throws UsageError when `dir` is not a session directory or a line is
 * larger than a chunk; ServerError / NetworkError from the client
 */
export async function uploadSession(dir: string, options: UploadOptions): Promise<SessionUploadResult> {
  // A segment file is a common slip (its path is what `ls` shows): name the directory to pass instead.
  if (/(?:^|[\\/])w_[0-9A-Za-z]{26}\.jsonl$/.test(dir) && isFile(dir)) {
    throw new UsageError(
      `${dir} is a segment file: upload its session directory instead, which sends every writer's segment: hansard upload ${dirname(dir) || '.'}`,
    );
  }
  let segments: ReturnType<typeof listSegments>;
  try {
    segments = listSegments(dir);
  } catch (err) {
    throw new UsageError(`cannot read ${dir}: ${describeFsError(err)}`);
  }
  const sid = await sessionIdOf(dir);
  if (!sid || segments.length === 0) {
    throw new UsageError(
      `${dir} is not a session directory: expected s_<ULID>/ holding w_<ULID>.jsonl segments`,
    );
  }
  const sized = { ...options, ...(await serverChunkLimits(options)) };
  const results: SegmentUploadResult[] = [];
  for (const seg of segments) results.push(await uploadSegment(sid, seg.w, seg.path, sized));
  return { sid, dir, segments: results };
}

const advertised = new WeakMap<ApiClient, Promise<{ max_chunk_bytes?: number; max_chunk_lines?: number }>>();

/**
 * The chunk limits the server advertises on `GET /healthz` (4 MiB behind API Gateway, 5 MiB locally),
 * never more than the caller's own. Asked once per client; an older server that says nothing leaves the
 * defaults.
 */
async function serverChunkLimits(
  o: UploadOptions,
): Promise<{ maxChunkBytes: number; maxChunkLines: number }> {
  let ask = advertised.get(o.client);
  if (!ask) {
    ask = o.client
      .request('GET', '/healthz')
      .then(
        (r) => (r.body as { limits?: { max_chunk_bytes?: number; max_chunk_lines?: number } }).limits ?? {},
      )
      .catch(() => ({}));
    advertised.set(o.client, ask);
  }
  const limits = await ask;
  const pick = (mine: number, theirs: unknown) =>
    typeof theirs === 'number' && Number.isInteger(theirs) && theirs > 0 ? Math.min(mine, theirs) : mine;
  return {
    maxChunkBytes: pick(o.maxChunkBytes ?? MAX_CHUNK_BYTES, limits.max_chunk_bytes),
    maxChunkLines: pick(o.maxChunkLines ?? MAX_CHUNK_LINES, limits.max_chunk_lines),
  };
}

async function uploadSegment(
  sid: string,
  w: string,
  path: string,
  options: UploadOptions,
): Promise<SegmentUploadResult> {
  const { client } = options;
  const max = options.maxChunkBytes ?? MAX_CHUNK_BYTES;
  const maxLines = options.maxChunkLines ?? MAX_CHUNK_LINES;
  const base = `/v1/sessions/${sid}/writers/${w}`;
  const info = await client.request('GET', base, { allow404: true });
  let offset = info.status === 404 ? 0 : (info.body as { length: number }).length;
  let serverLines = info.status === 404 ? 0 : (info.body as { lines: number }).lines;
  // This run's view of the file: it means to send up to here (a writer may append meanwhile).
  const size = statSync(path).size;
  const result: SegmentUploadResult = {
    w,
    length: offset,
    sent_bytes: 0,
    sent_lines: 0,
    chunks: 0,
    pending_bytes: 0,
  };
  if (offset > 0) {
    const known = info.body as { last_seq: number | null; digest?: string | null };
    // The digests first: they name the first line that differs, whatever the edit (issue 15.1); the
    // structural check stands for an older server that lists no digests.
    await checkUploadedDigests(client, base, path, offset, known.digest);
    if (offset > size) {
      throw new UsageError(
        `the server holds ${offset} bytes of ${path} but the file has only ${size}: this is not the segment the server has`,
      );
    }
    await checkSamePrefix(path, offset, serverLines, known.last_seq);
  }
  let resyncs = 0;
  // Opened once: each chunk is checked against it before it is sent (a file rewritten in place meanwhile).
  const file = await open(path, 'r');
  const identity = await file.stat();
  // The last bytes before `offset` as they were read (sent, or checked against the server's digests).
  let tail: Buffer | null = null;
  try {
    outer: while (offset < size) {
      tail ??= await readAt(file, Math.max(0, offset - TAIL_BYTES), Math.min(offset, TAIL_BYTES));
      let parts: Uint8Array[] = [];
      let partBytes = 0;
      let partLines = 0;
      const send = async (): Promise<'ok' | 'resync' | 'done'> => {
        const body = Buffer.concat(
          parts.flatMap((p) => [p, NL]),
          partBytes,
        );
        await checkUnchanged(file, identity, path, offset, body, tail);
        try {
          const res = await client.request('POST', `${base}/chunks?offset=${offset}`, {
            body,
            contentType: 'application/x-ndjson',
          });
          const answer = res.body as { length: number; lines: number };
          tail =
            answer.length === offset + body.length
              ? body.subarray(Math.max(0, body.length - TAIL_BYTES))
              : null;
          offset = answer.length;
          serverLines = answer.lines;
          result.sent_bytes += body.length;
          result.sent_lines += partLines;
          result.chunks += 1;
          options.onProgress?.({ sid, w, sent: offset, total: size });
        } catch (err) {
          if (err instanceof ServerError && err.code === 'offset_mismatch' && resyncs < 5) {
            const expected = Number(err.details.expected_offset);
            if (!Number.isSafeInteger(expected)) throw err;
            if (expected >= size) {
              // Another upload of this file (racing with this one, or started after the file grew) already
              // sent all this run meant to send, and maybe more: done, once the server's bytes are this file's.
              offset = await confirmServerAhead(client, base, path);
              result.pending_bytes = 0; // whatever this run left for later, the other one has sent
              tail = null;
              return 'done';
            }
            // A server that moved ahead (another uploader sent those bytes) is progress, bounded by the file's
            // size; only a 409 that does not move us forward counts towards giving up.
            if (expected <= offset) resyncs += 1;
            // The bytes another uploader sent are taken as this file's only once they are seen to be: the
            // server's chunks up to `expected` against this file, digest by digest (else a changed line of
            // this file would be skipped over and the rest spliced after the other copy's bytes).
            if (expected > offset) await checkUploadedDigests(client, base, path, expected);
            offset = expected;
            tail = null; // read again at `expected`, which the digests just covered
            return 'resync';
          }
          if (err instanceof ServerError && err.status === 413) {
            // The server's own code and details (quota_exceeded with quota_bytes and used_bytes, or
            // payload_too_large) go on to --json as every other refusal's do, with the file and offset.
            const located = new ServerError(
              err.status,
              err.code,
              `${path}: a chunk at offset ${offset}${err.code === 'quota_exceeded' ? '' : ' was too large'}: ${err.message}`,
              { ...err.details, file: path, offset },
            );
            located.path = err.path;
            throw located;
          }
          throw err;
        }
        parts = [];
        partBytes = 0;
        partLines = 0;
        return 'ok';
      };
      for await (const line of splitLines(
        createReadStream(path, { start: offset, highWaterMark: 1024 * 1024 }),
      )) {
        if (!line.complete) {
          result.pending_bytes = line.bytes.length;
          break;
        }
        const lineBytes = line.bytes.length + 1;
        if (lineBytes > max) {
          throw new UsageError(
            `${path}: line ${serverLines + partLines + 1} is ${lineBytes} bytes, more than a chunk may hold (${max}); it cannot be uploaded`,
          );
        }
        if (partBytes + lineBytes > max || partLines >= maxLines) {
          const sent = await send();
          if (sent === 'resync') continue outer;
          if (sent === 'done') break outer;
        }
        parts.push(line.bytes);
        partBytes += lineBytes;
        partLines += 1;
      }
      if (partBytes > 0 && (await send()) === 'resync') continue;
      break;
    }
  } finally {
    await file.close();
  }
  result.length = offset;
  return result;
}

const NL = Buffer.from('\n');

/** Bytes before a chunk re-read with it: a rewrite that shifts the sent lines changes them. */
const TAIL_BYTES = 64 * 1024;

/** `length` bytes of `file` from `offset` (fewer at its end). */
async function readAt(file: FileHandle, offset: number, length: number): Promise<Buffer> {
  const buf = Buffer.alloc(length);
  let done = 0;
  while (done < length) {
    const { bytesRead } = await file.read(buf, done, length - done, offset + done);
    if (bytesRead === 0) break;
    done += bytesRead;
  }
  return buf.subarray(0, done);
}

/**
 * Before a chunk is sent: the file at `path` is still the one opened (same device and inode), and it
 * still holds `body` at `offset` and `tail` just before it (the last bytes sent or checked). A file
 * rewritten in place while the upload runs (an editor saving over it, `>`) would otherwise have its new
 * bytes spliced after the old ones: the read stream goes on at its position in the new contents. The
 * chunks already acknowledged stay: they were the file's bytes when they were read. A same-length edit
 * further back than `tail` is not seen here; the next upload's digest check refuses it (issue 15.1).
 * @throws FailureError (exit 1) saying the file changed and nothing after byte `offset` was sent
 */
async function checkUnchanged(
  file: FileHandle,
  identity: { dev: number; ino: number },
  path: string,
  offset: number,
  body: Buffer,
  tail: Buffer | null,
): Promise<void> {
  let now: { dev: number; ino: number } | null;
  try {
    now = statSync(path);
  } catch {
    now = null;
  }
  const before = tail ?? Buffer.alloc(0);
  const same =
    now !== null &&
    now.dev === identity.dev &&
    now.ino === identity.ino &&
    (await readAt(file, offset - before.length, before.length + body.length)).equals(
      Buffer.concat([before, body]),
    );
  if (!same) {
    throw new FailureError(
      `${path} changed while it was being uploaded: nothing after byte ${offset} was sent (the server ` +
        'holds the bytes before it, as the file had them when they were read); run hansard upload again',
    );
  }
}

/**
 * After a 409 saying the server holds at least what this run meant to send: asks the server what it holds
 * now and checks that it is this file's history (the file, which only grows, holds at least as many bytes
 * by now, since the other upload read them from it). Returns the server's length.
 * @throws UsageError when the file is shorter than the server's segment or its first bytes differ
 */
async function confirmServerAhead(client: ApiClient, base: string, path: string): Promise<number> {
  const now = (await client.request('GET', base)).body as {
    length: number;
    lines: number;
    last_seq: number | null;
    digest?: string | null;
  };
  await checkUploadedDigests(client, base, path, now.length, now.digest);
  const size = statSync(path).size;
  if (now.length > size) {
    throw new UsageError(
      `the server holds ${now.length} bytes of ${path} but the file has only ${size}: this is not the segment the server has`,
    );
  }
  await checkSamePrefix(path, now.length, now.lines, now.last_seq);
  return now.length;
}

/** Words for the file system errors a user meets. */
function isFile(path: string): boolean {
  try {
    return statSync(path).isFile();
  } catch {
    return false;
  }
}

export function describeFsError(err: unknown): string {
  const code = (err as NodeJS.ErrnoException).code;
  if (code === 'ENOENT') return 'no such file or directory';
  if (code === 'ENOTDIR') return 'not a directory';
  if (code === 'EACCES' || code === 'EPERM') return 'permission denied';
  return (err as Error).message;
}

/**
 * A segment is append-only: the file's first `length` bytes must be the ones the server holds, or
 * appending the rest would splice two different histories. Checked without downloading anything: the
 * server's length must fall on a line end, the file must have as many lines before it, and the last of
 * them must carry the server's last seq.
 * @throws UsageError naming the file when it is not the segment the server has
 */
async function checkSamePrefix(
  path: string,
  length: number,
  lines: number,
  lastSeq: number | null,
): Promise<void> {
  let count = 0;
  let last: RawLine | null = null;
  for await (const l of splitLines(createReadStream(path, { end: length - 1, highWaterMark: 1024 * 1024 }))) {
    if (!l.complete) break;
    count += 1;
    last = l;
  }
  let seq: number | null = null;
  if (last) {
    try {
      const o = JSON.parse(Buffer.from(last.bytes).toString('utf8')) as { seq?: unknown };
      seq = typeof o.seq === 'number' ? o.seq : null;
    } catch {
      seq = null;
    }
  }
  const atLineEnd = last !== null && last.offset + last.bytes.length + 1 === length;
  if (!atLineEnd || count !== lines || (lastSeq !== null && seq !== null && seq !== lastSeq)) {
    throw new UsageError(
      `${path} is not the segment the server has: its first ${length} bytes differ from what was uploaded ` +
        `(the server has ${lines} lines ending at seq ${lastSeq ?? '-'}). ${appendOnlyAdvice(path)}`,
      SEGMENT_CHANGED,
    );
  }
}
