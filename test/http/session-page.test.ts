/**
 * The session page (`/sessions/{sid}`, issue 14.3) over real HTTP with the local stores: the 50-row
 * synthetic session (test/support/timeline-session.ts) shows every row kind as structured rows, each
 * in-page link lands on a row of the page, writer-given markup shows as text, the side panel has the
 * status history, work items and downloads; a long session pages with "Load more" links that give every
 * row exactly once; `?person=` narrows; a missing session is the 404 page; the CSP allows no inline script.
 */
import { beforeAll, describe, expect, it } from 'vitest';
import { newId, openSession } from '../../lib/log/index.js';
import { TIMELINE_PAGE_ROWS } from '../../lib/service/timeline/page.js';
import { request } from '../support/http.js';
import { readLocal } from '../support/segments.js';
import { useServer } from '../support/server.js';
import { upload } from '../support/stored.js';
import {
  FIXTURE_KINDS,
  HOSTILE,
  storeTimelineSession,
  type TimelineSession,
} from '../support/timeline-session.js';

const srv = useServer({ tokens: { board: ['board'], reporter: ['report'] } });
let s: TimelineSession;
/** a session of many notes, for paging */
let long: { sid: string; rows: number };

const page = (path: string) =>
  request(srv, 'GET', path, { headers: { cookie: `hansard_board=${srv.tokens.board}` } });

/** The `id`s of the page's elements and the in-page links' targets. */
function anchorsOf(html: string): { ids: Set<string>; links: string[] } {
  const ids = new Set([...html.matchAll(/ id="([^"]+)"/g)].map((m) => m[1]!));
  const links = [...html.matchAll(/ href="#([^"]+)"/g)].map((m) => m[1]!);
  return { ids, links };
}

/** The positions of the rows on a page (a turn's start is in its summary box, with its own data-pos). */
const positions = (html: string) => [...html.matchAll(/data-pos="(\d+)"/g)].map((m) => Number(m[1]));

beforeAll(async () => {
  s = await storeTimelineSession(srv, srv.workDir, srv.tenant.admin, srv.tokens.reporter);
  // a work item naming the session
  const work = await request(srv, 'POST', '/v1/work', {
    token: srv.tokens.reporter,
    json: {
      session: s.sid,
      system: 'ci',
      actor: 'fixer',
      subject: { kind: 'free', ref: 'payments' },
      mode: 'testing',
      summary: 'running the <b>suite</b>',
    },
  });
  expect(work.status, work.text).toBe(201);
  const w = openSession(srv.workDir, { agent: 'noter' });
  const notes = 2 * TIMELINE_PAGE_ROWS + 37;
  for (let i = 0; i < notes; i++) w.note({ author: 'noter', text: `note ${i}` });
  w.end();
  await upload(srv, srv.tenant.admin, readLocal({ sid: w.sid, w: w.w, dir: w.dir, path: w.path }));
  long = { sid: w.sid, rows: notes + 2 };
}, 60_000);

describe('the session page', () => {
  it('shows every row kind of the 50-row session, each in-page link landing on the page', async () => {
    const a = await page(`/sessions/${s.sid}`);
    expect(a.status, a.text.slice(0, 300)).toBe(200);
    const kinds = new Set([...a.text.matchAll(/data-kind="([a-z_]+)"/g)].map((m) => m[1]));
    for (const k of FIXTURE_KINDS) expect(kinds, k).toContain(k);
    expect(new Set(positions(a.text)).size).toBe(s.rows);
    const { ids, links } = anchorsOf(a.text);
    expect(links.length).toBeGreaterThan(50);
    for (const l of links) expect(ids, `#${l}`).toContain(l);
    // the pieces a reader needs: attribution with a link to the message, the correction both ways, the
    // failing action, the verdicts, the quarantined line and the verify finding at its row
    expect(a.text).toContain(`<a href="#e-${s.ids.m1}">Priya&#39;s message at `);
    expect(a.text).toMatch(/contested: it may answer/);
    expect(a.text).toContain(`<a href="#e-${s.ids.correction}">correction ${s.ids.correction}</a>`);
    expect(a.text).toContain(`<a href="#e-${s.ids.corrected}">${s.ids.corrected}</a>`);
    expect(a.text).toMatch(/failed \(error\)<\/span> · exit 127/);
    expect(a.text).toMatch(/<span class="verdict supported" data-label="supported">supported<\/span>/);
    // the lint claim rests on a result another writer (B) corrected: unsupported, labelled contested
    expect(a.text).toMatch(
      /<span class="verdict unsupported contested" data-label="contested">contested<\/span>/,
    );
    expect(a.text).toContain(`id="q-${s.wb}-${s.quarantinedLine}"`);
    expect(a.text).toMatch(/data-problem="dangling_reference"/);
    expect(a.text).toContain('Declared</span>');
    expect(a.text).toContain('more bytes');
  });

  it('shows what writers wrote as text: markup, in names, messages, notes and status notes', async () => {
    const a = await page(`/sessions/${s.sid}`);
    expect(a.text).not.toContain('<script>alert');
    expect(a.text).not.toContain('<b>bot</b>');
    expect(a.text).not.toContain('<img src=x');
    expect(a.text).not.toContain('<i>review</i>');
    expect(a.text).not.toContain('<b>suite</b>');
    expect(a.text).toContain('fixer &lt;b&gt;bot&lt;/b&gt;');
    expect(a.text).toContain('&lt;script&gt;alert(&#39;x&#39;)&lt;/script&gt;');
    expect(a.text).toContain('&lt;img src=x onerror=alert(1)&gt; looks fine');
    expect(a.text).toContain('torn &lt;b&gt;half');
    expect(a.text).toContain(HOSTILE.statusNote.replace('<i>', '&lt;i&gt;').replace('</i>', '&lt;/i&gt;'));
    // no script of the page's own, and a policy that would refuse one
    expect(a.text).not.toMatch(/<script(?![^>]*\bsrc=)/);
    expect(a.headers.get('content-security-policy')).toMatch(/default-src 'none'/);
  });

  it('has the side panel: status history with verdicts, work with freshness, and the downloads', async () => {
    const a = await page(`/sessions/${s.sid}`);
    const aside = /<aside[\s\S]*<\/aside>/.exec(a.text)![0];
    expect(aside).toContain('Status history');
    // the lint claim rests on a result the reviewer corrected: contested
    expect(aside).toContain('1 supported, 1 unsupported (1 contested), 0 unchecked');
    expect(aside).toMatch(/data-freshness="observed"/);
    expect(aside).not.toMatch(/\bidle\b/);
    for (const href of [
      `/v1/sessions/${s.sid}/replay`,
      `/v1/sessions/${s.sid}/replay?format=text`,
      `/v1/sessions/${s.sid}/replay?raw=1`,
      `/v1/sessions/${s.sid}/writers/${s.wa}/segment`,
      `/v1/sessions/${s.sid}/writers/${s.wb}/segment`,
      `/v1/sessions/${s.sid}/verify`,
    ])
      expect(aside).toContain(`href="${href}"`);
  });

  it(`shows ${TIMELINE_PAGE_ROWS} rows, then "Load more" links that give every row exactly once`, async () => {
    const seen: number[] = [];
    let path: string | null = `/sessions/${long.sid}`;
    let pages = 0;
    while (path !== null && pages < 10) {
      const a = await page(path);
      expect(a.status).toBe(200);
      const pos = positions(a.text);
      expect(pos.length).toBeLessThanOrEqual(TIMELINE_PAGE_ROWS);
      seen.push(...pos);
      const more = /<a class="more" rel="next" href="([^"]+)"/.exec(a.text);
      path = more ? more[1]!.replaceAll('&amp;', '&') : null;
      pages += 1;
    }
    expect(pages).toBe(3);
    expect(seen).toEqual([...Array(long.rows).keys()]);
  });

  it('reads a bad ?after= as the start, and ?person= narrows to that person', async () => {
    const bad = await page(`/sessions/${s.sid}?after=abc`);
    expect(bad.status).toBe(200);
    expect(positions(bad.text)[0]).toBe(0);
    const sam = await page(`/sessions/${s.sid}?person=sam`);
    expect(sam.status).toBe(200);
    expect(sam.text).toContain('Show the whole session');
    expect(sam.text).not.toContain(`id="e-${s.ids.m1}"`);
    expect(sam.text).toContain(`id="e-${s.ids.m4}"`);
    expect(sam.text).toContain(`id="e-${s.ids.failing}"`);
  });

  it('shows the reports of a session that has a status but no segment yet', async () => {
    const sid = newId('s');
    const st = await request(srv, 'POST', `/v1/sessions/${sid}/status`, {
      token: srv.tokens.reporter,
      json: { state: 'blocked', note: 'waiting for <b>access</b>' },
    });
    expect(st.status, st.text).toBe(201);
    const a = await page(`/sessions/${sid}`);
    expect(a.status).toBe(200);
    expect(a.text).toContain('nothing of it was uploaded');
    expect(a.text).toContain('waiting for &lt;b&gt;access&lt;/b&gt;');
  });

  it('answers the 404 page for a session that does not exist, and sends a browser without a cookie to sign in', async () => {
    const missing = await page(`/sessions/${newId('s')}`);
    expect(missing.status).toBe(404);
    expect(missing.text).toContain('There is no such session');
    const anonymous = await request(srv, 'GET', `/sessions/${s.sid}`);
    expect(anonymous.status).toBe(302);
  });
});
