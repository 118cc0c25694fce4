/**
 * The overview's group tables line up (docs/board.md): every group is its own `<table>`, and all of them
 * share one set of column widths (`table.overview`, a `<colgroup>`), so each column starts at the same x
 * in every group whatever its rows hold, at desktop widths from 720 px to 1400 px; a state badge and a
 * time stay inside their cells. Under 700 px the rows are still stacked cards with nothing scrolling
 * sideways. Debian's Chromium, real HTTP on loopback, the local stores.
 */
import type { Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { browsers } from '../support/browser.js';
import { type BoardFixture, startBoard } from './overview-fixture.js';

interface Box {
  left: number;
  width: number;
}
interface El {
  getBoundingClientRect(): Box;
  scrollWidth: number;
  clientWidth: number;
  querySelectorAll(selector: string): ArrayLike<El>;
}
declare const document: {
  querySelectorAll(selector: string): ArrayLike<El>;
  documentElement: { scrollWidth: number; clientWidth: number };
};
declare const getComputedStyle: (el: El) => { display: string };

let f: BoardFixture;
const open = browsers();

async function boardPage(width: number): Promise<Page> {
  const ctx = await open.fresh({ width, height: 900 });
  await ctx.addCookies([{ name: 'hansard_board', value: f.board, url: f.base }]);
  const page = ctx.pages()[0] ?? (await ctx.newPage());
  await page.goto(`${f.base}/`);
  return page;
}

beforeAll(async () => {
  f = await startBoard();
  // groups whose rows hold very different text: a long prompt, a long note, many people, short ones
  const blocked = await f.record('claude-code', 'priya', 'a'.repeat(20));
  await f.report(blocked, 'blocked', 'the registry is down, and so is the mirror: '.repeat(5));
  const review = await f.record(
    'an-agent-with-a-rather-long-name',
    'sam',
    'write the release notes '.repeat(5),
  );
  await f.report(review, 'needs_review', 'ok');
  const working = await f.record('codex', 'ana', 'x');
  await f.report(working, 'working', '');
  await f.record('codex', 'ben', 'bump the dependencies'); // no report: the rest
}, 60_000);

afterAll(async () => {
  await open.closeAll();
  await f?.close();
});

describe('the overview’s group tables', () => {
  for (const width of [720, 1000, 1400]) {
    it(`share their column positions and widths at ${width} px`, async () => {
      const page = await boardPage(width);
      const tables = await page.evaluate(() =>
        Array.from(document.querySelectorAll('main#overview table'), (t) =>
          Array.from(t.querySelectorAll('thead th'), (th) => {
            const b = th.getBoundingClientRect();
            return [Math.round(b.left), Math.round(b.width)];
          }),
        ),
      );
      expect(tables.length).toBe(4);
      for (const cols of tables.slice(1)) expect(cols).toEqual(tables[0]);
      // and no column is crushed to make room for the others (the note's was ~40 px at 720 px)
      expect(Math.min(...tables[0]!.map(([, w]) => w!))).toBeGreaterThanOrEqual(100);
      // a badge or a time wider than its cell would spill into the next column
      const spilled = await page.evaluate(() =>
        Array.from(document.querySelectorAll('td[data-label="State"], td[data-label="Last update"]'))
          .filter((td) => td.scrollWidth > td.clientWidth)
          .map(
            (td) =>
              `${(td as unknown as { textContent: string }).textContent}: ${td.scrollWidth - td.clientWidth} px`,
          ),
      );
      expect(spilled).toEqual([]);
      await page.context().close();
    });
  }

  it('stays stacked cards under 700 px, nothing scrolling sideways', async () => {
    const page = await boardPage(360);
    const got = await page.evaluate(() => ({
      td: getComputedStyle(document.querySelectorAll('main#overview td')[0]!).display,
      scroll: document.documentElement.scrollWidth - document.documentElement.clientWidth,
    }));
    expect(got).toEqual({ td: 'block', scroll: 0 });
    await page.context().close();
  });
});
