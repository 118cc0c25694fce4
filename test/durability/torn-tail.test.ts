/**
 * A segment whose bytes changed on disk while its length stayed (issue 8, durability attack A): a crash on
 * ext4/XFS often keeps a file's size but turns its tail into NUL bytes. Against the real `hansard serve`
 * process and its real files: a tail that no longer ends with a newline is data loss on every read (the
 * server never acknowledges a chunk that does not end with one), and verify hashes each chunk against the
 * SHA-256 it acknowledged, so a change that keeps every newline is found too (`chunk_digest_mismatch`).
 */
import { closeSync, mkdtempSync, openSync, readFileSync, rmSync, statSync, writeSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type ServeProcess, startServeProcess } from '../../harness/serve-process.js';
import { runHansard } from '../support/cli.js';
import { type ChunkedSegment, call, chunkedSegment, postChunk } from './segment-chunks.js';

const root = mkdtempSync(join(tmpdir(), 'hansard-torn-'));
let srv: ServeProcess;

beforeAll(async () => {
  srv = await startServeProcess({ dataDir: join(root, 'data') });
});

afterAll(async () => {
  await srv?.close();
  rmSync(root, { recursive: true, force: true });
});

const segmentFile = (seg: { sid: string; w: string }) =>
  join(srv.dataDir, 'tenants', 'local', 'sessions', seg.sid, `${seg.w}.jsonl`);

/** Overwrites `bytes.length` bytes of `path` at `at`, in place (the file keeps its size). */
function overwrite(path: string, at: number, bytes: Uint8Array): void {
  const fd = openSync(path, 'r+');
  try {
    writeSync(fd, bytes, 0, bytes.length, at);
  } finally {
    closeSync(fd);
  }
}

/** `hansard ARGS` in this process against the server. */
const hansard = (args: string[]) =>
  runHansard(args, { cwd: root, env: { HANSARD_URL: srv.url, HANSARD_TOKEN: srv.admin } });

const get = (path: string) => call(srv.url, srv.admin, 'GET', path);

describe('a stored segment whose last 1000 bytes turned into NULs, its size kept', () => {
  let seg: ChunkedSegment;
  let torn: { start: number; end: number };

  beforeAll(async () => {
    seg = chunkedSegment(join(root, 'work-nul'), 64 * 1024, 1024 * 1024);
    const up = await hansard(['upload', join(root, 'work-nul', seg.sid)]);
    expect(up.code, up.err).toBe(0);
    const file = segmentFile(seg);
    const size = statSync(file).size;
    expect(size).toBe(seg.bytes.length);
    overwrite(file, size - 1000, Buffer.alloc(1000));
    expect(statSync(file).size).toBe(size);
    // What is torn: from the byte after the last newline that survived to the end.
    torn = { start: seg.bytes.subarray(0, size - 1000).lastIndexOf(0x0a) + 1, end: size };
  });

  for (const [what, path] of [
    ['the replay (ndjson)', (s: ChunkedSegment) => `/v1/sessions/${s.sid}/replay`],
    ['the replay (text)', (s: ChunkedSegment) => `/v1/sessions/${s.sid}/replay?format=text`],
    ['the raw replay', (s: ChunkedSegment) => `/v1/sessions/${s.sid}/replay?raw=1`],
    ['the writer', (s: ChunkedSegment) => `/v1/sessions/${s.sid}/writers/${s.w}`],
    ['the segment download', (s: ChunkedSegment) => `/v1/sessions/${s.sid}/writers/${s.w}/segment`],
    ['inspect', (s: ChunkedSegment) => `/v1/sessions/${s.sid}/inspect`],
  ] as const) {
    it(`${what} answers 500 data_loss with the torn range, not a 200 with fewer lines`, async () => {
      const a = await get(path(seg));
      expect(a.status, a.bytes.toString().slice(0, 300)).toBe(500);
      expect(a.json.error!.code).toBe('data_loss');
      expect(a.json.error!.details).toEqual({ w: seg.w, range: torn });
    });
  }

  it('verify reports data_loss (an error) with the range, and `hansard verify SID` exits 1 naming it', async () => {
    const a = await get(`/v1/sessions/${seg.sid}/verify`);
    expect(a.status).toBe(200);
    expect(a.json.ok).toBe(false);
    expect(a.json.problems).toContainEqual(
      expect.objectContaining({ severity: 'error', code: 'data_loss', w: seg.w, range: torn }),
    );
    const cli = await hansard(['verify', seg.sid]);
    expect(cli.code).toBe(1);
    expect(cli.out).toMatch(
      new RegExp(`error\\s+data_loss\\s+${seg.w}: bytes \\[${torn.start}, ${torn.end}\\)`),
    );
    expect(cli.out).toMatch(/^NOT ok/m);
  });

  it('a chunk to that writer is refused with data_loss, not appended after the NULs', async () => {
    const more = Buffer.from(
      `${JSON.stringify({ v: 3, sid: seg.sid, w: seg.w, seq: 999_999, id: 'x', ts: '2026-01-01T00:00:00Z', mono: 1, type: 'note', text: 'more' })}\n`,
    );
    const before = readFileSync(segmentFile(seg));
    const a = await postChunk(srv.url, srv.admin, seg, seg.bytes.length, more);
    expect(a.status, JSON.stringify(a.json)).toBe(500);
    expect(a.json.error).toMatchObject({ code: 'data_loss', details: { w: seg.w, range: torn } });
    expect(readFileSync(segmentFile(seg)).equals(before)).toBe(true);
  });
});

describe('a stored chunk whose bytes changed but kept every newline', () => {
  it('verify reports chunk_digest_mismatch with that chunk’s range; the other chunks pass', async () => {
    const seg = chunkedSegment(join(root, 'work-flip'), 96 * 1024, 16 * 1024);
    expect(seg.chunks.length).toBeGreaterThanOrEqual(4);
    let offset = 0;
    for (const chunk of seg.chunks) {
      expect((await postChunk(srv.url, srv.admin, seg, offset, chunk)).status).toBe(201);
      offset += chunk.length;
    }
    expect((await get(`/v1/sessions/${seg.sid}/verify`)).json.ok).toBe(true);

    // Inside the third chunk, words changed: every line still valid JSON, the size the same. Only the
    // digest can tell.
    const start = seg.chunks[0]!.length + seg.chunks[1]!.length;
    const third = { start, end: start + seg.chunks[2]!.length };
    const at = seg.bytes.indexOf('quick brown', third.start);
    expect(at).toBeLessThan(third.end - 20);
    overwrite(segmentFile(seg), at, Buffer.from('QUICK BROWN'));

    const a = await get(`/v1/sessions/${seg.sid}/verify`);
    expect(a.status).toBe(200);
    expect(a.json.ok).toBe(false);
    const found = (a.json.problems as Array<Record<string, unknown>>).filter(
      (p) => p.code === 'chunk_digest_mismatch',
    );
    expect(found).toEqual([
      expect.objectContaining({ severity: 'error', w: seg.w, seq: null, line: null, range: third }),
    ]);
    expect(String(found[0]!.message)).toMatch(
      `bytes [${third.start}, ${third.end}) of ${seg.w}'s segment changed on disk: their SHA-256 differs from the one the server acknowledged`,
    );
    expect(a.json.summary).toMatchObject({ errors: 1 });
    const cli = await hansard(['verify', seg.sid]);
    expect(cli.code).toBe(1);
    expect(cli.out).toMatch(/error\s+chunk_digest_mismatch/);
  });
});
