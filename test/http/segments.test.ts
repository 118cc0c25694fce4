/**
 * What ingest records (DESIGN §5): a torn line is stored and quarantined, a segment still being written
 * arrives in complete lines, and concurrent uploads of the same chunk store it once.
 */
import { appendFileSync, readFileSync, writeFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { openSession } from '../../lib/log/index.js';
import { request } from '../support/http.js';
import { localReplay, readLocal, splitLines, writeSession } from '../support/segments.js';
import { useServer } from '../support/server.js';
import { postChunk, storedSegmentPath } from '../support/stored.js';

const srv = useServer({ tokens: { ingest: ['ingest'], reader: ['read'] } });
const { tokens } = srv;

const get = (path: string) => request(srv, 'GET', path, { token: tokens.reader });

describe('a segment with a torn line in the middle', () => {
  it('is stored as written; raw replay keeps the torn line, merged replay skips only it', async () => {
    // A writer is killed mid-line; the next run reopens its segment, which ends the torn line first.
    const s = openSession(srv.workDir, { agent: 'crashy', host: 'h', pid: 1 });
    const m = s.message({ user_id: 'priya', text: 'deploy it' });
    s.turnStart({ context_message_ids: [m.id] });
    s.close();
    const torn = `{"v":3,"sid":"${s.sid}","w":"${s.w}","seq":4,"id":"e_01`;
    appendFileSync(s.path, torn);
    const again = openSession(s.dir, { writerId: s.w });
    again.note({ author: 'crashy', text: 'resumed after a crash' });
    again.end({ reason: 'done' });
    const seg = readLocal({ sid: s.sid, w: s.w, dir: s.dir, path: s.path });
    const tornIndex = seg.lines.findIndex((l) => l.toString('utf8') === `${torn}\n`);
    expect(tornIndex).toBe(3);
    expect(seg.lines.length).toBeGreaterThan(tornIndex + 1);

    const a = await postChunk(srv, tokens.ingest, seg.sid, seg.w, 0, seg.bytes);
    expect(a.status, a.text).toBe(201);
    expect(a.json).toEqual({
      writer: seg.w,
      length: seg.bytes.length,
      lines: seg.lines.length,
      last_seq: seg.lines.length - 1,
    });

    const download = await get(`/v1/sessions/${seg.sid}/writers/${seg.w}/segment`);
    expect(download.status).toBe(200);
    expect(download.headers.get('content-type')).toContain('application/x-ndjson');
    expect(download.bytes.equals(seg.bytes)).toBe(true);

    const raw = await get(`/v1/sessions/${seg.sid}/replay?raw=1`);
    expect(raw.status).toBe(200);
    expect(splitLines(raw.bytes).map(String)).toContain(`${torn}\n`);
    expect(raw.bytes.equals(seg.bytes)).toBe(true);

    const merged = await get(`/v1/sessions/${seg.sid}/replay`);
    expect(merged.status).toBe(200);
    expect(merged.headers.get('content-type')).toContain('application/x-ndjson');
    expect(splitLines(merged.bytes).map(String)).not.toContain(`${torn}\n`);
    const expected = seg.lines.filter((_, i) => i !== tornIndex).map(String);
    expect(splitLines(merged.bytes).map(String)).toEqual(expected);
    for (const after of seg.lines.slice(tornIndex + 1)) expect(merged.text).toContain(String(after));
    expect(merged.text).toBe(await localReplay(seg.dir));
  });
});

describe('a segment whose last line is still being written', () => {
  it('is sent up to its last newline, then the rest once the line is complete', async () => {
    const full = writeSession(srv.workDir);
    // The file as a reader sees it while the writer is halfway through line 6.
    const cut = full.lines.slice(0, 5).reduce((n, l) => n + l.length, 0) + 20;
    writeFileSync(full.path, full.bytes.subarray(0, cut));
    const partial = readFileSync(full.path);
    expect(partial[partial.length - 1]).not.toBe(0x0a);
    const complete = partial.subarray(0, partial.lastIndexOf(0x0a) + 1);
    expect(complete.length).toBe(cut - 20);

    const first = await postChunk(srv, tokens.ingest, full.sid, full.w, 0, complete);
    expect(first.status, first.text).toBe(201);
    expect(first.json).toEqual({ writer: full.w, length: complete.length, lines: 5, last_seq: 5 });

    // The writer finishes the line and the segment.
    writeFileSync(full.path, full.bytes);
    const now = readFileSync(full.path);
    const held = await get(`/v1/sessions/${full.sid}/writers/${full.w}`);
    expect(held.json.length).toBe(complete.length);
    const rest = await postChunk(
      srv,
      tokens.ingest,
      full.sid,
      full.w,
      held.json.length,
      now.subarray(held.json.length),
    );
    expect(rest.status, rest.text).toBe(201);
    expect(rest.json).toEqual({
      writer: full.w,
      length: now.length,
      lines: full.lines.length,
      last_seq: full.lines.length,
    });

    expect(readFileSync(storedSegmentPath(srv, 'local', full.sid, full.w)).equals(now)).toBe(true);
    const replay = await get(`/v1/sessions/${full.sid}/replay`);
    expect(splitLines(replay.bytes).map(String)).toEqual(splitLines(now).map(String));
    expect(replay.text).toBe(await localReplay(full.dir));
  });
});

describe('concurrent uploads', () => {
  it('of the same first chunk: one 201, the others 200 with the same answer, stored once', async () => {
    for (let round = 0; round < 5; round++) {
      const seg = writeSession(srv.workDir);
      const answers = await Promise.all([
        postChunk(srv, tokens.ingest, seg.sid, seg.w, 0, seg.bytes),
        postChunk(srv, tokens.ingest, seg.sid, seg.w, 0, seg.bytes),
      ]);
      // ingest holds a writer's lock from reading its length to advancing it: the second is a retry
      expect(answers.map((a) => a.status).sort()).toEqual([200, 201]);
      expect(answers[0]!.json).toEqual(answers[1]!.json);
      expect(answers[0]!.json).toEqual({
        writer: seg.w,
        length: seg.bytes.length,
        lines: seg.lines.length,
        last_seq: seg.lines.length,
      });
      expect(readFileSync(storedSegmentPath(srv, 'local', seg.sid, seg.w)).equals(seg.bytes)).toBe(true);
      const w = await get(`/v1/sessions/${seg.sid}/writers/${seg.w}`);
      expect(w.json).toMatchObject({ length: seg.bytes.length, lines: seg.lines.length });
    }
  });

  it('of the same next chunk from four clients: exactly one 201, stored once', async () => {
    const seg = writeSession(srv.workDir);
    const head = Buffer.concat(seg.lines.slice(0, 2));
    const tail = seg.bytes.subarray(head.length);
    expect((await postChunk(srv, tokens.ingest, seg.sid, seg.w, 0, head)).status).toBe(201);
    const answers = await Promise.all(
      [0, 1, 2, 3].map(() => postChunk(srv, tokens.ingest, seg.sid, seg.w, head.length, tail)),
    );
    expect(answers.filter((a) => a.status === 201)).toHaveLength(1);
    expect(answers.filter((a) => a.status === 200)).toHaveLength(3);
    for (const a of answers) expect(a.json).toEqual(answers[0]!.json);
    expect(readFileSync(storedSegmentPath(srv, 'local', seg.sid, seg.w)).equals(seg.bytes)).toBe(true);
  });

  it('of different chunks at the same offset: one is stored, the other gets 409, nothing is mixed', async () => {
    for (let round = 0; round < 5; round++) {
      const seg = writeSession(srv.workDir);
      const head = Buffer.concat(seg.lines.slice(0, 2));
      expect((await postChunk(srv, tokens.ingest, seg.sid, seg.w, 0, head)).status).toBe(201);
      const a = seg.bytes.subarray(head.length);
      const b = Buffer.concat(seg.lines.slice(2, 4));
      const [ra, rb] = await Promise.all([
        postChunk(srv, tokens.ingest, seg.sid, seg.w, head.length, a),
        postChunk(srv, tokens.ingest, seg.sid, seg.w, head.length, b),
      ]);
      expect([ra.status, rb.status].sort()).toEqual([201, 409]);
      const winner = ra.status === 201 ? a : b;
      const w = await get(`/v1/sessions/${seg.sid}/writers/${seg.w}`);
      expect(w.json.length).toBe(head.length + winner.length);
      const stored = readFileSync(storedSegmentPath(srv, 'local', seg.sid, seg.w));
      expect(stored.equals(Buffer.concat([head, winner]))).toBe(true);
      const download = await get(`/v1/sessions/${seg.sid}/writers/${seg.w}/segment`);
      expect(download.bytes.equals(Buffer.concat([head, winner]))).toBe(true);
    }
  });
});
