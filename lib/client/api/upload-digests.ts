/**
 * Before `hansard upload` appends to a segment the server already holds part of, it checks that the
 * file's first bytes are still the ones the server acknowledged: each chunk's SHA-256, listed by
 * `GET …/writers/{w}/chunks`, against the same byte range of the file (issue 15 item 1;
 * `test/fixtures/cases/05b-*`: a line changed to another of the same length, which a comparison of
 * lengths and line counts cannot see). A segment is append-only, so a difference is refused, naming the
 * first line that differs: exactly when the token may read the segment back (scope `read`), else the
 * lines of the chunk it is in.
 *
 * When the writer's answer carries its chained digest (`digest`, lib/audit/chain.ts), the chain is also
 * recomputed over the chunk list with the file's own bytes (`nextChain` from `GENESIS_CHAIN`) and
 * compared with it: every chunk matching while the chain does not means the server's chunk list and its
 * index disagree (a record lost, added or altered), and the upload stops before sending more.
 */
import { createHash } from 'node:crypto';
import { type FileHandle, open } from 'node:fs/promises';
import { basename, dirname } from 'node:path';
import { GENESIS_CHAIN, nextChain } from '../../audit/chain.js';
import type { ChunkList } from '../../contract/chunks.js';
import { MAX_CHUNK_BYTES } from '../../contract/limits.js';
import { splitLines } from '../../log/read/reader.js';
import { type ApiClient, ServerError } from './client.js';
import { FailureError, UsageError } from './errors.js';

type Chunk = ChunkList['chunks'][number];

/**
 * Checks the file at `path` against the digests of the server's chunks of writer `base`
 * (`/v1/sessions/{sid}/writers/{w}`) up to byte `length`. Returns quietly when they all match, or when
 * the server does not list chunk digests (an older server: the caller's structural check stands).
 * @param digest the writer's chained digest of `[0, length)` as the server's index has it (`digest` of
 *   `GET …/writers/{w}`), or null/undefined when the server gave none (an older server, a writer indexed
 *   before chains were kept): then only the chunks are compared
 * @throws UsageError naming the first differing line when an uploaded byte changed (or the file ends
 *   inside what was uploaded); UsageError saying the server disagrees with itself when every chunk
 *   matches but the chunks leave a gap below `length` (with or without `digest`) or the chain over them
 *   is not `digest`; FailureError (exit 1) when the server's chunk list cannot be walked (a page whose
 *   `next_from` does not advance, numbers that are not byte counts)
 */
export async function checkUploadedDigests(
  client: ApiClient,
  base: string,
  path: string,
  length: number,
  digest?: string | null,
): Promise<void> {
  // The chain over the chunks walked so far, with the file's bytes; `at` is where the next one starts.
  let chain = GENESIS_CHAIN;
  let at = 0;
  // The first byte no listed chunk covers, when the list skips some (a lost chunk record).
  let gap: number | null = null;
  const file = await open(path, 'r');
  try {
    const size = (await file.stat()).size;
    let from = 0;
    let linesBefore = 0;
    walk: while (from < length) {
      const res = await client.request('GET', `${base}/chunks?from=${from}`, { allow404: true });
      if (res.status === 404) return;
      const page = pageOf(res.body, `${base}/chunks?from=${from}`);
      for (const c of page.chunks) {
        if (c.offset + c.length > length) break walk;
        // Sizes come from the server: compared with the file's before any read, and hashed in bounded
        // blocks (a claimed 4 GB chunk once aborted Node on one huge read).
        const inFile = Math.max(0, Math.min(c.length, size - c.offset));
        const sha = await hashRange(file, c.offset, inFile);
        if (inFile !== c.length || sha !== c.sha256) {
          // The local bytes of that range, for naming the line: no more than a chunk may hold.
          const local = Buffer.alloc(Math.min(inFile, MAX_CHUNK_BYTES));
          const { bytesRead } = await file.read(local, 0, local.length, c.offset);
          const cut = local.subarray(0, bytesRead);
          throw await differenceError(client, base, path, cut, c, linesBefore, { size, length });
        }
        linesBefore = c.lines;
        if (c.offset !== at) gap ??= at;
        chain = nextChain(chain, c.offset, c.length, sha);
        at = c.offset + c.length;
      }
      if (page.next_from === null || page.chunks.length === 0) break;
      if (page.next_from <= from) {
        // A page that sends us back (or nowhere) would be asked for forever.
        throw new FailureError(
          `the server answered GET ${base}/chunks?from=${from} with next_from ${page.next_from}, which does ` +
            `not advance past ${from}: its chunk list cannot be walked, so ${path} cannot be checked against ` +
            "what it holds. Nothing was sent. Ask the server's operator to check the session",
        );
      }
      from = page.next_from;
    }
  } finally {
    await file.close();
  }
  if (at !== length) gap ??= at;
  // A gap is refused with or without `digest`: the bytes no chunk covers were never compared, and the
  // structural check after this one cannot see a line changed to another of the same length.
  if (gap !== null || (typeof digest === 'string' && chain !== digest)) {
    throw new UsageError(
      `the server's record of ${path} disagrees with itself: every chunk it lists (GET ${base}/chunks) ` +
        `matches this file, but ${
          gap !== null
            ? `they leave out byte ${gap} onwards of the ${length} bytes its index holds`
            : `their chained digest is ${chain} where its index says ${digest}`
        }. Nothing was sent. Ask the server's operator to check the session (hansard verify on its id; ` +
        'docs/audit.md) before uploading more to it',
    );
  }
}

/** Bytes read at a time when hashing a chunk: bounded whatever length the server claims. */
const HASH_BLOCK = 1024 * 1024;

/** SHA-256 (hex) of `length` bytes of `file` from `offset`, read in blocks of at most 1 MiB. */
async function hashRange(file: FileHandle, offset: number, length: number): Promise<string> {
  const hash = createHash('sha256');
  const block = Buffer.alloc(Math.min(HASH_BLOCK, Math.max(length, 1)));
  let done = 0;
  while (done < length) {
    const want = Math.min(block.length, length - done);
    const { bytesRead } = await file.read(block, 0, want, offset + done);
    if (bytesRead === 0) break;
    hash.update(block.subarray(0, bytesRead));
    done += bytesRead;
  }
  return hash.digest('hex');
}

const isCount = (n: unknown): n is number => typeof n === 'number' && Number.isSafeInteger(n) && n >= 0;

/**
 * The page of `GET …/chunks` in `body`, its numbers checked (non-negative safe integers, chunks of at
 * least one byte). @throws FailureError naming `what` when the server's answer is not a chunk list
 */
function pageOf(body: unknown, what: string): ChunkList {
  const page = body as Partial<ChunkList> | null;
  const ok =
    page !== null &&
    typeof page === 'object' &&
    Array.isArray(page.chunks) &&
    (page.next_from === null || isCount(page.next_from)) &&
    page.chunks.every(
      (c) =>
        c !== null &&
        typeof c === 'object' &&
        isCount(c.offset) &&
        isCount(c.length) &&
        c.length > 0 &&
        isCount(c.lines) &&
        typeof c.sha256 === 'string',
    );
  if (!ok) {
    throw new FailureError(
      `the server's answer to GET ${what} is not a chunk list (chunks of whole-number offset, length and ` +
        'lines, and a next_from): the file cannot be checked against what it holds. Nothing was sent',
    );
  }
  return page as ChunkList;
}

/** The `--json` `error.code` of a file that is not the segment the server holds (exit 2). */
export const SEGMENT_CHANGED = 'segment_changed';

/**
 * What to do about a segment file that differs from the server's copy (`path`: `…/{sid}/{w}.jsonl`):
 * put the uploaded lines back and append a correction event (README, "Corrections, never rewrites").
 * Not "copy it under a new writer id": its lines keep their event ids, which verify then reports as
 * `duplicate_id`.
 */
export function appendOnlyAdvice(path: string): string {
  const dir = dirname(path);
  const sid = basename(dir);
  const w = basename(path).replace(/\.jsonl$/, '');
  return (
    "A segment is append-only: put the file back as it was uploaded (the server's copy is " +
    `${sid}/segments/${w}.jsonl in the bundle of hansard export ${sid} --out ${sid}.tar), then record the ` +
    `change as a correction event appended to it: openSession('${dir}', { writerId: '${w}' }).correct({ ` +
    "target_id: '<the id of the event to change>', field, value, reason }) (README, \"Corrections, never " +
    'rewrites"). New events of another process go in a new writer of the session: openSession(\'' +
    `${dir}') picks a new writer id`
  );
}

/**
 * The refusal for chunk `c`, naming its first differing line when the server's bytes can be read.
 * `file.size` below `file.length` (the bytes the server holds) is said: the file was cut, or is another copy.
 */
async function differenceError(
  client: ApiClient,
  base: string,
  path: string,
  local: Uint8Array,
  c: Chunk,
  linesBefore: number,
  file: { size: number; length: number },
): Promise<UsageError> {
  const line = await firstDifferingLine(client, base, local, c).catch((err) => {
    // Without scope `read` (an ingest-only token) the server's bytes stay on the server.
    if (err instanceof ServerError && (err.status === 403 || err.status === 429)) return null;
    throw err;
  });
  const where =
    line === null
      ? `one of lines ${linesBefore + 1}–${c.lines} (bytes ${c.offset}–${c.offset + c.length - 1}) differs`
      : `line ${linesBefore + line} differs`;
  const cut =
    file.size < file.length ? ` (the file has ${file.size} bytes, the server holds ${file.length})` : '';
  return new UsageError(
    `${path} is not the segment the server has: ${where} from what was uploaded${cut} (SHA-256 of the ` +
      `chunk at offset ${c.offset}). The server keeps what it had. ${appendOnlyAdvice(path)}`,
    SEGMENT_CHANGED,
  );
}

/**
 * The 1-based line, within chunk `c`, where `local` (the file's bytes of that range) first differs from
 * the server's stored segment; null when they do not differ line by line (cannot happen when the digests
 * differ, but the answer is then the chunk's range). A line that lost its newline (a file cut just
 * before it) differs. Reads the segment only up to the chunk's end.
 * @throws ServerError (e.g. 403 without scope `read`)
 */
async function firstDifferingLine(
  client: ApiClient,
  base: string,
  local: Uint8Array,
  c: Chunk,
): Promise<number | null> {
  const res = await client.stream(`${base}/segment`);
  const reader = res.body!.getReader();
  async function* range(): AsyncGenerator<Uint8Array> {
    let at = 0;
    for (;;) {
      const { done, value } = await reader.read();
      if (done || at >= c.offset + c.length) return;
      const start = Math.max(0, c.offset - at);
      const end = Math.min(value.length, c.offset + c.length - at);
      if (start < end) yield value.subarray(start, end);
      at += value.length;
    }
  }
  try {
    const mine = splitLinesSync(local);
    let n = 0;
    for await (const theirs of splitLines(range())) {
      const ours = mine[n];
      n += 1;
      if (ours === undefined || ours.complete !== theirs.complete) return n;
      if (Buffer.compare(ours.bytes, theirs.bytes) !== 0) return n;
    }
    return n < mine.length ? n + 1 : null;
  } finally {
    // Not awaited: a cancel may never settle (seen with msw-mocked bodies), and nothing waits on it.
    void reader.cancel().catch(() => {});
  }
}

/** `bytes` cut at each newline (the newline dropped; a last line without one kept, `complete: false`). */
function splitLinesSync(bytes: Uint8Array): { bytes: Uint8Array; complete: boolean }[] {
  const out: { bytes: Uint8Array; complete: boolean }[] = [];
  let start = 0;
  while (start < bytes.length) {
    const nl = bytes.indexOf(0x0a, start);
    const end = nl < 0 ? bytes.length : nl;
    out.push({ bytes: bytes.subarray(start, end), complete: nl >= 0 });
    start = end + 1;
  }
  return out;
}
