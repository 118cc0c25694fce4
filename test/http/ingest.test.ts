/**
 * Chunk ingest over real HTTP (DESIGN §4 chunk route, §5 "What ingest refuses and what it records"):
 * appends, retries, conflicts and every refusal, each refusal leaving the stored bytes and the writer's
 * index exactly as they were.
 */
import { readFileSync } from 'node:fs';
import { beforeAll, describe, expect, it } from 'vitest';
import { newId } from '../../lib/log/index.js';
import { MAX_CHUNK_BYTES } from '../../lib/service/index.js';
import { request } from '../support/http.js';
import { type LocalSegment, writeSession } from '../support/segments.js';
import { mint, useServer } from '../support/server.js';
import { expectRefusedUnchanged, postChunk, storedSegmentPath } from '../support/stored.js';

const srv = useServer({ tokens: { ingest: ['ingest'], reader: ['read'] } });
const { tokens } = srv;

const cat = (parts: Buffer[]) => Buffer.concat(parts);

describe('POST /v1/sessions/{sid}/writers/{w}/chunks', () => {
  let seg: LocalSegment;
  let first: Buffer;
  let second: Buffer;

  beforeAll(() => {
    seg = writeSession(srv.workDir);
    first = cat(seg.lines.slice(0, 3));
    second = cat(seg.lines.slice(3));
  });

  it('appends a new segment with 201 and answers {writer,length,lines,last_seq}', async () => {
    const a = await postChunk(srv, tokens.ingest, seg.sid, seg.w, 0, first);
    expect(a.status, a.text).toBe(201);
    expect(a.json).toEqual({ writer: seg.w, length: first.length, lines: 3, last_seq: 3 });
  });

  it('appends the next chunk at the stored length with 201', async () => {
    const a = await postChunk(srv, tokens.ingest, seg.sid, seg.w, first.length, second);
    expect(a.status, a.text).toBe(201);
    expect(a.json).toEqual({
      writer: seg.w,
      length: seg.bytes.length,
      lines: seg.lines.length,
      last_seq: seg.lines.length,
    });
    expect(readFileSync(storedSegmentPath(srv, 'local', seg.sid, seg.w)).equals(seg.bytes)).toBe(true);
    const w = await request(srv, 'GET', `/v1/sessions/${seg.sid}/writers/${seg.w}`, { token: tokens.reader });
    expect(w.status).toBe(200);
    expect(w.json).toMatchObject({
      writer: seg.w,
      length: seg.bytes.length,
      lines: seg.lines.length,
      last_seq: seg.lines.length,
      ended: true,
      agent: 'test-agent',
    });
  });

  it('answers a retry of an accepted chunk at its offset with 200 and the same answer', async () => {
    const again = await postChunk(srv, tokens.ingest, seg.sid, seg.w, 0, first);
    expect(again.status, again.text).toBe(200);
    expect(again.json).toEqual({ writer: seg.w, length: first.length, lines: 3, last_seq: 3 });
    const again2 = await postChunk(srv, tokens.ingest, seg.sid, seg.w, first.length, second);
    expect(again2.status).toBe(200);
    expect(again2.json).toEqual({
      writer: seg.w,
      length: seg.bytes.length,
      lines: seg.lines.length,
      last_seq: seg.lines.length,
    });
    expect(readFileSync(storedSegmentPath(srv, 'local', seg.sid, seg.w)).equals(seg.bytes)).toBe(true);
  });

  it('refuses a chunk at a wrong offset with 409 and the expected offset', async () => {
    const probe = { token: tokens.ingest, sid: seg.sid, w: seg.w };
    const extra = Buffer.from(`${seg.lines[1]!.toString('utf8')}`);
    for (const offset of [0, 1, first.length, seg.bytes.length + 10]) {
      const err = await expectRefusedUnchanged(
        srv,
        probe,
        () => postChunk(srv, tokens.ingest, seg.sid, seg.w, offset, extra),
        409,
        'offset_mismatch',
      );
      expect(err.details).toEqual({ expected_offset: seg.bytes.length });
    }
  });

  it('refuses a new segment whose first line is not writer.start with 400 naming line 1', async () => {
    const other = writeSession(srv.workDir);
    const probe = { token: tokens.ingest, sid: other.sid, w: other.w };
    const err = await expectRefusedUnchanged(
      srv,
      probe,
      () => postChunk(srv, tokens.ingest, other.sid, other.w, 0, cat(other.lines.slice(1))),
      400,
      'missing_writer_start',
    );
    expect(err.details.line).toBe(1);
    // A writer.start of another writer does not open this one either.
    const err2 = await expectRefusedUnchanged(
      srv,
      probe,
      () => postChunk(srv, tokens.ingest, other.sid, newId('w'), 0, other.bytes),
      400,
      'missing_writer_start',
    );
    expect(err2.details.line).toBe(1);
    // A torn first line is not a parseable writer.start.
    const torn = Buffer.from(`${other.lines[0]!.toString('utf8').slice(0, 40)}\n`);
    const err3 = await expectRefusedUnchanged(
      srv,
      probe,
      () => postChunk(srv, tokens.ingest, other.sid, other.w, 0, cat([torn, ...other.lines.slice(1)])),
      400,
      'missing_writer_start',
    );
    expect(err3.details.line).toBe(1);
  });

  it('refuses a line that names another session or writer with 400 naming the line', async () => {
    const probe = { token: tokens.ingest, sid: seg.sid, w: seg.w };
    // Another writer of the same session: its lines name the right sid but another w.
    const sibling = writeSession(srv.workDir, { sid: seg.sid });
    // Another session altogether.
    const stranger = writeSession(srv.workDir);
    const cases: [Buffer, number][] = [
      [cat([sibling.lines[1]!]), seg.lines.length + 1],
      [cat([stranger.lines[2]!]), seg.lines.length + 1],
      // a good line of this writer first, then the misrouted one: the second line of the chunk is named
      [cat([seg.lines[2]!, stranger.lines[2]!]), seg.lines.length + 2],
    ];
    for (const [body, line] of cases) {
      const err = await expectRefusedUnchanged(
        srv,
        probe,
        () => postChunk(srv, tokens.ingest, seg.sid, seg.w, seg.bytes.length, body),
        400,
        'misrouted_line',
      );
      expect(err.details.line).toBe(line);
    }
    // A JSON object without a complete envelope still may not name another writer.
    const loose = Buffer.from(`${JSON.stringify({ sid: seg.sid, w: sibling.w, note: 'no envelope' })}\n`);
    const err = await expectRefusedUnchanged(
      srv,
      probe,
      () => postChunk(srv, tokens.ingest, seg.sid, seg.w, seg.bytes.length, loose),
      400,
      'misrouted_line',
    );
    expect(err.details.line).toBe(seg.lines.length + 1);
    // In a new segment too, past its writer.start.
    const fresh = writeSession(srv.workDir);
    const freshProbe = { token: tokens.ingest, sid: fresh.sid, w: fresh.w };
    const err2 = await expectRefusedUnchanged(
      srv,
      freshProbe,
      () =>
        postChunk(
          srv,
          tokens.ingest,
          fresh.sid,
          fresh.w,
          0,
          cat([fresh.lines[0]!, fresh.lines[1]!, stranger.lines[3]!]),
        ),
      400,
      'misrouted_line',
    );
    expect(err2.details.line).toBe(3);
  });

  it('refuses a body over 5 MiB with 413', async () => {
    const probe = { token: tokens.ingest, sid: seg.sid, w: seg.w };
    const template = seg.lines[2]!;
    const copies = Math.ceil((MAX_CHUNK_BYTES + 1) / template.length);
    const body = Buffer.concat(Array<Buffer>(copies).fill(template)).subarray(0, MAX_CHUNK_BYTES + 1);
    // the last byte must be a newline so that only the size is wrong
    body[body.length - 1] = 0x0a;
    expect(body.length).toBe(5 * 1024 * 1024 + 1);
    const err = await expectRefusedUnchanged(
      srv,
      probe,
      () => postChunk(srv, tokens.ingest, seg.sid, seg.w, seg.bytes.length, body),
      413,
      'payload_too_large',
    );
    expect(err.details.max_bytes).toBe(MAX_CHUNK_BYTES);
  });

  it('refuses a streamed body (no content-length) over 5 MiB with 413', async () => {
    const probe = { token: tokens.ingest, sid: seg.sid, w: seg.w };
    const line = seg.lines[2]!;
    const copies = Math.ceil((MAX_CHUNK_BYTES + 1) / line.length);
    await expectRefusedUnchanged(
      srv,
      probe,
      async () => {
        let sent = 0;
        const body = new ReadableStream<Uint8Array>({
          pull(controller) {
            if (sent === copies) controller.close();
            else {
              controller.enqueue(line);
              sent += 1;
            }
          },
        });
        const res = await fetch(
          `${srv.url}/v1/sessions/${seg.sid}/writers/${seg.w}/chunks?offset=${seg.bytes.length}`,
          {
            method: 'POST',
            headers: { authorization: `Bearer ${tokens.ingest}`, 'content-type': 'application/x-ndjson' },
            body,
            duplex: 'half',
          } as RequestInit,
        );
        const bytes = Buffer.from(await res.arrayBuffer());
        const text = bytes.toString('utf8');
        return { status: res.status, headers: res.headers, bytes, text, json: JSON.parse(text) };
      },
      413,
      'payload_too_large',
    );
  });

  it('accepts a body of exactly 5 MiB of lines', async () => {
    const big = writeSession(srv.workDir, { open: true });
    const head = big.lines[0]!;
    // ~1 KiB lines, so that 5 MiB stays under the 10,000 lines a chunk may hold
    const filler = Buffer.from(`${JSON.stringify({ pad: 'x'.repeat(1000) })}\n`);
    // writer.start, then as many copies of a line as fit while leaving room for a padding line
    const copies = Math.floor((MAX_CHUNK_BYTES - head.length - 64) / filler.length);
    const used = head.length + copies * filler.length;
    const padded = Buffer.from(`${JSON.stringify({ pad: 'x'.repeat(MAX_CHUNK_BYTES - used - 11) })}\n`);
    const body = Buffer.concat([head, ...Array<Buffer>(copies).fill(filler), padded]);
    expect(body.length).toBe(MAX_CHUNK_BYTES);
    const a = await postChunk(srv, tokens.ingest, big.sid, big.w, 0, body);
    expect(a.status, a.text).toBe(201);
    expect(a.json.length).toBe(MAX_CHUNK_BYTES);
  });

  it('refuses a body that does not end with a newline with 400 incomplete_line', async () => {
    const probe = { token: tokens.ingest, sid: seg.sid, w: seg.w };
    const body = cat([seg.lines[2]!, seg.lines[3]!.subarray(0, -1)]);
    await expectRefusedUnchanged(
      srv,
      probe,
      () => postChunk(srv, tokens.ingest, seg.sid, seg.w, seg.bytes.length, body),
      400,
      'incomplete_line',
    );
    // a new segment likewise: nothing of it is stored
    const fresh = writeSession(srv.workDir);
    await expectRefusedUnchanged(
      srv,
      { token: tokens.ingest, sid: fresh.sid, w: fresh.w },
      () => postChunk(srv, tokens.ingest, fresh.sid, fresh.w, 0, fresh.bytes.subarray(0, -1)),
      400,
      'incomplete_line',
    );
  });

  it('refuses an empty body with 400', async () => {
    const probe = { token: tokens.ingest, sid: seg.sid, w: seg.w };
    await expectRefusedUnchanged(
      srv,
      probe,
      () => postChunk(srv, tokens.ingest, seg.sid, seg.w, seg.bytes.length, ''),
      400,
      'empty_body',
    );
    const fresh = writeSession(srv.workDir);
    await expectRefusedUnchanged(
      srv,
      { token: tokens.ingest, sid: fresh.sid, w: fresh.w },
      () => postChunk(srv, tokens.ingest, fresh.sid, fresh.w, 0, ''),
      400,
      'empty_body',
    );
  });

  it('refuses a request without a token with 401', async () => {
    const probe = { token: tokens.ingest, sid: seg.sid, w: seg.w };
    const fresh = writeSession(srv.workDir);
    await expectRefusedUnchanged(
      srv,
      probe,
      () => postChunk(srv, null, seg.sid, seg.w, seg.bytes.length, seg.lines[2]!),
      401,
      'unauthorized',
    );
    await expectRefusedUnchanged(
      srv,
      { token: tokens.ingest, sid: fresh.sid, w: fresh.w },
      () => postChunk(srv, null, fresh.sid, fresh.w, 0, fresh.bytes),
      401,
      'unauthorized',
    );
    // a malformed or unknown token is the same refusal
    for (const bad of ['hns_short', `hns_${'A'.repeat(43)}`, `${srv.admin}x`]) {
      await expectRefusedUnchanged(
        srv,
        { token: tokens.ingest, sid: fresh.sid, w: fresh.w },
        () => postChunk(srv, bad, fresh.sid, fresh.w, 0, fresh.bytes),
        401,
        'unauthorized',
      );
    }
  });

  it('refuses a token without the ingest scope with 403', async () => {
    const fresh = writeSession(srv.workDir);
    const probe = { token: tokens.ingest, sid: fresh.sid, w: fresh.w };
    for (const scopes of [['read'], ['report'], ['board'], ['admin'], ['read', 'report', 'board', 'admin']]) {
      const token = await mint(srv, 'local', scopes as never);
      const err = await expectRefusedUnchanged(
        srv,
        probe,
        () => postChunk(srv, token, fresh.sid, fresh.w, 0, fresh.bytes),
        403,
        'forbidden',
      );
      expect(err.details.required).toEqual(['ingest']);
    }
  });

  it('refuses invalid ids in the path with 400 invalid_id', async () => {
    const probe = { token: tokens.ingest, sid: seg.sid, w: seg.w };
    const paths: [string, string, string][] = [
      ['s_bad', seg.w, 'sid'],
      ['..%2Fetc', seg.w, 'sid'],
      ['..%2F..%2F..%2Fetc%2Fpasswd', seg.w, 'sid'],
      [seg.sid.toLowerCase(), seg.w, 'sid'],
      [seg.w, seg.w, 'sid'],
      [seg.sid, 'w_bad', 'w'],
      [seg.sid, '..%2F..%2Fstate.sqlite', 'w'],
      [seg.sid, seg.sid, 'w'],
      [seg.sid, `${seg.w}.jsonl`, 'w'],
    ];
    for (const [sid, w, param] of paths) {
      const err = await expectRefusedUnchanged(
        srv,
        probe,
        () =>
          request(srv, 'POST', `/v1/sessions/${sid}/writers/${w}/chunks?offset=0`, {
            token: tokens.ingest,
            body: seg.bytes,
          }),
        400,
        'invalid_id',
      );
      expect(err.details).toEqual({ param });
    }
  });

  it('refuses a missing or malformed offset with 400', async () => {
    const fresh = writeSession(srv.workDir);
    const probe = { token: tokens.ingest, sid: fresh.sid, w: fresh.w };
    await expectRefusedUnchanged(
      srv,
      probe,
      () => postChunk(srv, tokens.ingest, fresh.sid, fresh.w, null, fresh.bytes),
      400,
      'bad_request',
    );
    for (const q of ['-1', 'abc', '1.5', '', '0x0', '0e0', '%200', '+0', '99999999999999999']) {
      await expectRefusedUnchanged(
        srv,
        probe,
        () =>
          request(srv, 'POST', `/v1/sessions/${fresh.sid}/writers/${fresh.w}/chunks?offset=${q}`, {
            token: tokens.ingest,
            body: fresh.bytes,
          }),
        400,
        'bad_request',
      );
    }
  });
});
