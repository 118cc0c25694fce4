/**
 * Search on the board (issue 30 item 3, lib/board/search.tsx) in Debian's Chromium, real HTTP on
 * loopback, the local stores with the SQLite FTS5 index (its queue drained by hand: `indexNow`): a query
 * typed in the header's box of the overview lands on `/search?q=…` with the query in the box, the hits'
 * snippets mark the matched words with `<mark>` (what a writer wrote stays text: no markup gets through),
 * and a hit's link opens the timeline at its row (`?at=` and the row's anchor on the page). The box works
 * without JavaScript; a bad query is a 400 page saying why beside the box; no query: a help; and the
 * pages pass axe-core (no serious or critical violation) with nothing scrolling sideways, at 1280 and
 * 390 px, light and dark.
 */
import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import type { Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { mintToken } from '../../lib/service/index.js';
import { browsers } from '../support/browser.js';
import { type LocalSegment, writeSession } from '../support/segments.js';
import { makeTenant, startServer, type TestServer } from '../support/server.js';
import { upload } from '../support/stored.js';

declare const document: {
  documentElement: { scrollWidth: number; clientWidth: number };
};
declare const axe: { run(ctx: unknown, opts: unknown): Promise<{ violations: Violation[] }> };
interface Violation {
  id: string;
  impact: string | null;
  help: string;
  nodes: { target: string[] }[];
}
const AXE = readFileSync(createRequire(import.meta.url).resolve('axe-core/axe.min.js'), 'utf8');

let srv: TestServer;
let board = '';
let billing: LocalSegment;
let hostile: LocalSegment;
const open = browsers();

/** A fresh browser signed in with the board token (its cookie, as the sign-in link sets it) on `path`. */
async function boardPage(path: string, width = 1280, javaScriptEnabled = true): Promise<Page> {
  const ctx = await open.fresh({ width, height: 900, javaScriptEnabled });
  await ctx.addCookies([{ name: 'hansard_board', value: board, url: srv.url }]);
  const page = ctx.pages()[0] ?? (await ctx.newPage());
  await page.goto(`${srv.url}${path}`);
  return page;
}

beforeAll(async () => {
  srv = await startServer();
  const tenant = await makeTenant(srv, 'local');
  board = (await mintToken(srv.stores.state, 'local', { scopes: ['board'] }, new Date())).token;
  billing = writeSession(srv.workDir, {
    agent: 'codex',
    text: 'migrate the billing schema before the release',
  });
  // A message that is markup: the snippet must show it as text.
  hostile = writeSession(srv.workDir, {
    text: 'billing <b id="injected">bold</b> <img src=x onerror=alert(1)>',
  });
  for (let i = 0; i < 25; i++) {
    await upload(srv, tenant.admin, writeSession(srv.workDir, { text: `payments dashboard number ${i}` }));
  }
  await upload(srv, tenant.admin, billing);
  await upload(srv, tenant.admin, hostile);
  await srv.indexNow();
}, 60_000);

afterAll(async () => {
  await open.closeAll();
  await srv?.close();
});

describe('the search box and results', () => {
  for (const width of [1280, 390]) {
    it(`a query typed in the overview's header box lists marked hits; a hit opens its row (${width} px)`, async () => {
      const page = await boardPage('/', width);
      const box = page.getByLabel('Search sessions');
      await expect(box.count()).resolves.toBe(1);
      await box.fill('"billing schema"');
      await Promise.all([page.waitForURL(/\/search\?q=/), box.press('Enter')]);
      expect(new URL(page.url()).searchParams.get('q')).toBe('"billing schema"');
      await expect(page.getByLabel('Search sessions').inputValue()).resolves.toBe('"billing schema"');
      const hit = page.locator(`ol.hits > li[data-sid="${billing.sid}"]`).first();
      await expect(hit.locator('p.snippet mark').allTextContents()).resolves.toEqual(['billing', 'schema']);
      await expect(hit.locator('a.hit-title').textContent()).resolves.toBe(
        'migrate the billing schema before the release',
      );
      await expect(hit.locator('.hit-meta').textContent()).resolves.toMatch(/message.*person priya/);
      const href = (await hit.locator('a.hit-title').getAttribute('href')) ?? '';
      const anchor = href.split('#')[1] ?? '';
      expect(href).toMatch(new RegExp(`^/sessions/${billing.sid}\\?at=${anchor}#${anchor}$`));
      await Promise.all([page.waitForURL(/\/sessions\//), hit.locator('a.hit-title').click()]);
      expect(new URL(page.url()).searchParams.get('at')).toBe(anchor);
      await expect(page.locator(`[id="${anchor}"]`).count()).resolves.toBe(1);
      await expect(page.locator(`[id="${anchor}"]`).textContent()).resolves.toContain('billing schema');
      await page.context().close();
    });
  }

  it('a writer’s markup in a snippet is text, never HTML', async () => {
    const page = await boardPage(`/search?q=billing+bold`);
    const hit = page.locator(`ol.hits > li[data-sid="${hostile.sid}"]`);
    await expect(hit.locator('p.snippet').textContent()).resolves.toContain('<b id="injected">');
    await expect(page.locator('#injected').count()).resolves.toBe(0);
    await expect(page.locator('ol.hits img').count()).resolves.toBe(0);
    await page.context().close();
  });

  it('pages: 20 hits, then the next page link to the rest', async () => {
    const page = await boardPage('/search?q=dashboard');
    await expect(page.locator('ol.hits > li').count()).resolves.toBe(20);
    await Promise.all([page.waitForURL(/cursor=/), page.getByRole('link', { name: 'Next page' }).click()]);
    await expect(page.locator('ol.hits > li').count()).resolves.toBe(5);
    await expect(page.getByRole('link', { name: 'Next page' }).count()).resolves.toBe(0);
    await expect(page.getByLabel('Search sessions').inputValue()).resolves.toBe('dashboard');
    await page.context().close();
  });

  it('works without JavaScript', async () => {
    const page = await boardPage('/', 1280, false);
    const box = page.getByLabel('Search sessions');
    await box.fill('schema');
    await Promise.all([page.waitForURL(/\/search\?q=schema$/), box.press('Enter')]);
    await expect(page.locator(`ol.hits > li[data-sid="${billing.sid}"] mark`).textContent()).resolves.toBe(
      'schema',
    );
    await page.context().close();
  });

  it('a bad query: 400, the message beside the box, which points at it', async () => {
    const ctx = await open.fresh({ width: 1280 });
    await ctx.addCookies([{ name: 'hansard_board', value: board, url: srv.url }]);
    const page = ctx.pages()[0] ?? (await ctx.newPage());
    const answer = await page.goto(`${srv.url}/search?q=${encodeURIComponent('billing owner:priya')}`);
    expect(answer?.status()).toBe(400);
    const message = page.locator('#search-error');
    await expect(message.textContent()).resolves.toMatch(/"owner:" is not a filter .*at character 9/);
    const box = page.getByLabel('Search sessions');
    await expect(box.inputValue()).resolves.toBe('billing owner:priya');
    await expect(box.getAttribute('aria-invalid')).resolves.toBe('true');
    await expect(box.getAttribute('aria-describedby')).resolves.toBe('search-error');
    await ctx.close();
  });

  it('no query: a short help of the language, its examples linking to their searches', async () => {
    const page = await boardPage('/search');
    await expect(page.getByRole('heading', { name: 'How to search' }).count()).resolves.toBe(1);
    await expect(page.locator('dl.search-help a').first().getAttribute('href')).resolves.toMatch(
      /^\/search\?q=/,
    );
    await page.context().close();
  });
});

describe('accessibility and narrow screens', () => {
  const cases: [string, string][] = [
    ['/search?q=billing', 'the results'],
    ['/search?q=billing+owner%3Apriya', 'a bad query'],
    ['/search', 'the help'],
    ['/', 'the overview with the box'],
  ];
  for (const [path, label] of cases) {
    for (const scheme of ['light', 'dark'] as const) {
      for (const width of [1280, 390]) {
        it(`${label}: no serious or critical axe-core violation, no sideways scroll (${scheme}, ${width} px)`, async () => {
          const page = await boardPage(path, width);
          await page.emulateMedia({ colorScheme: scheme });
          await page.evaluate(AXE);
          const { violations } = await page.evaluate(() =>
            axe.run(document, { runOnly: ['wcag2a', 'wcag2aa', 'wcag21a', 'wcag21aa', 'best-practice'] }),
          );
          const bad = violations
            .filter((v) => v.impact === 'serious' || v.impact === 'critical')
            .map(
              (v) =>
                `${v.id} (${v.impact}): ${v.help} at ${v.nodes.map((n) => n.target.join(' ')).join(', ')}`,
            );
          expect(bad).toEqual([]);
          const { scrollWidth, clientWidth } = await page.evaluate(() => ({
            scrollWidth: document.documentElement.scrollWidth,
            clientWidth: document.documentElement.clientWidth,
          }));
          expect(scrollWidth).toBeLessThanOrEqual(clientWidth);
          await page.context().close();
        });
      }
    }
  }
});
