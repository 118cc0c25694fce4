/**
 * Links between rows on different pages of a long session (issue 14 finding 3), over real HTTP with the
 * local stores: every link of the page to a row is either `#anchor` with the row on the page, or
 * `/sessions/{sid}?at=<anchor>#<anchor>` (keeping `?person=`), and following it gives a page that holds
 * the row. The session: a person's message and a failing `npm test` on page 1, 250 notes, an action on page
 * 2 attributed to that message, and a status report at the end claiming `npm test` passed (unsupported,
 * matched to the page-1 action); the side panel links the report's row and the matched action.
 */
import { beforeAll, describe, expect, it } from 'vitest';
import { openSession } from '../../lib/log/index.js';
import { TIMELINE_PAGE_ROWS } from '../../lib/service/timeline/page.js';
import { request } from '../support/http.js';
import { readLocal } from '../support/segments.js';
import { useServer } from '../support/server.js';
import { upload } from '../support/stored.js';

const srv = useServer({ tokens: { board: ['board'], reporter: ['report'] } });
let sid = '';
let actionId = '';

const page = (path: string) =>
  request(srv, 'GET', path, { headers: { cookie: `hansard_board=${srv.tokens.board}` } });

const unamp = (h: string) => h.replaceAll('&amp;', '&');
const ids = (html: string) => new Set([...html.matchAll(/ id="([^"]+)"/g)].map((m) => m[1]!));
/** The page's links to rows: in-page (`#x`) and to other pages (`?at=x#x`). */
function rowLinks(html: string): { inPage: string[]; away: string[] } {
  const hrefs = [...html.matchAll(/ href="([^"]+)"/g)].map((m) => unamp(m[1]!));
  return {
    inPage: hrefs.filter((h) => h.startsWith('#')).map((h) => h.slice(1)),
    away: hrefs.filter((h) => h.startsWith(`/sessions/${sid}?at=`)),
  };
}

/** Checks every row link of `path`'s page lands on its row (following the other-page ones); their count. */
async function followAll(path: string): Promise<{ html: string; away: string[] }> {
  const a = await page(path);
  expect(a.status, path).toBe(200);
  const here = ids(a.text);
  const { inPage, away } = rowLinks(a.text);
  for (const l of inPage) expect(here, `${path}: #${l}`).toContain(l);
  for (const href of away) {
    const url = new URL(href, 'http://x');
    const anchor = url.hash.slice(1);
    expect(url.searchParams.get('at'), href).toBe(anchor);
    expect(here, `${href} is on this page: it should be #${anchor}`).not.toContain(anchor);
    const there = await page(`${url.pathname}${url.search}`);
    expect(there.status, href).toBe(200);
    expect(ids(there.text), href).toContain(anchor);
  }
  return { html: a.text, away };
}

beforeAll(async () => {
  const s = openSession(srv.workDir, { agent: 'claude-code' });
  sid = s.sid;
  const m = s.message({ user_id: 'ana', text: 'make the tests pass' });
  const t = s.turnStart({ context_message_ids: [m.id] });
  const a = s.action({ turn_id: t.id, tool: 'bash', input: { command: 'npm test' } });
  actionId = a.id;
  s.actionResult({ action_id: a.id, status: 'error', output: '1 failing', exit_code: 1 });
  for (let i = 0; i < TIMELINE_PAGE_ROWS + 50; i++) s.note({ author: 'ops', text: `note ${i}` });
  const a2 = s.action({ turn_id: t.id, tool: 'bash', input: { command: 'git status' } });
  s.actionResult({ action_id: a2.id, status: 'ok', output: 'clean', exit_code: 0 });
  s.turnEnd({ turn_id: t.id, status: 'completed' });
  s.end();
  await upload(srv, srv.tenant.admin, readLocal({ sid, w: s.w, dir: s.dir, path: s.path }));
  const st = await request(srv, 'POST', `/v1/sessions/${sid}/status`, {
    token: srv.tokens.reporter,
    json: {
      state: 'done',
      note: 'all green',
      events: [{ kind: 'evidence', evidence: [{ type: 'command', ref: 'npm test', result: 'passed' }] }],
    },
  });
  expect(st.status, st.text).toBe(201);
}, 60_000);

describe('links to rows on other pages', () => {
  it('page 1: the status panel links the report row on the last page, and it resolves', async () => {
    const { html, away } = await followAll(`/sessions/${sid}`);
    expect(html).not.toContain('id="d-0"');
    expect(html).toContain(`href="/sessions/${sid}?at=d-0#d-0"`);
    // the matched action of the unsupported claim is a link (here on this page)
    expect(html).toContain(`<a href="#e-${actionId}">the recorded action</a>`);
    expect(away.length).toBeGreaterThan(0);
  });

  it('page 2: attribution to a page-1 message and the claim matched to a page-1 action resolve', async () => {
    const first = await page(`/sessions/${sid}`);
    const next = /href="(\/sessions\/[^"#]+\?after=\d+)#rows"/.exec(first.text)![1]!;
    const { html, away } = await followAll(unamp(next));
    expect(html).toContain('id="d-0"');
    expect(away).toContain(`/sessions/${sid}?at=e-${actionId}#e-${actionId}`);
    expect(away.some((h) => /\?at=e-m_/.test(h))).toBe(true);
    expect(html).toMatch(
      /<a href="\/sessions\/[^"]+\?at=e-m_[^"]+">Ana&#39;s message at|ana&#39;s message at/,
    );
  });

  it("keeps ?person= in the links, and each lands on its row (a row not in the person's view: the whole session)", async () => {
    const { away } = await followAll(`/sessions/${sid}?person=ana`);
    for (const h of away) expect(new URL(h, 'http://x').searchParams.get('person')).toBe('ana');
  });

  it('?at= of a row on page 1 with a stale ?after= still shows page 1; a bad ?at= is ignored', async () => {
    const a = await page(`/sessions/${sid}?after=240&at=e-${actionId}`);
    expect(a.status).toBe(200);
    expect(ids(a.text)).toContain(`e-${actionId}`);
    const bad = await page(`/sessions/${sid}?at=%3Cscript%3E`);
    expect(bad.status).toBe(200);
    expect(ids(bad.text)).toContain(`e-${actionId}`);
  });

  it('a session with a status report but no segment links no row (there is none)', async () => {
    const other = `s_${'0'.repeat(4)}${sid.slice(6)}`;
    const st = await request(srv, 'POST', `/v1/sessions/${other}/status`, {
      token: srv.tokens.reporter,
      json: {
        state: 'working',
        note: 'starting',
        events: [{ kind: 'evidence', evidence: [{ type: 'command', ref: 'npm test', result: 'passed' }] }],
      },
    });
    expect(st.status, st.text).toBe(201);
    const a = await page(`/sessions/${other}`);
    expect(a.status).toBe(200);
    expect(a.text).toContain('nothing of it was uploaded');
    const here = ids(a.text);
    for (const l of rowLinks(a.text).inPage) expect(here, `#${l}`).toContain(l);
    expect(a.text).toContain('in the timeline');
  });
});
