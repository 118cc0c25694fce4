/**
 * The board summary against a correction of a field other than `text` (lib/service/ingest/summary.ts
 * `addToSummary` follows `field: 'text'` only). A message's `user_id` is correctable (lib/log/format/events.ts
 * FIELD_ORDER), and the timeline reads the effective view: a message recorded as `mallory` (a shared
 * terminal) and corrected to `alice` shows as alice's there. The overview keeps `mallory`: among the
 * session's people, in the people facet, in `?person=mallory` and `/people/mallory`, and as the person
 * who "asked" the first prompt; `alice` is not found at all. Over real HTTP, local stores.
 *
 * The case found a fault, fixed for a correction in the same chunk as its message (ingest-summary.ts
 * `summarizeChunk` applies the chunk's `user_id` corrections before collecting people and `asked`).
 */
import { mkdirSync, mkdtempSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { openSession } from '../../lib/log/index.js';
import { request } from '../support/http.js';
import { useServer } from '../support/server.js';

const srv = useServer({ tokens: { board: ['board'] } });

describe('a corrected user_id of a message', () => {
  // Was a FAULT (fixed): a correction of a message's user_id is applied by the timeline but not by the board summary: the overview, ?person= and /people/ keep the uncorrected user_id and never find the corrected one.
  it('moves the message to the corrected person on the board as on the timeline', async () => {
    mkdirSync(srv.workDir, { recursive: true });
    const s = openSession(mkdtempSync(join(srv.workDir, 'cu-')), { agent: 'coder' });
    const m = s.message({ user_id: 'mallory', text: 'rotate the payments key' });
    s.correct({ target_id: m.id, field: 'user_id', value: 'alice', reason: 'shared terminal' });
    s.end();
    const up = await request(srv, 'POST', `/v1/sessions/${s.sid}/writers/${s.w}/chunks?offset=0`, {
      token: srv.admin,
      body: readFileSync(s.path),
    });
    expect(up.status, up.text).toBe(201);
    const page = await request(srv, 'GET', `/sessions/${s.sid}`, {
      headers: { cookie: `hansard_board=${srv.tokens.board}` },
    });
    expect(page.text).toContain('People in this session: <a href="/people/alice">alice</a>');

    const ov = await request(srv, 'GET', '/v1/board/overview', { token: srv.tokens.board });
    expect(ov.json.rows[0].people).toEqual(['alice']);
    expect(ov.json.rows[0].asked.map((a: { user_id: string }) => a.user_id)).toEqual(['alice']);
    const alice = await request(srv, 'GET', '/v1/board/overview?person=alice', { token: srv.tokens.board });
    expect(alice.json.matched).toBe(1);
  });
});
