/**
 * Reading sessions back over real HTTP (DESIGN §4): the writer index, the session listing and its
 * cursor, replay as NDJSON and text, raw segments. The server's replay of uploaded segments is the
 * library's replay of the same local directory, byte for byte.
 */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { beforeAll, describe, expect, it } from 'vitest';
import { listSegments, newId } from '../../lib/log/index.js';
import { expectError, request } from '../support/http.js';
import { type LocalSegment, localReplay, readLocal, splitLines, writeSession } from '../support/segments.js';
import { makeTenant, mint, useServer } from '../support/server.js';
import { sleep, upload } from '../support/stored.js';

const FIXTURE = 'test/fixtures/multi-writer/s_01M8MB9XXBAS3J6TGHM02TT9G4';

const srv = useServer({ tokens: { ingest: ['ingest'], reader: ['read'] } });
const { tokens } = srv;

const get = (path: string, token: string | null = tokens.reader) => request(srv, 'GET', path, { token });

/** A session of two writers, both uploaded. */
async function twoWriterSession(): Promise<{ dir: string; segs: LocalSegment[] }> {
  const a = writeSession(srv.workDir, { agent: 'agent-a', text: 'first writer' });
  const b = writeSession(srv.workDir, { sid: a.sid, agent: 'agent-b', text: 'second writer' });
  for (const s of [a, b]) await upload(srv, tokens.ingest, s);
  return { dir: a.dir, segs: [a, b] };
}

describe('GET /v1/sessions/{sid}/writers/{w}', () => {
  it('answers what is stored of a writer, for an ingest or a read token', async () => {
    const seg = writeSession(srv.workDir);
    await upload(srv, tokens.ingest, seg);
    for (const token of [tokens.ingest, tokens.reader]) {
      const a = await get(`/v1/sessions/${seg.sid}/writers/${seg.w}`, token);
      expect(a.status).toBe(200);
      expect(a.json).toMatchObject({
        writer: seg.w,
        length: seg.bytes.length,
        lines: seg.lines.length,
        last_seq: seg.lines.length,
        ended: true,
      });
    }
  });

  it('answers 404 for a writer or a session it does not hold', async () => {
    const seg = writeSession(srv.workDir);
    await upload(srv, tokens.ingest, seg);
    expectError(srv, await get(`/v1/sessions/${seg.sid}/writers/${newId('w')}`), 404, 'not_found');
    expectError(srv, await get(`/v1/sessions/${newId('s')}/writers/${seg.w}`), 404, 'not_found');
    expectError(srv, await get(`/v1/sessions/${newId('s')}/writers/${newId('w')}/segment`), 404, 'not_found');
  });

  it('refuses a token with neither ingest nor read with 403', async () => {
    const board = await mint(srv, 'local', ['board', 'report']);
    const seg = writeSession(srv.workDir);
    await upload(srv, tokens.ingest, seg);
    expectError(srv, await get(`/v1/sessions/${seg.sid}/writers/${seg.w}`, board), 403, 'forbidden');
  });
});

describe('GET /v1/sessions', () => {
  let sids: string[];
  let token: string;

  beforeAll(async () => {
    // A tenant of its own, so that the listing holds exactly these sessions.
    const t = await makeTenant(srv, 'listing');
    token = t.admin;
    sids = [];
    for (let i = 0; i < 3; i++) {
      const seg = writeSession(srv.workDir);
      await upload(srv, t.admin, seg);
      sids.push(seg.sid);
      await sleep(5);
    }
  });

  it('lists the sessions newest first', async () => {
    const a = await get('/v1/sessions', token);
    expect(a.status).toBe(200);
    expect(a.json.sessions.map((s: { sid: string }) => s.sid)).toEqual([...sids].reverse());
    expect(a.json.next).toBeNull();
    expect(a.json.sessions[0]).toMatchObject({ writers: 1, lines: 9 });
    expect(a.json.sessions[0]).not.toHaveProperty('tenant');
  });

  it('pages with limit=1 through the next cursor', async () => {
    const seen: string[] = [];
    let path = '/v1/sessions?limit=1';
    for (let page = 0; page < 10; page++) {
      const a = await get(path, token);
      expect(a.status).toBe(200);
      expect(a.json.sessions).toHaveLength(1);
      seen.push(a.json.sessions[0].sid);
      if (a.json.next === null) break;
      expect(typeof a.json.next).toBe('string');
      path = `/v1/sessions?limit=1&cursor=${encodeURIComponent(a.json.next)}`;
    }
    expect(seen).toEqual([...sids].reverse());
  });

  it('refuses a cursor it did not give with 400', async () => {
    for (const cursor of ['garbage', 'bm90IGpzb24', Buffer.from('[1,2]').toString('base64url'), '%00']) {
      expectError(srv, await get(`/v1/sessions?cursor=${cursor}`, token), 400, 'invalid_cursor');
    }
  });

  it('refuses a limit outside 1..200 with 400', async () => {
    for (const limit of ['0', '201', 'ten', '-1']) {
      const err = expectError(srv, await get(`/v1/sessions?limit=${limit}`, token), 400, 'bad_request');
      expect(err.details).toEqual({ param: 'limit' });
    }
  });

  it('refuses an ingest-only token with 403', async () => {
    expectError(srv, await get('/v1/sessions', tokens.ingest), 403, 'forbidden');
  });
});

describe('GET /v1/sessions/{sid}/replay', () => {
  it('gives the same NDJSON as replayLines(sessionDirSources(dir)) on the local directory', async () => {
    const { dir, segs } = await twoWriterSession();
    const a = await get(`/v1/sessions/${segs[0]!.sid}/replay`);
    expect(a.status).toBe(200);
    expect(a.headers.get('content-type')).toContain('application/x-ndjson');
    expect(a.text).toBe(await localReplay(dir));
    expect(splitLines(a.bytes)).toHaveLength(segs[0]!.lines.length + segs[1]!.lines.length);
    const explicit = await get(`/v1/sessions/${segs[0]!.sid}/replay?format=ndjson`);
    expect(explicit.text).toBe(a.text);
  });

  it('gives the same replay for the multi-writer fixture as the library does locally', async () => {
    const segs = listSegments(FIXTURE).map((s) =>
      readLocal({ sid: 's_01M8MB9XXBAS3J6TGHM02TT9G4', w: s.w, dir: FIXTURE, path: s.path }),
    );
    expect(segs).toHaveLength(3);
    for (const s of segs) await upload(srv, tokens.ingest, s);
    const sid = segs[0]!.sid;
    const ndjson = await get(`/v1/sessions/${sid}/replay`);
    expect(ndjson.text).toBe(await localReplay(FIXTURE));
    const text = await get(`/v1/sessions/${sid}/replay?format=text`);
    expect(text.text).toBe(await localReplay(FIXTURE, 'text'));
    for (const s of segs) {
      const raw = await get(`/v1/sessions/${sid}/writers/${s.w}/segment`);
      expect(raw.status).toBe(200);
      expect(raw.headers.get('content-length')).toBe(String(s.bytes.length));
      expect(raw.bytes.equals(readFileSync(join(FIXTURE, `${s.w}.jsonl`)))).toBe(true);
    }
  });

  it('as text has one line per event', async () => {
    const { dir, segs } = await twoWriterSession();
    const a = await get(`/v1/sessions/${segs[0]!.sid}/replay?format=text`);
    expect(a.status).toBe(200);
    expect(a.headers.get('content-type')).toContain('text/plain');
    const lines = a.text.split('\n');
    expect(lines.pop()).toBe('');
    expect(lines).toHaveLength(segs[0]!.lines.length + segs[1]!.lines.length);
    for (const l of lines) expect(l).toMatch(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{6}Z {2}\S/);
    expect(a.text).toContain('first writer');
    expect(a.text).toContain('second writer');
    expect(a.text).toBe(await localReplay(dir, 'text'));
  });

  it('with raw=1 gives every stored line', async () => {
    const { segs } = await twoWriterSession();
    const a = await get(`/v1/sessions/${segs[0]!.sid}/replay?raw=1`);
    expect(a.status).toBe(200);
    const got = splitLines(a.bytes).map(String).sort();
    const want = [...segs[0]!.lines, ...segs[1]!.lines].map(String).sort();
    expect(got).toEqual(want);
  });

  it('answers 404 for a session it does not hold, in every format', async () => {
    const sid = newId('s');
    for (const q of ['', '?format=text', '?raw=1']) {
      expectError(srv, await get(`/v1/sessions/${sid}/replay${q}`), 404, 'not_found');
    }
  });

  it('refuses an unknown format or flag with 400', async () => {
    const { segs } = await twoWriterSession();
    for (const q of ['?format=html', '?raw=yes']) {
      expectError(srv, await get(`/v1/sessions/${segs[0]!.sid}/replay${q}`), 400, 'bad_request');
    }
  });

  it('refuses an invalid session id with 400 and no token with 401', async () => {
    expectError(srv, await get('/v1/sessions/s_bad/replay'), 400, 'invalid_id');
    expectError(srv, await get('/v1/sessions/..%2F..%2Fstate.sqlite/replay'), 400, 'invalid_id');
    const { segs } = await twoWriterSession();
    expectError(srv, await get(`/v1/sessions/${segs[0]!.sid}/replay`, null), 401, 'unauthorized');
  });
});
