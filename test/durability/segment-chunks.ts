/**
 * A segment written by the library writer, cut into chunks at line boundaries, and the requests the
 * storage-fault tests send (issue 8).
 */
import { readFileSync, statSync } from 'node:fs';
import { openSession } from '../../lib/log/index.js';

/** A local segment and its chunks, in order; `chunks` concatenated are `bytes`. */
export interface ChunkedSegment {
  sid: string;
  w: string;
  bytes: Buffer;
  chunks: Buffer[];
}

/**
 * Writes a session of one writer under `root` with messages of about `lineBytes` (default 1 KiB) until
 * the segment holds `minBytes`, and cuts it into chunks of about `chunkBytes` (whole lines each).
 */
export function chunkedSegment(
  root: string,
  minBytes: number,
  chunkBytes: number,
  lineBytes = 1024,
): ChunkedSegment {
  const s = openSession(root, { agent: 'disk-filler', host: 'test-host', pid: 4242 });
  const text = 'the quick brown fox jumps over the lazy dog; '.repeat(Math.ceil(lineBytes / 45));
  for (let i = 0; statSync(s.path).size < minBytes; i++) {
    s.message({ user_id: 'priya', text: `${i}: ${text}` });
  }
  s.close();
  const bytes = readFileSync(s.path);
  const chunks: Buffer[] = [];
  let start = 0;
  while (start < bytes.length) {
    let end = bytes.indexOf(0x0a, Math.min(bytes.length - 1, start + chunkBytes - 1));
    if (end === -1) end = bytes.length - 1;
    chunks.push(bytes.subarray(start, end + 1));
    start = end + 1;
  }
  return { sid: s.sid, w: s.w, bytes, chunks };
}

/** An answer: status, the raw bytes, and the JSON body when it is JSON. */
export interface Reply {
  status: number;
  bytes: Buffer;
  json: { error?: { code: string; message: string; details: Record<string, unknown> } } & Record<
    string,
    unknown
  >;
}

/** One request with a bearer token; the body read whole (a broken transfer rejects). */
export async function call(
  url: string,
  token: string,
  method: string,
  path: string,
  body?: Uint8Array,
): Promise<Reply> {
  const res = await fetch(`${url}${path}`, {
    method,
    headers: {
      authorization: `Bearer ${token}`,
      ...(body ? { 'content-type': 'application/x-ndjson' } : {}),
    },
    ...(body ? { body } : {}),
  });
  const bytes = Buffer.from(await res.arrayBuffer());
  const json = (res.headers.get('content-type') ?? '').includes('application/json')
    ? JSON.parse(bytes.toString('utf8'))
    : {};
  return { status: res.status, bytes, json };
}

/** POSTs `chunk` at `offset` of the segment's writer. */
export function postChunk(
  url: string,
  token: string,
  seg: { sid: string; w: string },
  offset: number,
  chunk: Uint8Array,
): Promise<Reply> {
  return call(url, token, 'POST', `/v1/sessions/${seg.sid}/writers/${seg.w}/chunks?offset=${offset}`, chunk);
}
