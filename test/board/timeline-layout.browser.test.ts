/**
 * The session page's frame in Debian's Chromium (issue 14 findings 4 and 6): a long title stays on the
 * header's line with "Sign out" (cut with an ellipsis; the whole title is the page's heading), the people
 * line reads "People in this session", and a "← Board" link leads back. On a phone (390 px) the side panel
 * (status history, work, downloads) comes before the rows of a long timeline, within the first screen,
 * its parts folded and opened by a tap or Enter, reached by Tab before the rows; on a wide screen it sits
 * beside the rows, open; axe-core finds no serious or critical violation at either. Real HTTP on loopback, the local
 * stores, the page's own CSP.
 */
import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { join } from 'node:path';
import type { Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { openSession } from '../../lib/log/index.js';
import { browsers } from '../support/browser.js';
import { readLocal } from '../support/segments.js';
import { upload } from '../support/stored.js';
import { storeTimelineSession, type TimelineSession } from '../support/timeline-session.js';
import { type BoardFixture, startBoard } from './overview-fixture.js';

interface Box {
  x: number;
  y: number;
  width: number;
  height: number;
}

let board: BoardFixture;
let longTitle: string;
let s: TimelineSession;
/** a session of 500 notes (three pages) */
let longSid: string;
const AXE_SOURCE = readFileSync(createRequire(import.meta.url).resolve('axe-core/axe.min.js'), 'utf8');
const open = browsers();
const TITLE = 'please find out why the nightly payments reconciliation job keeps timing out on the replica';

async function signedIn(width: number, height: number, path: string): Promise<Page> {
  const ctx = await open.fresh({ width, height });
  const page = ctx.pages()[0] ?? (await ctx.newPage());
  await page.goto(`${board.base}/?token=${board.board}`);
  await page.goto(`${board.base}${path}`);
  return page;
}

beforeAll(async () => {
  board = await startBoard();
  longTitle = await board.record('claude-code', 'priya', TITLE);
  const w = openSession(join(board.tmp, 'sessions'), { agent: 'noter' });
  for (let i = 0; i < 500; i++) w.note({ author: 'noter', text: `note ${i}` });
  w.end();
  longSid = w.sid;
  await upload({ url: board.base }, board.admin, readLocal({ sid: w.sid, w: w.w, dir: w.dir, path: w.path }));
  s = await storeTimelineSession(
    { url: board.base },
    join(board.tmp, 'sessions'),
    board.admin,
    board.reporter,
  );
}, 60_000);

afterAll(async () => {
  await open.closeAll();
  await board?.close();
});

describe('the timeline page header', () => {
  for (const width of [1100, 390]) {
    it(`keeps "Sign out" on the title's line at ${width} px, the title cut with an ellipsis`, async () => {
      const page = await signedIn(width, 800, `/sessions/${longTitle}`);
      const [h1, out] = await Promise.all([
        page.locator('header h1').boundingBox() as Promise<Box>,
        page.locator('header button', { hasText: 'Sign out' }).boundingBox() as Promise<Box>,
      ]);
      // on one line: the button's middle within the title's line box
      expect(out.y + out.height / 2).toBeGreaterThan(h1.y);
      expect(out.y + out.height / 2).toBeLessThan(h1.y + h1.height);
      expect(h1.x + h1.width).toBeLessThanOrEqual(out.x + 1);
      const style = await page.locator('header h1').evaluate((e) => {
        const cs = (
          globalThis as unknown as { getComputedStyle(e: unknown): { textOverflow: string } }
        ).getComputedStyle(e);
        return cs.textOverflow;
      });
      expect(style).toBe('ellipsis');
      expect(await page.locator('#tl-title').textContent()).toBe(TITLE);
      await page.context().close();
    });
  }

  it('says "People in this session" and links back to the board', async () => {
    const page = await signedIn(1100, 800, `/sessions/${s.sid}`);
    const people = await page.locator('main p', { hasText: 'People' }).first().textContent();
    expect(people).toMatch(/^People in this session: /);
    expect(people).not.toContain('so far');
    const back = page.locator('main a', { hasText: '← Board' });
    expect(await back.getAttribute('href')).toBe('/');
    await back.click();
    await page.waitForURL(`${board.base}/`);
    await page.context().close();
  });
});

/** axe-core's serious and critical violations of the page as shown now (evaluated past the page's CSP). */
async function axeViolations(page: Page): Promise<string[]> {
  await page.evaluate(AXE_SOURCE);
  const found = (await page.evaluate(`window.axe.run(document, { resultTypes: ['violations'] }).then((r) =>
    r.violations.map((v) => ({ id: v.id, impact: v.impact, nodes: v.nodes.slice(0, 3).map((n) => n.target.join(' ')) })))`)) as {
    id: string;
    impact: string;
    nodes: string[];
  }[];
  return found
    .filter((v) => v.impact === 'serious' || v.impact === 'critical')
    .map((v) => `${v.impact} ${v.id}: ${v.nodes.join(', ')}`);
}

describe('the side panel', () => {
  it('at 390 px: comes before the rows, within the first screen, its parts folded; Tab reaches it first', async () => {
    const page = await signedIn(390, 844, `/sessions/${longSid}`);
    const [aside, rows] = await Promise.all([
      page.locator('aside#side').boundingBox() as Promise<Box>,
      page.locator('ol.tl').first().boundingBox() as Promise<Box>,
    ]);
    expect(aside.y).toBeLessThan(844);
    expect(aside.y + aside.height).toBeLessThan(844);
    expect(aside.y + aside.height).toBeLessThanOrEqual(rows.y + 1);
    expect(await page.locator('details.side-part[open]').count()).toBe(0);
    // keyboard order: the skip link, the header, then the panel's parts, then the page's own links
    const order: string[] = [];
    for (let i = 0; i < 6; i++) {
      await page.keyboard.press('Tab');
      order.push(
        (await page.evaluate(
          `(() => { const a = document.activeElement; return a.tagName + ':' + (a.textContent || '').trim().slice(0, 20); })()`,
        )) as string,
      );
    }
    const firstSummary = order.findIndex((o) => o.startsWith('SUMMARY:Status history'));
    const back = order.findIndex((o) => o.startsWith('A:← Board'));
    expect(firstSummary, order.join(' | ')).toBeGreaterThan(-1);
    expect(back === -1 || back > firstSummary, order.join(' | ')).toBe(true);
    // Enter on a part's summary opens it
    const downloads = page.locator('details.side-part summary', { hasText: 'Downloads' });
    await downloads.focus();
    await page.keyboard.press('Enter');
    await expect.poll(() => page.locator('details.side-part[open]').count()).toBe(1);
    expect(await page.locator('aside a', { hasText: 'Merged replay (NDJSON)' }).isVisible()).toBe(true);
    expect(await axeViolations(page)).toEqual([]);
    await page.context().close();
  });

  it('at 1100 px: beside the rows, every part open, axe clean', async () => {
    const page = await signedIn(1100, 800, `/sessions/${longSid}`);
    const [aside, main] = await Promise.all([
      page.locator('aside#side').boundingBox() as Promise<Box>,
      page.locator('main#content').boundingBox() as Promise<Box>,
    ]);
    expect(aside.x).toBeGreaterThanOrEqual(main.x + main.width);
    expect(aside.y).toBeLessThan(300);
    expect(await page.locator('details.side-part[open]').count()).toBe(3);
    expect(await axeViolations(page)).toEqual([]);
    await page.context().close();
  });

  it('keeps one day heading per day when "Load more" appends the next pages in place', async () => {
    const page = await signedIn(1100, 800, `/sessions/${longSid}`);
    const rows = () => page.locator('#rows-list > li:not(.day)').count();
    for (let i = 0; i < 10 && (await page.locator('a.more').count()) > 0; i++) {
      const before = await rows();
      await page.locator('a.more').scrollIntoViewIfNeeded();
      await expect.poll(rows, { timeout: 5000 }).toBeGreaterThan(before);
    }
    expect(await rows()).toBe(502);
    const days = await page
      .locator('#rows-list > li.day')
      .evaluateAll((els) =>
        els.map((e) => (e as unknown as { getAttribute(n: string): string }).getAttribute('data-day')),
      );
    expect(days.length).toBeGreaterThan(0);
    expect(new Set(days).size).toBe(days.length);
    await page.context().close();
  });
});
