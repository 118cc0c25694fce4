/**
 * The session page's "Ran <first event> to <last event> UTC." header (lib/service/timeline/span.ts) reads
 * the first `"ts": "…"` it finds with a regular expression in the segment's last lines, without decoding
 * the line. A last line that is no event (quarantined: no type, seq or id) but holds a nested
 * `"ts":"2999-01-01T…"` is taken as the session's last event, so the header says the session ran until
 * 1 January 2999, while no row of the timeline has that time. Over real HTTP, local stores.
 *
 * The case found a fault, now fixed: only a line that parses as an event gives the span.
 */
import { mkdirSync, mkdtempSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { openSession } from '../../lib/log/index.js';
import { request } from '../support/http.js';
import { useServer } from '../support/server.js';

const srv = useServer({ tokens: { board: ['board'] } });

describe("the session page's 'Ran … to …' header", () => {
  // Was a FAULT (fixed): a quarantined last line holding a nested "ts" sets the header's last event time (e.g. 'to 1 January 2999'), though it is no event.
  it('says when the last event was, not what a line that is no event holds', async () => {
    mkdirSync(srv.workDir, { recursive: true });
    const s = openSession(mkdtempSync(join(srv.workDir, 'span-')), { agent: 'coder' });
    s.message({ user_id: 'alice', text: 'hello' });
    const junk = `{"v":1,"sid":"${s.sid}","w":"${s.w}","note":{"ts":"2999-01-01T00:00:00.000000Z"}}\n`;
    const body = Buffer.concat([readFileSync(s.path), Buffer.from(junk)]);
    const up = await request(srv, 'POST', `/v1/sessions/${s.sid}/writers/${s.w}/chunks?offset=0`, {
      token: srv.admin,
      body,
    });
    expect(up.status, up.text).toBe(201);
    const page = await request(srv, 'GET', `/sessions/${s.sid}`, {
      headers: { cookie: `hansard_board=${srv.tokens.board}` },
    });
    expect(page.status).toBe(200);
    const ran = /Ran .*? UTC\./s.exec(page.text)?.[0] ?? '';
    expect(ran).toContain('<time');
    expect(ran).not.toContain('2999');
  });
});
