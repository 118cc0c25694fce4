/**
 * Before `hansard upload` appends to a segment the server already holds part of, it checks that the
 * file's first bytes are still the ones the server acknowledged: each chunk's SHA-256, listed by
 * `GET …/writers/{w}/chunks`, against the same byte range of the file (issue 15 item 1;
 * `test/fixtures/cases/05b-*`: a line changed to another of the same length, which a comparison of
 * lengths and line counts cannot see). A segment is append-only, so a difference is refused, naming the
 * first line that differs: exactly when the token may read the segment back (scope `read`), else the
 * lines of the chunk it is in.
 */
import { createHash } from 'node:crypto';
import { open } from 'node:fs/promises';
import { splitLines } from '../log/reader.js';
import type { ChunkList } from '../service/writer-chunks.js';
import { type ApiClient, ServerError } from './client.js';
import { UsageError } from './errors.js';

type Chunk = ChunkList['chunks'][number];

/**
 * Checks the file at `path` against the digests of the server's chunks of writer `base`
 * (`/v1/sessions/{sid}/writers/{w}`) up to byte `length`. Returns quietly when they all match, or when
 * the server does not list chunk digests (an older server: the caller's structural check stands).
 * @throws UsageError naming the first differing line when an uploaded byte changed
 */
export async function checkUploadedDigests(
  client: ApiClient,
  base: string,
  path: string,
  length: number,
): Promise<void> {
  const file = await open(path, 'r');
  try {
    let from = 0;
    let linesBefore = 0;
    while (from < length) {
      const res = await client.request('GET', `${base}/chunks?from=${from}`, { allow404: true });
      if (res.status === 404) return;
      const page = res.body as ChunkList;
      for (const c of page.chunks) {
        if (c.offset + c.length > length) return;
        const bytes = Buffer.alloc(c.length);
        const { bytesRead } = await file.read(bytes, 0, c.length, c.offset);
        const sha = createHash('sha256').update(bytes.subarray(0, bytesRead)).digest('hex');
        if (bytesRead !== c.length || sha !== c.sha256) {
          throw await differenceError(client, base, path, bytes.subarray(0, bytesRead), c, linesBefore);
        }
        linesBefore = c.lines;
      }
      if (page.next_from === null || page.chunks.length === 0) return;
      from = page.next_from;
    }
  } finally {
    await file.close();
  }
}

const APPEND_ONLY =
  'A segment is append-only: record a change as a correction event, or upload the file as a new writer';

/** The refusal for chunk `c`, naming its first differing line when the server's bytes can be read. */
async function differenceError(
  client: ApiClient,
  base: string,
  path: string,
  local: Uint8Array,
  c: Chunk,
  linesBefore: number,
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
  return new UsageError(
    `${path} is not the segment the server has: ${where} from what was uploaded (SHA-256 of the chunk at ` +
      `offset ${c.offset}). The server keeps what it had. ${APPEND_ONLY}`,
  );
}

/**
 * The 1-based line, within chunk `c`, where `local` (the file's bytes of that range) first differs from
 * the server's stored segment; null when they do not differ line by line (cannot happen when the digests
 * differ, but the answer is then the chunk's range). Reads the segment only up to the chunk's end.
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
      if (ours === undefined || Buffer.compare(ours, theirs.bytes) !== 0) return n;
    }
    return n < mine.length ? n + 1 : null;
  } finally {
    await reader.cancel().catch(() => {});
  }
}

/** `bytes` cut at each newline (the newline dropped; a last line without one kept). */
function splitLinesSync(bytes: Uint8Array): Uint8Array[] {
  const out: Uint8Array[] = [];
  let start = 0;
  while (start < bytes.length) {
    let nl = bytes.indexOf(0x0a, start);
    if (nl < 0) nl = bytes.length;
    out.push(bytes.subarray(start, nl));
    start = nl + 1;
  }
  return out;
}
