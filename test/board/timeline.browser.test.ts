/**
 * The session timeline (issue 14.3) in Debian's Chromium via playwright-core, against the app on loopback
 * with the local stores: the 50-row synthetic session (test/support/timeline-session.ts) shows every row
 * kind; an attribution link lands on the message it names; turns fold and unfold with a click and with
 * the keyboard; Tab alone reaches every link and summary of the page, each with a visible focus ring;
 * nothing scrolls sideways at 390 and 360 px; axe-core finds no serious or critical violation in light
 * and dark, at desktop and phone width; with JavaScript, "Load more" appends the next rows in place (htmx
 * under the page's CSP). Screenshots go to .test-results/.
 */
import { mkdirSync, readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import type { Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { openSession } from '../../lib/log/index.js';
import { TIMELINE_PAGE_ROWS } from '../../lib/service/timeline/page.js';
import { browsers } from '../support/browser.js';
import { request } from '../support/http.js';
import { FIXTURE_KINDS, storeTimelineSession, type TimelineSession } from '../support/timeline-session.js';
import { type BoardFixture, startBoard } from './overview-fixture.js';

const AXE_SOURCE = readFileSync(createRequire(import.meta.url).resolve('axe-core/axe.min.js'), 'utf8');
const SHOTS = fileURLToPath(new URL('../../.test-results/', import.meta.url));
const KINDS = FIXTURE_KINDS;

/** What the callbacks given to `page.evaluate` see in the page (the project compiles without the DOM lib). */
interface El {
  tagName: string;
  open?: boolean;
  offsetParent: unknown;
  matches(selector: string): boolean;
  blur(): void;
}
declare const document: {
  activeElement: El | null;
  body: El;
  documentElement: { scrollWidth: number; clientWidth: number };
  querySelector(selector: string): El | null;
  querySelectorAll(selector: string): ArrayLike<El> & Iterable<El>;
};
declare const window: { axe: { run(root: unknown, options: unknown): Promise<{ violations: Violation[] }> } };
declare function getComputedStyle(el: El): { outlineStyle: string; outlineWidth: string };
interface Violation {
  id: string;
  impact: string;
  nodes: { target: string[] }[];
}

let board: BoardFixture;
/** the long session's id, and its rows (three pages) */
let longSid: string;
const LONG_ROWS = 2 * TIMELINE_PAGE_ROWS + 37;
let s: TimelineSession;
const open = browsers();

/** A signed-in page of the 50-row session (or `path`), under the page's own CSP. */
async function signedIn(width = 1100, height = 800, path?: string): Promise<Page> {
  const ctx = await open.fresh({ width, height });
  const page = ctx.pages()[0] ?? (await ctx.newPage());
  await page.goto(`${board.base}/?token=${board.board}`);
  await page.goto(`${board.base}${path ?? `/sessions/${s.sid}`}`);
  return page;
}

/** axe-core's serious and critical violations of the page as it is shown now. */
async function axeViolations(page: Page): Promise<string[]> {
  // Evaluated through the DevTools protocol, which the page's CSP (`script-src 'self'`) does not govern: a
  // script tag of axe would be refused, as it should be.
  await page.evaluate(AXE_SOURCE);
  const found = await page.evaluate(async () => {
    const r = await window.axe.run(document, { resultTypes: ['violations'] });
    return r.violations.map((v) => ({
      id: v.id,
      impact: v.impact,
      nodes: v.nodes.slice(0, 3).map((n) => n.target.join(' ')),
    }));
  });
  return (found as { id: string; impact: string; nodes: string[] }[])
    .filter((v) => v.impact === 'serious' || v.impact === 'critical')
    .map((v) => `${v.impact} ${v.id}: ${v.nodes.join(', ')}`);
}

beforeAll(async () => {
  board = await startBoard();
  s = await storeTimelineSession(
    { url: board.base },
    join(board.tmp, 'sessions'),
    board.admin,
    board.reporter,
  );
  // a session of LONG_ROWS rows (a writer of notes), for "Load more"
  const w = openSession(join(board.tmp, 'sessions'), { agent: 'noter' });
  for (let i = 0; i < LONG_ROWS - 2; i++) w.note({ author: 'noter', text: `note ${i}` });
  w.end();
  const up = await request(
    { url: board.base },
    'POST',
    `/v1/sessions/${w.sid}/writers/${w.w}/chunks?offset=0`,
    {
      token: board.admin,
      body: readFileSync(w.path),
    },
  );
  expect(up.status, up.text).toBe(201);
  longSid = w.sid;
  mkdirSync(SHOTS, { recursive: true });
}, 60_000);

afterAll(async () => {
  await open.closeAll();
  await board?.close();
});

describe('the session timeline in Chromium', () => {
  it('shows every row kind of the 50-row session, and an attribution link lands on its message', async () => {
    const page = await signedIn();
    for (const k of KINDS) {
      const rows = page.locator(`[data-kind="${k}"]`);
      expect(await rows.count(), k).toBeGreaterThan(0);
      expect(await rows.first().isVisible(), k).toBe(true);
    }
    expect(
      await page
        .locator('[data-pos]')
        .evaluateAll((els) => new Set(els.map((e) => e.getAttribute('data-pos'))).size),
    ).toBe(s.rows);
    await page.locator(`a[href="#e-${s.ids.m1}"]`).first().click();
    expect(page.url()).toBe(`${board.base}/sessions/${s.sid}#e-${s.ids.m1}`);
    expect(
      await page.locator(`#e-${s.ids.m1}`).evaluate((el) => (el as unknown as El).matches(':target')),
    ).toBe(true);
    expect(await page.locator(`#e-${s.ids.m1}`).isVisible()).toBe(true);
    await page.screenshot({ path: join(SHOTS, 'timeline-light.png'), fullPage: true });
    expect(board.logged).toEqual([]);
  });

  it('folds and unfolds a turn with a click and with the keyboard, without script', async () => {
    const page = await signedIn();
    const turn = page.locator('details.turn-box').first();
    const action = turn.locator('[data-kind="action"]').first();
    expect(await turn.evaluate((d) => (d as unknown as El).open)).toBe(true);
    expect(await action.isVisible()).toBe(true);
    await turn.locator(':scope > summary').click();
    expect(await turn.evaluate((d) => (d as unknown as El).open)).toBe(false);
    expect(await action.isVisible()).toBe(false);
    await turn.locator(':scope > summary').focus();
    await page.keyboard.press('Enter');
    expect(await turn.evaluate((d) => (d as unknown as El).open)).toBe(true);
    expect(await action.isVisible()).toBe(true);
    await page.keyboard.press('Space');
    expect(await turn.evaluate((d) => (d as unknown as El).open)).toBe(false);
  });

  it('Tab alone reaches every link and summary, each with a visible focus ring', async () => {
    const page = await signedIn();
    const controls = await page
      .locator('a[href], summary, button, input, select')
      .evaluateAll(
        (els) => els.filter((e) => (e as unknown as El).offsetParent !== null || e.tagName === 'A').length,
      );
    // Tab through the page from its start, noting each focused control once, until focus leaves it.
    await page.evaluate(() => document.activeElement?.blur());
    const reached = new Set<string>();
    let unringed: string[] = [];
    for (let i = 0; i < controls + 20; i++) {
      await page.keyboard.press('Tab');
      const f = await page.evaluate(() => {
        const el = document.activeElement;
        if (!el || el === document.body) return null;
        const all = [...document.querySelectorAll('a[href], summary, button, input, select')];
        const style = getComputedStyle(el);
        return {
          index: all.indexOf(el),
          ring: style.outlineStyle !== 'none' && style.outlineWidth !== '0px',
          tag: el.tagName,
        };
      });
      if (f === null) break;
      // anything else focusable (none is expected) is noted, not counted
      if (f.index < 0) {
        unringed.push(`not a control: ${f.tag}`);
        continue;
      }
      if (reached.has(String(f.index))) break;
      reached.add(String(f.index));
      if (!f.ring) unringed.push(`${f.tag} ${f.index}`);
    }
    unringed = unringed.slice(0, 5);
    expect(unringed).toEqual([]);
    expect(reached.size).toBeGreaterThanOrEqual(controls);
    // the summaries and the download links are among them
    const indexOf = (sel: string) =>
      page.evaluate(
        (q) =>
          [...document.querySelectorAll('a[href], summary, button, input, select')].indexOf(
            document.querySelector(q)!,
          ),
        sel,
      );
    expect(reached).toContain(String(await indexOf('details.turn-box > summary')));
    expect(reached).toContain(String(await indexOf(`a[href="/v1/sessions/${s.sid}/verify"]`)));
  });

  it('appends the next rows in place as "Load more" scrolls into view (htmx, under the CSP), each row once', async () => {
    const page = await signedIn(1100, 800, `/sessions/${longSid}`);
    const errors: string[] = [];
    page.on('console', (m) => {
      if (m.type() === 'error') errors.push(m.text());
    });
    const rows = () => page.locator('#rows-list > li:not(.day)').count();
    expect(await rows()).toBe(TIMELINE_PAGE_ROWS);
    for (let i = 0; i < 10 && (await page.locator('a.more').count()) > 0; i++) {
      const before = await rows();
      await page.locator('a.more').scrollIntoViewIfNeeded();
      await expect.poll(rows, { timeout: 5000 }).toBeGreaterThan(before);
    }
    expect(page.url()).toBe(`${board.base}/sessions/${longSid}`);
    const positions = await page
      .locator('#rows-list > li:not(.day)')
      .evaluateAll((els) =>
        els.map((e) =>
          Number((e as unknown as { getAttribute(n: string): string }).getAttribute('data-pos')),
        ),
      );
    expect(positions).toEqual([...Array(LONG_ROWS).keys()]);
    expect(await page.locator('#more-rows').textContent()).toContain('End of the session');
    expect(errors).toEqual([]);
  });

  it('downloads the verify report with the signed-in cookie', async () => {
    const page = await signedIn();
    const answer = await page.evaluate(async (href) => {
      const r = await fetch(href);
      return { status: r.status, body: (await r.json()) as { summary: { events: number } } };
    }, `/v1/sessions/${s.sid}/verify`);
    expect(answer.status).toBe(200);
    expect(answer.body.summary.events).toBe(48);
  });

  for (const scheme of ['light', 'dark'] as const) {
    for (const width of [1100, 390]) {
      it(`has no serious or critical axe-core violation in ${scheme} at ${width} px, nothing scrolling sideways`, async () => {
        const page = await signedIn(width);
        await page.emulateMedia({ colorScheme: scheme });
        expect(await axeViolations(page)).toEqual([]);
        const sideways = await page.evaluate(
          () => document.documentElement.scrollWidth - document.documentElement.clientWidth,
        );
        expect(sideways).toBeLessThanOrEqual(0);
        if (width < 500) {
          // the side panel comes before the rows (issue 14 finding 4)
          const [rows, aside] = await Promise.all([
            page.locator('ol.tl').first().boundingBox(),
            page.locator('aside').boundingBox(),
          ]);
          expect(aside!.y + aside!.height).toBeLessThanOrEqual(rows!.y + 1);
        }
        await page.screenshot({
          path: join(SHOTS, `timeline-${scheme}-${width}.png`),
          fullPage: width > 500,
        });
      });
    }
  }

  it('does not scroll sideways at 360 px', async () => {
    const page = await signedIn(360, 740);
    const sideways = await page.evaluate(
      () => document.documentElement.scrollWidth - document.documentElement.clientWidth,
    );
    expect(sideways).toBeLessThanOrEqual(0);
  });
});
