/**
 * A data directory with entries of the wrong kind (issue 8, durability attack C): a file where a session's
 * folder should be (ENOTDIR, or EEXIST when the server makes the folder), a folder where a segment file
 * should be (EISDIR). Against the real `hansard serve` process with the layouts made on its real data
 * directory: every read and chunk answers 500 `storage_layout` for the operator (docs/operations.md), never
 * 500 `internal`, and never a `data_loss` whose range was taken from a folder's size; the log names the
 * entry; putting the layout back makes the session readable again.
 */
import { mkdirSync, mkdtempSync, renameSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type ServeProcess, startServeProcess } from '../../harness/serve-process.js';
import { newId } from '../../lib/log/index.js';
import { type ChunkedSegment, call, chunkedSegment, postChunk, type Reply } from './segment-chunks.js';

const root = mkdtempSync(join(tmpdir(), 'hansard-layout-'));
let srv: ServeProcess;

beforeAll(async () => {
  srv = await startServeProcess({ dataDir: join(root, 'data') });
});

afterAll(async () => {
  await srv?.close();
  rmSync(root, { recursive: true, force: true });
});

const sessionDir = (sid: string) => join(srv.dataDir, 'tenants', 'local', 'sessions', sid);
const get = (path: string) => call(srv.url, srv.admin, 'GET', path);

async function stored(name: string): Promise<ChunkedSegment> {
  const seg = chunkedSegment(join(root, name), 24 * 1024, 8 * 1024);
  let offset = 0;
  for (const chunk of seg.chunks) {
    expect((await postChunk(srv.url, srv.admin, seg, offset, chunk)).status).toBe(201);
    offset += chunk.length;
  }
  return seg;
}

/** A line of a new writer of `sid`: its writer.start. */
function writerStart(sid: string, w: string): Buffer {
  const ev = { v: 3, sid, w, seq: 1, id: w, ts: '2026-01-01T00:00:00Z', mono: 0, type: 'writer.start' };
  return Buffer.from(`${JSON.stringify({ ...ev, writer_id: w, meta: { agent: 'x' } })}\n`);
}

function expectLayout(a: Reply, what: string): void {
  expect(a.status, `${what}: ${a.bytes.toString().slice(0, 300)}`).toBe(500);
  expect(a.json.error!.code, what).toBe('storage_layout');
  expect(a.json.error!.message).toMatch(
    /data directory holds a file where a segment folder should be, or a folder where a segment file should be/,
  );
  expect(a.json.error!.message).toMatch(/docs\/operations\.md/);
  expect(a.json.error!.message).not.toContain(srv.dataDir);
}

const READS = [
  ['the writer', (s: ChunkedSegment) => `/v1/sessions/${s.sid}/writers/${s.w}`],
  ['the segment download', (s: ChunkedSegment) => `/v1/sessions/${s.sid}/writers/${s.w}/segment`],
  ['the replay', (s: ChunkedSegment) => `/v1/sessions/${s.sid}/replay`],
  ['the raw replay', (s: ChunkedSegment) => `/v1/sessions/${s.sid}/replay?raw=1`],
  ['verify', (s: ChunkedSegment) => `/v1/sessions/${s.sid}/verify`],
  ['inspect', (s: ChunkedSegment) => `/v1/sessions/${s.sid}/inspect`],
] as const;

describe('a file where a session folder should be (ENOTDIR)', () => {
  let seg: ChunkedSegment;
  beforeAll(async () => {
    seg = await stored('work-notdir');
    renameSync(sessionDir(seg.sid), `${sessionDir(seg.sid)}.aside`);
    writeFileSync(sessionDir(seg.sid), 'not a folder\n');
  });

  for (const [what, path] of READS) {
    it(`${what} answers 500 storage_layout`, async () => expectLayout(await get(path(seg)), what));
  }

  it('a chunk to its writer, and the first chunk of a new writer of it, answer 500 storage_layout', async () => {
    const more = await postChunk(srv.url, srv.admin, seg, seg.bytes.length, seg.chunks[0]!);
    expectLayout(more, 'a next chunk');
    expect(more.json.error!.details).toEqual({ expected_offset: seg.bytes.length });
    const w = newId('w');
    expectLayout(
      await postChunk(srv.url, srv.admin, { sid: seg.sid, w }, 0, writerStart(seg.sid, w)),
      'new writer',
    );
    expect(srv.stderr()).toMatch(/answered 500 storage_layout \((ENOTDIR)\)/);
    expect(srv.stderr()).toContain(sessionDir(seg.sid));
    expect(srv.stderr()).not.toMatch(/unhandled error/);
  });

  it('reads answer again once the folder is back', async () => {
    rmSync(sessionDir(seg.sid));
    renameSync(`${sessionDir(seg.sid)}.aside`, sessionDir(seg.sid));
    const a = await get(`/v1/sessions/${seg.sid}/replay?raw=1`);
    expect(a.status).toBe(200);
    expect(a.bytes.equals(seg.bytes)).toBe(true);
  });
});

describe('a folder where a segment file should be (EISDIR)', () => {
  let seg: ChunkedSegment;
  beforeAll(async () => {
    seg = await stored('work-isdir');
    const file = join(sessionDir(seg.sid), `${seg.w}.jsonl`);
    rmSync(file);
    // Larger than the segment's index would fit a folder's size; smaller would look like a cut file.
    mkdirSync(join(file, 'inside'), { recursive: true });
  });

  for (const [what, path] of READS) {
    it(`${what} answers 500 storage_layout, not data_loss with a range made up from the folder's size`, async () =>
      expectLayout(await get(path(seg)), what));
  }

  it('a chunk to its writer answers 500 storage_layout, and the log names the entry', async () => {
    expectLayout(await postChunk(srv.url, srv.admin, seg, seg.bytes.length, seg.chunks[0]!), 'a chunk');
    expect(srv.stderr()).toMatch(/answered 500 storage_layout \(EISDIR\)/);
    expect(srv.stderr()).toContain(join(sessionDir(seg.sid), `${seg.w}.jsonl`));
    expect(srv.stderr()).not.toMatch(/unhandled error/);
  });
});
