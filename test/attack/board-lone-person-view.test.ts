/**
 * Links built from a lone surrogate, after the fix of test/http/board-lone-surrogate-urls: `uriComponent`
 * (lib/log/format/text-cut.ts) writes a lone surrogate as U+FFFD, and the summary stores names made well-formed,
 * so `/people/bob%EF%BF%BD` finds the session. But the timeline's person filter compares the user_id as
 * recorded (`bob\ud800`): the session page's own "only bob's rows" link, and the person page's links
 * into the timeline, open a person view with no row at all. Over real HTTP, local stores.
 *
 * The case found a fault, now fixed: the person filter compares well-formed names.
 */
import { mkdirSync, mkdtempSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { openSession } from '../../lib/log/index.js';
import { request } from '../support/http.js';
import { useServer } from '../support/server.js';

const srv = useServer({ tokens: { board: ['board'] } });

describe('the person view of a user_id with a lone surrogate', () => {
  // Was a FAULT (fixed): the session page's "only X's rows" link for a user_id holding a lone surrogate (written as U+FFFD) opens a person view with no rows: the timeline filter compares the raw user_id.
  it("shows that person's rows when its link is followed", async () => {
    mkdirSync(srv.workDir, { recursive: true });
    const s = openSession(mkdtempSync(join(srv.workDir, 'lone-')), { agent: 'coder' });
    const m = s.message({ user_id: 'bob\ud800', text: 'hello from bob' });
    const t = s.turnStart({ context_message_ids: [m.id] });
    s.output({ turn_id: t.id, text: 'done' });
    s.turnEnd({ turn_id: t.id, status: 'completed' });
    s.end();
    const up = await request(srv, 'POST', `/v1/sessions/${s.sid}/writers/${s.w}/chunks?offset=0`, {
      token: srv.admin,
      body: readFileSync(s.path),
    });
    expect(up.status, up.text).toBe(201);
    const cookie = { headers: { cookie: `hansard_board=${srv.tokens.board}` } };
    const page = await request(srv, 'GET', `/sessions/${s.sid}`, cookie);
    const link = /href="([^"]*\?person=[^"]*)"/.exec(page.text)?.[1]?.replaceAll('&amp;', '&');
    expect(link).toBeDefined();
    const view = await request(srv, 'GET', link!, cookie);
    expect(view.status).toBe(200);
    // bob's message row is in bob's view
    expect(view.text).toContain(`id="e-${m.id}"`);
  });
});
