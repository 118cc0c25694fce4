/**
 * Names on the board against invisible characters. docs/board.md: "control and bidirectional characters
 * shown as escapes (`\u202e`), so no note can forge a row" (lib/log/format/escape.ts `escapeControl`). The set
 * it escapes leaves out the other invisible format characters: U+200B zero-width space, U+200C/U+200D
 * zero-width (non-)joiner, U+2060 word joiner, U+FEFF. A writer that records messages as
 * `ali\u200bce` is shown exactly as `alice` on the overview, in the people filter, on `/people/…`, on the
 * session's People line, its chips and attribution ("answers to alice's message"), though it is another
 * user_id with another `/people/` page; verify does not flag it either (`control_characters` is for
 * the escaped set). Over real HTTP, local stores.
 *
 * The case found a fault and is skipped (`FAULT: …`) so the suite stays green; remove `.skip` to see it fail.
 */
import { mkdirSync, mkdtempSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { openSession } from '../../lib/log/index.js';
import { request } from '../support/http.js';
import { useServer } from '../support/server.js';

const srv = useServer({ tokens: { board: ['board'] } });

/** The page's text outside tags' attribute values (where a raw value is needed for the form to work). */
const shownText = (html: string) => html.replace(/="[^"]*"/g, '=""');

describe('invisible characters in a user_id', () => {
  // FAULT: zero-width characters (U+200B/C/D, U+2060, U+FEFF) in user_ids and agent names are shown raw, so 'ali\u200bce' reads as 'alice' on the board and the timeline.
  it('are shown as escapes, like control and bidi characters', async () => {
    mkdirSync(srv.workDir, { recursive: true });
    const s = openSession(mkdtempSync(join(srv.workDir, 'zw-')), { agent: 'co\u2060der' });
    s.message({ user_id: 'ali\u200bce', text: 'please push to prod' });
    s.message({ user_id: 'bo\ufeffb', text: 'and me' });
    s.end();
    const up = await request(srv, 'POST', `/v1/sessions/${s.sid}/writers/${s.w}/chunks?offset=0`, {
      token: srv.admin,
      body: readFileSync(s.path),
    });
    expect(up.status, up.text).toBe(201);
    const cookie = { headers: { cookie: `hansard_board=${srv.tokens.board}` } };
    for (const path of ['/', `/sessions/${s.sid}`, `/people/${encodeURIComponent('ali\u200bce')}`]) {
      const page = await request(srv, 'GET', path, cookie);
      expect(page.status).toBe(200);
      expect(shownText(page.text), path).not.toMatch(/[\u200b-\u200d\u2060\ufeff]/);
    }
  });
});
