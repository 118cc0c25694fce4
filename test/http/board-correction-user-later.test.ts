/**
 * The board summary against a correction of a message's `user_id` shipped in a later chunk than the
 * message (lib/service/ingest/summary.ts `summarizeChunk` → `delta.users`, lib/store/session-summary.ts
 * `mergeSummary`): the first prompt moves to the corrected person, who joins the people; the recorded
 * name stays among the people (the summary cannot tell whether another message or join named them).
 * Over real HTTP, local stores.
 */
import { mkdirSync, mkdtempSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { openSession } from '../../lib/log/index.js';
import { request } from '../support/http.js';
import { useServer } from '../support/server.js';

const srv = useServer({ tokens: { board: ['board'] } });

describe('a user_id correction in a later chunk than its message', () => {
  it('moves the first prompt to the corrected person and adds them to the people', async () => {
    mkdirSync(srv.workDir, { recursive: true });
    const s = openSession(mkdtempSync(join(srv.workDir, 'cul-')), { agent: 'coder' });
    const m = s.message({ user_id: 'mallory', text: 'rotate the payments key' });
    const upload = async (offset: number, body: Buffer) =>
      request(srv, 'POST', `/v1/sessions/${s.sid}/writers/${s.w}/chunks?offset=${offset}`, {
        token: srv.admin,
        body,
      });
    const first = readFileSync(s.path);
    expect((await upload(0, first)).status).toBe(201);
    s.correct({ target_id: m.id, field: 'user_id', value: 'alice', reason: 'shared terminal' });
    s.end();
    const up = await upload(first.length, readFileSync(s.path).subarray(first.length));
    expect(up.status, up.text).toBe(201);

    const ov = await request(srv, 'GET', '/v1/board/overview', { token: srv.tokens.board });
    expect(ov.json.rows[0].people).toEqual(['mallory', 'alice']);
    expect(ov.json.rows[0].asked.map((a: { user_id: string }) => a.user_id)).toEqual(['alice']);
    const alice = await request(srv, 'GET', '/v1/board/overview?person=alice', { token: srv.tokens.board });
    expect(alice.json.matched).toBe(1);
  });
});
