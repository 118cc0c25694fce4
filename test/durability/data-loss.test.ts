/**
 * A segment file shorter than its index (cut behind the server's back: a restore from an old backup, a
 * disk that lost its tail) is data loss, and every answer says so (issue 8, item 1): verify reports
 * `data_loss` with the missing range; the writer, the segment download, every replay format, inspect and
 * attribution answer 500 `data_loss` before any byte; a chunk to that writer is refused the same way
 * instead of a 409 that sends the writer back to the offset it sent. And a file cut while it streams ends
 * the transfer broken, never as a clean short 200. Against the real `hansard serve` process.
 */
import { mkdtempSync, rmSync, truncateSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type ServeProcess, startServeProcess } from '../../harness/serve-process.js';
import { type ChunkedSegment, call, chunkedSegment, postChunk } from './segment-chunks.js';

const root = mkdtempSync(join(tmpdir(), 'hansard-loss-'));
const data = join(root, 'data');
let srv: ServeProcess;

beforeAll(async () => {
  srv = await startServeProcess({ dataDir: data });
});

afterAll(async () => {
  await srv?.close();
  rmSync(root, { recursive: true, force: true });
});

const segmentFile = (seg: { sid: string; w: string }) =>
  join(data, 'tenants', 'local', 'sessions', seg.sid, `${seg.w}.jsonl`);

async function upload(seg: ChunkedSegment): Promise<void> {
  let offset = 0;
  for (const chunk of seg.chunks) {
    const a = await postChunk(srv.url, srv.admin, seg, offset, chunk);
    expect(a.status, JSON.stringify(a.json)).toBe(201);
    offset += chunk.length;
  }
}

describe('a segment file cut behind the server’s back', () => {
  let seg: ChunkedSegment;
  let cut: number;
  const get = (path: string) => call(srv.url, srv.admin, 'GET', path);

  beforeAll(async () => {
    seg = chunkedSegment(join(root, 'work'), 48 * 1024, 16 * 1024);
    expect(seg.chunks.length).toBeGreaterThanOrEqual(3);
    await upload(seg);
    cut = seg.chunks[0]!.length + 100; // inside the second chunk
    truncateSync(segmentFile(seg), cut);
  });

  it('verify reports data_loss with the missing range (an error: ok is false), and checks what is left', async () => {
    const a = await get(`/v1/sessions/${seg.sid}/verify`);
    expect(a.status, a.bytes.toString()).toBe(200);
    expect(a.json.ok).toBe(false);
    const problems = a.json.problems as Array<Record<string, unknown>>;
    const loss = problems.filter((p) => p.code === 'data_loss');
    expect(loss).toEqual([
      expect.objectContaining({
        severity: 'error',
        w: seg.w,
        seq: null,
        line: null,
        range: { start: cut, end: seg.bytes.length },
      }),
    ]);
    expect(String(loss[0]!.message)).toMatch(`bytes [${cut}, ${seg.bytes.length})`);
    // The events before the cut are still read and checked.
    expect((a.json.summary as { events: number }).events).toBeGreaterThan(0);
  });

  for (const [what, path] of [
    ['the writer', (s: ChunkedSegment) => `/v1/sessions/${s.sid}/writers/${s.w}`],
    ['the segment download', (s: ChunkedSegment) => `/v1/sessions/${s.sid}/writers/${s.w}/segment`],
    ['the replay (ndjson)', (s: ChunkedSegment) => `/v1/sessions/${s.sid}/replay`],
    ['the replay (text)', (s: ChunkedSegment) => `/v1/sessions/${s.sid}/replay?format=text`],
    ['the raw replay', (s: ChunkedSegment) => `/v1/sessions/${s.sid}/replay?raw=1`],
    ['inspect', (s: ChunkedSegment) => `/v1/sessions/${s.sid}/inspect`],
    ['attribution', (s: ChunkedSegment) => `/v1/sessions/${s.sid}/attribution`],
  ] as const) {
    it(`${what} answers 500 data_loss naming the writer and the range, before any byte`, async () => {
      const a = await get(path(seg));
      expect(a.status, a.bytes.toString().slice(0, 300)).toBe(500);
      expect(a.json.error).toEqual({
        code: 'data_loss',
        message: expect.stringMatching(
          `the server has lost bytes \\[${cut}, ${seg.bytes.length}\\) of writer ${seg.w}'s segment`,
        ),
        details: { w: seg.w, range: { start: cut, end: seg.bytes.length } },
      });
    });
  }

  it('a chunk to that writer is refused with data_loss, not a 409 that names the offset it sent', async () => {
    const more = Buffer.from(
      `${JSON.stringify({ v: 3, sid: seg.sid, w: seg.w, seq: 999_999, id: 'x', ts: '2026-01-01T00:00:00Z', mono: 1, type: 'note', text: 'more' })}\n`,
    );
    const a = await postChunk(srv.url, srv.admin, seg, seg.bytes.length, more);
    expect(a.status, JSON.stringify(a.json)).toBe(500);
    expect(a.json.error!.code).toBe('data_loss');
    expect(a.json.error!.details).toEqual({ w: seg.w, range: { start: cut, end: seg.bytes.length } });
    expect(srv.stderr()).toMatch(/answered 500 data_loss/);
  });
});

describe('a segment file cut while it streams', () => {
  it('ends the transfer broken, not as a clean short 200', async () => {
    // Larger than what the sockets and streams between the file and the client buffer (a few MiB).
    const seg = chunkedSegment(join(root, 'work-big'), 32 * 1024 * 1024, 4 * 1024 * 1024, 32 * 1024);
    await upload(seg);
    const res = await fetch(`${srv.url}/v1/sessions/${seg.sid}/replay?raw=1`, {
      headers: { authorization: `Bearer ${srv.admin}` },
    });
    expect(res.status).toBe(200);
    const reader = res.body!.getReader();
    let got = (await reader.read()).value?.length ?? 0;
    expect(got).toBeGreaterThan(0);
    truncateSync(segmentFile(seg), 1024 * 1024);
    const outcome = await (async () => {
      try {
        for (;;) {
          const r = await reader.read();
          if (r.done) return 'ended cleanly';
          got += r.value.length;
        }
      } catch {
        return 'broken';
      }
    })();
    expect(outcome, `after ${got} of ${seg.bytes.length} bytes`).toBe('broken');
    expect(got).toBeLessThan(seg.bytes.length);
  });
});
