/**
 * A person's view shows what that person asked (issue 14.4): over real HTTP, a session in which priya
 * asked first and sam asked later. `/people/sam` titles the row with sam's first prompt and shows the
 * session's title (priya's) beneath; `/people/priya` shows her prompt once; `GET /v1/board/overview`
 * carries each person's first prompt with its time.
 */
import { beforeAll, describe, expect, it } from 'vitest';
import { openSession } from '../../lib/log/index.js';
import { request } from '../support/http.js';
import { readLocal } from '../support/segments.js';
import { useServer } from '../support/server.js';
import { upload } from '../support/stored.js';

const srv = useServer({ tokens: { board: ['board'] } });
let sid = '';

const page = (path: string) =>
  request(srv, 'GET', path, { headers: { cookie: `hansard_board=${srv.tokens.board}` } });

/** The row of the session on a page: its `<tr>`, whole. */
const rowOf = (html: string) => html.match(new RegExp(`<tr data-sid="${sid}">[\\s\\S]*?</tr>`))?.[0] ?? '';

beforeAll(async () => {
  const w = openSession(srv.workDir, { agent: 'claude-code' });
  w.participantJoin({ user_id: 'ana', display_name: 'Ana' });
  w.message({ user_id: 'priya', text: 'Restart the payments worker\nit is stuck' });
  w.message({ user_id: 'sam', text: '  Check the <disk> on db-2 first\nthen restart' });
  w.message({ user_id: 'sam', text: 'and the logs' });
  w.message({ user_id: 'priya', text: 'thanks' });
  w.end();
  sid = w.sid;
  await upload(srv, srv.tenant.admin, readLocal({ sid: w.sid, w: w.w, dir: w.dir, path: w.path }));
});

describe("a person's view", () => {
  it("titles each row with what that person asked first, the session's title beneath", async () => {
    const a = await page('/people/sam');
    expect(a.status).toBe(200);
    const row = rowOf(a.text);
    expect(row).toContain(
      '<span class="row-title" data-asked="">Check the &lt;disk&gt; on db-2 first</span>',
    );
    expect(row).toContain('Session: Restart the payments worker');
    expect(row).not.toContain('and the logs');
  });

  it("shows the session's title once when it is the person's own prompt", async () => {
    const row = rowOf((await page('/people/priya')).text);
    expect(row).toContain('<span class="row-title" data-asked="">Restart the payments worker</span>');
    expect(row).not.toContain('Session: ');
    expect(row.match(/Restart the payments worker/g)).toHaveLength(1);
  });

  it("shows the session's title for a person who only joined, and on the board", async () => {
    for (const path of ['/people/ana', '/']) {
      const row = rowOf((await page(path)).text);
      expect(row, path).toContain('<span class="row-title">Restart the payments worker</span>');
      expect(row, path).not.toContain('data-asked');
    }
  });

  it('GET /v1/board/overview carries each person’s first prompt with its time', async () => {
    const a = await request(srv, 'GET', '/v1/board/overview', { token: srv.tokens.board });
    expect(a.status).toBe(200);
    const row = a.json.rows.find((r: { sid: string }) => r.sid === sid);
    expect(row.people).toEqual(['ana', 'priya', 'sam']);
    expect(row.asked.map((x: { user_id: string; text: string }) => [x.user_id, x.text])).toEqual([
      ['priya', 'Restart the payments worker'],
      ['sam', 'Check the <disk> on db-2 first'],
    ]);
    expect(Date.parse(row.asked[0].ts)).toBeLessThanOrEqual(Date.parse(row.asked[1].ts));
    expect(row.asked[1].ts).toMatch(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/);
  });

  it("the text filter finds what a person asked, as a person's view titles the row with it", async () => {
    // 'db-2' is only in sam's first prompt: not in the session's title, note, id or names.
    for (const path of ['/people/sam?q=DB-2', '/?q=db-2']) {
      const a = await page(path);
      expect(a.status, path).toBe(200);
      expect(rowOf(a.text), path).not.toBe('');
    }
    expect(rowOf((await page('/people/sam?q=no-such-words')).text)).toBe('');
  });
});
