/**
 * No line the library writer writes is too long to upload (issue 25 attack item 18, DESIGN §7,
 * lib/log/write/field-limits.ts): `writer.start`'s meta (a 10 MB agent name made line 1 exceed ingest's 5 MiB
 * line limit, refused with 413 for ever), the names and ids that are not free text, and the event's extra
 * keys are cut, each cut named in the event's `truncated`. Through the real writer, then the real upload
 * (lib/client/api/upload.ts) to a real server on loopback, which must take every segment.
 */
import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { ApiClient } from '../../lib/client/api/client.js';
import { uploadSession } from '../../lib/client/api/upload.js';
import { openSession } from '../../lib/log/index.js';
import { MAX_META_BYTES, MAX_META_STRING_UNITS } from '../../lib/log/write/field-limits.js';
import { request } from '../support/http.js';
import { useServer } from '../support/server.js';

const srv = useServer();
/** Ingest's limit on one line (DESIGN §7: a chunk body is at most 5 MiB). */
const LINE_LIMIT = 5 * 1024 * 1024;

const linesOf = (path: string) => readFileSync(path, 'utf8').split('\n').filter(Boolean);

/** Uploads the session with the CLI's own upload, then reads the server's copy of the segment back. */
async function uploadedLines(dir: string, sid: string, w: string): Promise<string[]> {
  const client = new ApiClient({ url: srv.url, token: srv.admin, minTimeoutMs: 5 });
  await uploadSession(dir, { client });
  const r = await request(srv, 'GET', `/v1/sessions/${sid}/writers/${w}/segment`, { token: srv.admin });
  expect(r.status).toBe(200);
  return r.bytes.toString('utf8').split('\n').filter(Boolean);
}

describe("writer.start's meta", () => {
  it('every string in it is cut to 1,000 units on a grapheme boundary and named; short ones and numbers stay whole', async () => {
    const flag = '\u{1f1eb}\u{1f1f7}';
    const s = openSession(srv.workDir, {
      agent: 'a'.repeat(10_000_000),
      app: `${'p'.repeat(MAX_META_STRING_UNITS - 1)}${flag}`,
      host: 'h'.repeat(5_000),
      extra: { nested: { deep: ['ok', 'y'.repeat(5_000)] }, small: 'kept', n: 7 },
    });
    s.message({ user_id: 'priya', text: 'big name' });
    s.end();
    const start = JSON.parse(linesOf(s.path)[0]!);
    expect(start.truncated).toEqual(['meta.agent', 'meta.app', 'meta.host', 'meta.nested']);
    expect(start.meta.agent).toBe('a'.repeat(MAX_META_STRING_UNITS));
    // the flag would straddle the cut: left out whole, never half of it
    expect(start.meta.app).toBe('p'.repeat(MAX_META_STRING_UNITS - 1));
    expect(start.meta.nested).toEqual({ deep: ['ok', 'y'.repeat(MAX_META_STRING_UNITS)] });
    expect(start.meta).toMatchObject({ small: 'kept', n: 7, provenance: 'library' });
    const stored = await uploadedLines(s.dir, s.sid, s.w);
    expect(JSON.parse(stored[0]!).meta.agent).toBe('a'.repeat(MAX_META_STRING_UNITS));
    expect(stored).toHaveLength(3);
  });

  it('a meta of 20,000 keys keeps its own keys and as many others as fit in 64 KiB, names meta, and uploads', async () => {
    const extra: Record<string, unknown> = {};
    for (let i = 0; i < 20_000; i++) extra[`key_${i}`] = `value ${i}`;
    extra['k'.repeat(3_000_000)] = 'a long key';
    const s = openSession(srv.workDir, { agent: 'many-keys', extra });
    s.end();
    const line = linesOf(s.path)[0]!;
    const start = JSON.parse(line);
    expect(start.truncated).toEqual(['meta']);
    expect(start.meta).toMatchObject({ agent: 'many-keys', provenance: 'library', key_0: 'value 0' });
    expect(Buffer.byteLength(JSON.stringify(start.meta))).toBeLessThanOrEqual(MAX_META_BYTES);
    expect(await uploadedLines(s.dir, s.sid, s.w)).toHaveLength(2);
  });
  it('names at most 16 cut keys one by one, then meta once: the list of cuts stays short too', () => {
    const extra: Record<string, unknown> = {};
    for (let i = 0; i < 40; i++) extra[`long_${i}`] = 'z'.repeat(2_000);
    const s = openSession(srv.workDir, { agent: 'long-values', extra });
    s.end();
    const start = JSON.parse(linesOf(s.path)[0]!);
    expect(start.truncated).toEqual([...Array.from({ length: 16 }, (_, i) => `meta.long_${i}`), 'meta']);
    expect(start.meta.long_39).toBe('z'.repeat(MAX_META_STRING_UNITS));
  });
});

describe('names, ids and extra keys of other events', () => {
  it('a 10 MB user_id, tool and author, a list of 500,000 ids and 12 MB of extra keys: every line under the limit, each cut named, all uploaded', async () => {
    const s = openSession(srv.workDir, { agent: 'hostile' });
    const m = s.message({ user_id: 'u'.repeat(10_000_000), text: 'hi' });
    const t = s.turnStart({ context_message_ids: Array.from({ length: 500_000 }, () => m.id) });
    const a = s.action(
      { turn_id: t.turn_id, tool: 'T'.repeat(10_000_000), input: { x: 1 } },
      { extra: { big: 'e'.repeat(10_000_000), other: 'o'.repeat(900_000), last: 'l'.repeat(900_000) } },
    );
    const n = s.note({ author: 'w'.repeat(10_000_000), text: 'note' });
    s.end();
    expect(m.truncated).toEqual(['user_id']);
    expect(t.truncated).toEqual(['context_message_ids']);
    // `big` is cut to the 1 MiB all extra keys may take; `other` and `last` no longer fit: dropped
    expect(a.truncated).toEqual(['tool', 'big', 'other', 'last']);
    expect(Object.keys(a.extra)).toEqual(['big']);
    expect(Buffer.byteLength(JSON.stringify(a.extra))).toBeLessThanOrEqual(1024 * 1024);
    expect(n.truncated).toEqual(['author']);
    for (const l of linesOf(s.path)) expect(Buffer.byteLength(l)).toBeLessThan(LINE_LIMIT);
    expect(await uploadedLines(s.dir, s.sid, s.w)).toHaveLength(6);
  });

  it('ordinary events are written as given, without truncated', () => {
    const s = openSession(srv.workDir, { agent: 'plain', extra: { claude_session_id: 'abc' } });
    const m = s.message({ user_id: 'priya', text: 'x' }, { extra: { hook_event: 'UserPromptSubmit' } });
    s.end();
    expect(m.truncated).toBeUndefined();
    expect(m.extra).toEqual({ hook_event: 'UserPromptSubmit' });
    expect(JSON.parse(linesOf(s.path)[0]!)).not.toHaveProperty('truncated');
  });
});
