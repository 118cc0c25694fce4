/**
 * The session page's frame in Debian's Chromium (issue 14 findings 4 and 6): a long title stays on the
 * header's line with "Sign out" (cut with an ellipsis; the whole title is the page's heading), the people
 * line reads "People in this session", and a "← Board" link leads back. Real HTTP on loopback, the local
 * stores, the page's own CSP.
 */
import { join } from 'node:path';
import type { Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { browsers } from '../support/browser.js';
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
const open = browsers(() => board.tmp);
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
