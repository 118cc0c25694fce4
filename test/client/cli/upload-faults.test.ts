/**
 * The upload client against faults (DESIGN §4 chunk route, §6 `hansard upload`): a real hansard server
 * in-process, with msw in front of it injecting 5xx, 429, network errors and lost answers, then letting
 * the request through to the server. Every case ends with the server holding the file, each byte once.
 */
import { appendFileSync, mkdtempSync, readFileSync, statSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { bypass, HttpResponse, http, passthrough } from 'msw';
import { describe, expect, it } from 'vitest';
import { ApiClient, ServerError } from '../../../lib/client/api/client.js';
import { UsageError } from '../../../lib/client/api/errors.js';
import { uploadSession } from '../../../lib/client/api/upload.js';
import { openSession } from '../../../lib/log/write/writer.js';
import { useMswServer } from '../../support/msw-server.js';

const CHUNK = 4096;

const srv = useMswServer();
const { msw } = srv;

function client(): ApiClient {
  return new ApiClient({ url: srv.url, token: srv.token, minTimeoutMs: 5 });
}

interface Segment {
  dir: string;
  sid: string;
  w: string;
  path: string;
}

/** A new session of one writer: `writer.start`, `notes` notes of about `noteBytes` each, `writer.end`. */
function makeSession(notes: number, noteBytes = 150): Segment {
  const writer = openSession(mkdtempSync(join(srv.tmp, 'src-')), { agent: 'fault-test' });
  for (let i = 0; i < notes; i++) {
    writer.note({ author: 'tester', text: `note ${i} ${'x'.repeat(noteBytes)}` });
  }
  writer.end();
  return { dir: writer.dir, sid: writer.sid, w: writer.w, path: writer.path };
}

/** The chunk route of a segment, for msw handlers. */
function chunkRoute(seg: Segment): string {
  return `${srv.url}/v1/sessions/${seg.sid}/writers/${seg.w}/chunks`;
}

function offsetOf(request: Request): number {
  return Number(new URL(request.url).searchParams.get('offset'));
}

/** What the server stores of a writer: its index record and its segment bytes. */
async function stored(seg: Segment): Promise<{ length: number; lines: number; bytes: Buffer }> {
  const headers = { authorization: `Bearer ${srv.token}` };
  const base = `${srv.url}/v1/sessions/${seg.sid}/writers/${seg.w}`;
  const info = await fetch(base, { headers });
  expect(info.status).toBe(200);
  const { length, lines } = (await info.json()) as { length: number; lines: number };
  const res = await fetch(`${base}/segment`, { headers });
  expect(res.status).toBe(200);
  return { length, lines, bytes: Buffer.from(await res.arrayBuffer()) };
}

function lineCount(bytes: Buffer): number {
  return bytes.toString('utf8').split('\n').length - 1;
}

/** Asserts the server holds exactly the file (or its first `upTo` bytes), each line once. */
async function expectStoredEqualsFile(seg: Segment, upTo?: number): Promise<void> {
  const file = readFileSync(seg.path).subarray(0, upTo);
  const s = await stored(seg);
  expect(s.length).toBe(file.length);
  expect(s.bytes.equals(file)).toBe(true);
  expect(s.lines).toBe(lineCount(file));
}

/** Records, for every chunk POST the server answered, its offset, body length and status. */
interface Accepted {
  offset: number;
  bytes: number;
  status: number;
}

describe('uploadSession against faults', { timeout: 60_000 }, () => {
  it('retries two 503 answers to chunk POSTs and stores the segment once', async () => {
    const seg = makeSession(3);
    let posts = 0;
    msw.use(
      http.post(chunkRoute(seg), () => {
        posts += 1;
        if (posts <= 2) return new HttpResponse('service unavailable', { status: 503 });
        return passthrough();
      }),
    );
    const r = await uploadSession(seg.dir, { client: client() });
    expect(posts).toBe(3);
    expect(r.sid).toBe(seg.sid);
    expect(r.segments).toHaveLength(1);
    expect(r.segments[0]).toMatchObject({ w: seg.w, length: statSync(seg.path).size, chunks: 1 });
    await expectStoredEqualsFile(seg);
  });

  it('waits for Retry-After after a 429 and then succeeds', async () => {
    const seg = makeSession(3);
    const times: number[] = [];
    msw.use(
      http.post(chunkRoute(seg), () => {
        times.push(performance.now());
        if (times.length === 1) {
          return HttpResponse.json(
            { error: { code: 'rate_limited', message: 'slow down', details: {} } },
            { status: 429, headers: { 'retry-after': '1' } },
          );
        }
        return passthrough();
      }),
    );
    const r = await uploadSession(seg.dir, { client: client() });
    expect(times).toHaveLength(2);
    expect(times[1]! - times[0]!).toBeGreaterThanOrEqual(900);
    expect(r.segments[0]!.length).toBe(statSync(seg.path).size);
    await expectStoredEqualsFile(seg);
  });

  it('retries after a network error', async () => {
    const seg = makeSession(3);
    let posts = 0;
    msw.use(
      http.post(chunkRoute(seg), () => {
        posts += 1;
        if (posts === 1) return HttpResponse.error();
        return passthrough();
      }),
    );
    const r = await uploadSession(seg.dir, { client: client() });
    expect(posts).toBe(2);
    expect(r.segments[0]!.length).toBe(statSync(seg.path).size);
    await expectStoredEqualsFile(seg);
  });

  it('retries a chunk whose answer was lost after the server stored it: 200, nothing duplicated', async () => {
    const seg = makeSession(40);
    const answers: Accepted[] = [];
    let lost = false;
    msw.use(
      http.post(chunkRoute(seg), async ({ request }) => {
        const offset = offsetOf(request);
        const bytes = (await request.clone().arrayBuffer()).byteLength;
        const res = await fetch(bypass(request));
        answers.push({ offset, bytes, status: res.status });
        if (!lost && res.status === 201 && offset > 0) {
          // the server stored the second chunk; the client never hears it
          lost = true;
          await res.text();
          return HttpResponse.json(
            { error: { code: 'internal', message: 'proxy failure', details: {} } },
            { status: 500 },
          );
        }
        return res;
      }),
    );
    const r = await uploadSession(seg.dir, { client: client(), maxChunkBytes: CHUNK });
    expect(lost).toBe(true);
    const lostAt = answers.findIndex((a) => a.offset > 0);
    expect(answers[lostAt]!.status).toBe(201);
    // the retry of the same chunk is recognised as one: 200, and the same offset
    expect(answers[lostAt + 1]).toEqual({ ...answers[lostAt]!, status: 200 });
    expect(answers.filter((a) => a.status === 201).reduce((n, a) => n + a.bytes, 0)).toBe(
      statSync(seg.path).size,
    );
    expect(r.segments[0]!.length).toBe(statSync(seg.path).size);
    await expectStoredEqualsFile(seg);
  });

  it('gives up with ServerError on a persistent 503, and a later upload resumes at the offset the server reports', async () => {
    const seg = makeSession(60);
    const size = statSync(seg.path).size;
    expect(size).toBeGreaterThan(4 * CHUNK);
    const offsets: number[] = [];
    let faultAt: number | null = null;
    const accepted: Accepted[] = [];
    msw.use(
      http.post(chunkRoute(seg), async ({ request }) => {
        const offset = offsetOf(request);
        if (!offsets.includes(offset)) offsets.push(offset);
        if (faultAt === null && offsets.indexOf(offset) === 2) faultAt = offset;
        if (offset === faultAt) return new HttpResponse('unavailable', { status: 503 });
        const bytes = (await request.clone().arrayBuffer()).byteLength;
        const res = await fetch(bypass(request));
        accepted.push({ offset, bytes, status: res.status });
        return res;
      }),
    );
    const failed = uploadSession(seg.dir, { client: client(), maxChunkBytes: CHUNK });
    await expect(failed).rejects.toBeInstanceOf(ServerError);
    await expect(failed).rejects.toMatchObject({ status: 503 });
    expect(faultAt).not.toBeNull();
    expect(accepted.map((a) => a.status)).toEqual([201, 201]);
    const held = (await stored(seg)).length;
    expect(held).toBe(faultAt);
    await expectStoredEqualsFile(seg, held);

    // the fault is gone: the next upload starts where the server stopped
    faultAt = -1;
    accepted.length = 0;
    const r = await uploadSession(seg.dir, { client: client(), maxChunkBytes: CHUNK });
    expect(accepted[0]!.offset).toBe(held);
    expect(accepted.every((a) => a.status === 201)).toBe(true);
    let next = held;
    for (const a of accepted) {
      expect(a.offset).toBe(next);
      next += a.bytes;
    }
    expect(next).toBe(size);
    expect(r.segments[0]).toMatchObject({ length: size, sent_bytes: size - held, pending_bytes: 0 });
    await expectStoredEqualsFile(seg);
  });

  it('two concurrent uploads of one directory that split it differently both resolve (409 offset_mismatch, resync)', async () => {
    const seg = makeSession(60);
    const size = statSync(seg.path).size;
    const statuses: number[] = [];
    msw.use(
      http.post(chunkRoute(seg), async ({ request }) => {
        const res = await fetch(bypass(request));
        statuses.push(res.status);
        return res;
      }),
    );
    // Different chunk sizes: one uploader's chunks are not retries of the other's, so the one behind gets
    // 409 with the server's length on (nearly) every chunk and resumes from there.
    const [ra, rb] = await Promise.all([
      uploadSession(seg.dir, { client: client(), maxChunkBytes: CHUNK }),
      uploadSession(seg.dir, { client: client(), maxChunkBytes: CHUNK - 1000 }),
    ]);
    expect(statuses).toContain(409);
    expect(ra.segments[0]!.length).toBe(size);
    expect(rb.segments[0]!.length).toBe(size);
    await expectStoredEqualsFile(seg);
  });

  it('two concurrent uploads that split alike both resolve: the later copy of each chunk is a retry (200)', async () => {
    const seg = makeSession(60);
    const size = statSync(seg.path).size;
    const answers: Accepted[] = [];
    msw.use(
      http.post(chunkRoute(seg), async ({ request }) => {
        const bytes = (await request.clone().arrayBuffer()).byteLength;
        const res = await fetch(bypass(request));
        answers.push({ offset: offsetOf(request), bytes, status: res.status });
        return res;
      }),
    );
    const results = await Promise.all([
      uploadSession(seg.dir, { client: client(), maxChunkBytes: CHUNK }),
      uploadSession(seg.dir, { client: client(), maxChunkBytes: CHUNK }),
    ]);
    for (const r of results) expect(r.segments[0]!.length).toBe(size);
    expect(answers.every((a) => a.status === 200 || a.status === 201)).toBe(true);
    const created = answers.filter((a) => a.status === 201);
    expect(created.reduce((n, a) => n + a.bytes, 0)).toBe(size);
    expect(new Set(created.map((a) => a.offset)).size).toBe(created.length);
    await expectStoredEqualsFile(seg);
  });

  it('sends complete lines only: an unfinished last line waits for the next upload', async () => {
    const seg = makeSession(5);
    const full = readFileSync(seg.path);
    const lastStart = full.subarray(0, -1).lastIndexOf(0x0a) + 1;
    const cut = lastStart + 20;
    writeFileSync(seg.path, full.subarray(0, cut));

    const first = await uploadSession(seg.dir, { client: client() });
    expect(first.segments[0]).toMatchObject({ length: lastStart, pending_bytes: cut - lastStart });
    await expectStoredEqualsFile(seg, lastStart);

    appendFileSync(seg.path, full.subarray(cut));
    const second = await uploadSession(seg.dir, { client: client() });
    expect(second.segments[0]).toMatchObject({
      length: full.length,
      sent_bytes: full.length - lastStart,
      sent_lines: 1,
      pending_bytes: 0,
    });
    await expectStoredEqualsFile(seg);
  });

  it('refuses a line larger than a chunk with a UsageError naming the line and the file', async () => {
    const writer = openSession(mkdtempSync(join(srv.tmp, 'src-')), { agent: 'fault-test' });
    writer.note({ author: 'tester', text: 'small' });
    writer.note({ author: 'tester', text: 'y'.repeat(CHUNK + 100) });
    writer.end();
    const failed = uploadSession(writer.dir, { client: client(), maxChunkBytes: CHUNK });
    await expect(failed).rejects.toBeInstanceOf(UsageError);
    await expect(failed).rejects.toThrow(/line 3\b/);
    await expect(failed).rejects.toThrow(writer.path);
  });
});
