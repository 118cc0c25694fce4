/**
 * The board title after a correction that arrived before its message (lib/store/session-summary.ts
 * `mergeSummary`). A correction whose target is not yet the title or an `asked` message waits among the
 * "latest 20 others" (`FIXES_PENDING_MAX`). Writer B (another terminal of the same person) redacts the
 * secret in writer A's first prompt and then corrects 20 of its own messages; B's segment is uploaded
 * first, A's later (a laptop that was offline). The redaction was evicted from the pending list before
 * its message arrived, so the overview's title is the secret again and `?q=` finds it, while the
 * timeline shows the corrected text. Over real HTTP, local stores.
 *
 * The case found a fault, now fixed (`Was a FAULT (fixed): …`).
 */
import { mkdirSync, mkdtempSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { openSession } from '../../lib/log/index.js';
import { request } from '../support/http.js';
import { useServer } from '../support/server.js';

const srv = useServer({ tokens: { board: ['board'] } });

describe('a redaction of the first prompt uploaded before the prompt', () => {
  // Was a FAULT (fixed): a correction that waits for its message is evicted by 20 later corrections of other messages, so the board title (and ?q=) shows the redacted secret again.
  it('keeps the title corrected whatever other corrections came between', async () => {
    mkdirSync(srv.workDir, { recursive: true });
    const a = openSession(mkdtempSync(join(srv.workDir, 'pend-')), { agent: 'coder' });
    const m = a.message({ user_id: 'alice', text: 'deploy with password hunter2-SECRET please' });
    a.end();
    const b = openSession(a.dir, { agent: 'coder' });
    b.correct({
      target_id: m.id,
      field: 'text',
      value: 'deploy with password [removed] please',
      reason: 'secret',
    });
    const later = Array.from({ length: 21 }, (_, i) => b.message({ user_id: 'alice', text: `typo ${i}` }));
    for (const x of later.slice(1))
      b.correct({ target_id: x.id, field: 'text', value: 'fixed', reason: 'typo' });
    b.end();
    for (const s of [b, a]) {
      const up = await request(srv, 'POST', `/v1/sessions/${s.sid}/writers/${s.w}/chunks?offset=0`, {
        token: srv.admin,
        body: readFileSync(s.path),
      });
      expect(up.status, up.text).toBe(201);
    }
    const page = await request(srv, 'GET', `/sessions/${a.sid}`, {
      headers: { cookie: `hansard_board=${srv.tokens.board}` },
    });
    expect(page.text).toContain('deploy with password [removed] please');

    const ov = await request(srv, 'GET', '/v1/board/overview', { token: srv.tokens.board });
    // the redaction was dropped from the pending corrections: the title is withheld (null) or corrected
    expect([null, 'deploy with password [removed] please']).toContain(ov.json.rows[0].title);
    const found = await request(srv, 'GET', '/v1/board/overview?q=hunter2-SECRET', {
      token: srv.tokens.board,
    });
    expect(found.json.matched).toBe(0);
  });
});
