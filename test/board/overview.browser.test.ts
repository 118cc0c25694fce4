/**
 * The overview in Debian's Chromium (issue 14.1, 14.4, 14.5): filters narrow the list and survive a
 * reload (they live in the URL); the keyboard alone (Tab, Enter) reaches every control and follows a
 * link; axe-core finds no serious or critical violation in light and dark, at desktop and phone width
 * (and nothing scrolls sideways at 360 px); markup and script in notes, agent names, first prompts,
 * people and filter values are shown as text (no element injected, no script run), before and after a
 * live update. Real HTTP on loopback, the local stores, the pages' own CSP (axe is injected through the
 * DevTools protocol, which the CSP does not govern).
 */
import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import type { Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { browsers } from '../support/browser.js';
import { type BoardFixture, startBoard } from './overview-fixture.js';

/** What the callbacks given to `page.evaluate` see in the page (the project compiles without the DOM lib). */
interface El {
  tagName: string;
  textContent: string | null;
  getAttribute(name: string): string | null;
}
declare const document: {
  activeElement: El | null;
  querySelectorAll(selector: string): ArrayLike<El>;
  documentElement: { scrollWidth: number; clientWidth: number };
};
declare const window: { pwned?: number; getComputedStyle(el: El): { outlineStyle: string } };
declare const axe: { run(ctx: unknown, opts: unknown): Promise<{ violations: Violation[] }> };
interface Violation {
  id: string;
  impact: string | null;
  help: string;
  nodes: { target: string[]; failureSummary?: string }[];
}

const AXE = readFileSync(createRequire(import.meta.url).resolve('axe-core/axe.min.js'), 'utf8');
const HOSTILE = {
  agent: '<img src=x onerror="window.pwned=1">',
  user: '<script>window.pwned=2</script>',
  prompt: '<b>bold</b><script>window.pwned=3</script> please',
  note: '<svg onload="window.pwned=4"></svg> blocked on <i>it</i>',
  q: '"><script>window.pwned=5</script>',
};

let f: BoardFixture;
const open = browsers();
const sids = { a: '', b: '', c: '', d: '', h: '' };

/** A signed-in page at `path`; a dialog (an injected `alert`) fails the test. */
async function boardPage(path = '/', size?: { width: number; height: number }): Promise<Page> {
  const ctx = await open.fresh(size ?? {});
  await ctx.addCookies([{ name: 'hansard_board', value: f.board, url: f.base }]);
  const page = ctx.pages()[0] ?? (await ctx.newPage());
  page.on('dialog', (d) => {
    throw new Error(`a dialog opened: ${d.message()}`);
  });
  await page.goto(`${f.base}${path}`);
  return page;
}

/** The sids of the overview's rows, in order. */
function rows(page: Page): Promise<string[]> {
  return page
    .locator('main#overview tr[data-sid]')
    .evaluateAll((els) => els.map((e) => e.getAttribute('data-sid')!));
}

beforeAll(async () => {
  f = await startBoard();
  sids.a = await f.record('claude-code', 'priya', 'fix the flaky upload test');
  await f.report(sids.a, 'working', 'on it');
  sids.b = await f.record('codex', 'sam', 'write the release notes');
  await f.report(sids.b, 'needs_review', 'ready for a look');
  sids.c = await f.record('claude-code', 'sam', 'bump the dependencies');
  await f.report(sids.c, 'blocked', 'the registry is down');
  sids.d = await f.record('codex', 'priya', 'document the overview');
  await f.report(sids.d, 'done', 'merged');
  sids.h = await f.record(HOSTILE.agent, HOSTILE.user, HOSTILE.prompt);
  await f.report(sids.h, 'working', HOSTILE.note);
}, 60_000);

afterAll(async () => {
  await open.closeAll();
  await f?.close();
});

describe('the overview in Chromium', () => {
  it('lists urgent first, and filters narrow the list and survive a reload', async () => {
    const page = await boardPage();
    expect((await rows(page))[0]).toBe(sids.c); // blocked first
    expect(await rows(page)).toHaveLength(5);
    await page.selectOption('select[name="agent"]', 'codex');
    await page.getByRole('button', { name: 'Filter' }).click();
    await page.waitForURL(/[?&]agent=codex/);
    expect((await rows(page)).sort()).toEqual([sids.b, sids.d].sort());
    await page.fill('form.filters input[name="q"]', 'release');
    await page.press('form.filters input[name="q"]', 'Enter');
    await page.waitForURL(/q=release/);
    expect(await rows(page)).toEqual([sids.b]);
    const url = page.url();
    await page.reload();
    expect(page.url()).toBe(url);
    expect(await rows(page)).toEqual([sids.b]);
    expect(await page.inputValue('select[name="agent"]')).toBe('codex');
    expect(await page.inputValue('form.filters input[name="q"]')).toBe('release');
    // the live stream carries the same filters
    expect(await page.getAttribute('main#overview', 'sse-connect')).toBe(
      '/board/events?agent=codex&q=release',
    );
    // a group count links to its state, keeping the filters
    await page.goto(`${f.base}/?person=sam`);
    await page.locator('li[data-group="blocked"] a').click();
    await page.waitForURL(/state=blocked/);
    expect(page.url()).toContain('person=sam');
    expect(await rows(page)).toEqual([sids.c]);
    // a person's and an agent's view: the same overview, filtered by the path
    await page.goto(`${f.base}/people/priya`);
    expect((await rows(page)).sort()).toEqual([sids.a, sids.d].sort());
    expect(await page.getAttribute(`tr[data-sid="${sids.a}"] a[href^="/sessions/"]`, 'href')).toBe(
      `/sessions/${sids.a}?person=priya`,
    );
    await page.getByRole('link', { name: 'claude-code' }).first().click();
    await page.waitForURL(`${f.base}/agents/claude-code`);
    expect((await rows(page)).sort()).toEqual([sids.a, sids.c].sort());
    await page.context().close();
  });

  it('reads and filters without JavaScript: server-rendered rows, a GET form, no live indicator', async () => {
    const ctx = await open.fresh({ javaScriptEnabled: false });
    await ctx.addCookies([{ name: 'hansard_board', value: f.board, url: f.base }]);
    const page = ctx.pages()[0] ?? (await ctx.newPage());
    await page.goto(`${f.base}/`);
    expect(await rows(page)).toHaveLength(5);
    expect(await page.isVisible('#live-status')).toBe(false);
    expect(await page.textContent('main#overview')).toContain('Reload for the latest.');
    await page.selectOption('select[name="state"]', 'blocked');
    await page.getByRole('button', { name: 'Filter' }).click();
    await page.waitForURL(/state=blocked/);
    expect(await rows(page)).toEqual([sids.c]);
    await ctx.close();
  });

  it('reaches every control with Tab alone, with a visible focus, and follows a link with Enter', async () => {
    const page = await boardPage('/?limit=2');
    const controls = await page
      // a hidden input (the sign-out form's token) is no control
      .locator('a[href], button, select, input:not([type="hidden"])')
      .evaluateAll((els) => els.map((e) => e.outerHTML.slice(0, 120)));
    const reached: string[] = [];
    const unstyled: string[] = [];
    for (let i = 0; i < controls.length + 5; i++) {
      await page.keyboard.press('Tab');
      const focus = await page.evaluate(() => {
        const el = document.activeElement;
        if (!el || el.tagName === 'BODY') return null;
        return {
          html: (el as unknown as { outerHTML: string }).outerHTML.slice(0, 120),
          outline: window.getComputedStyle(el).outlineStyle,
        };
      });
      if (!focus) continue;
      reached.push(focus.html);
      if (focus.outline === 'none') unstyled.push(focus.html);
    }
    expect(controls.filter((c) => !reached.includes(c))).toEqual([]);
    expect(unstyled).toEqual([]);
    // skip link first, then the header, then the filters, then the board
    expect(reached[0]).toContain('Skip to the main content');
    const at = (part: string) => reached.findIndex((r) => r.includes(part));
    // (the filters' text box: the header's search box, before Sign out, is named q too)
    const order = [
      'Sign out',
      'name="state"',
      '<input type="search" name="q"',
      'state=blocked',
      '/sessions/',
      'rel="next"',
    ].map(at);
    expect(order.every((n) => n > 0)).toBe(true);
    expect([...order].sort((x, y) => x - y)).toEqual(order);
    // Enter on "Next page"
    const next = page.getByRole('link', { name: 'Next page' });
    await next.focus();
    await page.keyboard.press('Enter');
    await page.waitForURL(/page=2/);
    expect(page.url()).toContain('limit=2');
    await page.context().close();
  });

  for (const [name, scheme, size] of [
    ['light, desktop', 'light', { width: 1100, height: 800 }],
    ['dark, desktop', 'dark', { width: 1100, height: 800 }],
    ['light, phone', 'light', { width: 360, height: 740 }],
    ['dark, phone', 'dark', { width: 360, height: 740 }],
  ] as const) {
    it(`has no serious or critical axe-core violation (${name})`, async () => {
      const page = await boardPage('/?limit=3', size);
      await page.emulateMedia({ colorScheme: scheme });
      await page.evaluate(AXE);
      const { violations } = await page.evaluate(() =>
        axe.run(document, { runOnly: ['wcag2a', 'wcag2aa', 'wcag21a', 'wcag21aa', 'best-practice'] }),
      );
      const bad = violations
        .filter((v) => v.impact === 'serious' || v.impact === 'critical')
        .map(
          (v) => `${v.id} (${v.impact}): ${v.help} at ${v.nodes.map((n) => n.target.join(' ')).join(', ')}`,
        );
      expect(bad).toEqual([]);
      if (size.width === 360) {
        const { scrollWidth, clientWidth } = await page.evaluate(() => ({
          scrollWidth: document.documentElement.scrollWidth,
          clientWidth: document.documentElement.clientWidth,
        }));
        expect(scrollWidth).toBeLessThanOrEqual(clientWidth);
      }
      await page.context().close();
    });
  }

  it('shows markup in names, prompts, notes and filter values as text, before and after a live update', async () => {
    const q = encodeURIComponent(HOSTILE.q);
    for (const path of [
      '/',
      `/?q=${q}`,
      `/?agent=${encodeURIComponent(HOSTILE.agent)}`,
      `/people/${encodeURIComponent(HOSTILE.user)}`,
      `/agents/${encodeURIComponent(HOSTILE.agent)}`,
    ]) {
      const page = await boardPage(path);
      const check = async () => {
        const injected = await page.evaluate(() => ({
          pwned: window.pwned ?? null,
          img: document.querySelectorAll('img').length,
          svg: document.querySelectorAll('svg').length,
          bold: document.querySelectorAll('main b, main i').length,
          scripts: document.querySelectorAll('body script').length,
        }));
        expect(injected, path).toEqual({ pwned: null, img: 0, svg: 0, bold: 0, scripts: 0 });
      };
      await check();
      const text = (await page.textContent('body')) ?? '';
      if (path === '/') {
        for (const s of [HOSTILE.agent, HOSTILE.user, HOSTILE.note]) expect(text).toContain(s);
        expect(text).toContain('<b>bold</b><script>window.pwned=3</script> please');
        // a live update re-renders the region: still text
        await page.waitForSelector('#live-status[data-state="live"]');
        await f.report(sids.h, 'blocked', `${HOSTILE.note} again`);
        await page.waitForFunction(
          () => document.querySelectorAll('#group-blocked tr[data-sid]').length === 2,
        );
        await check();
        expect(await page.textContent('main#overview')).toContain(`${HOSTILE.note} again`);
      }
      if (path.startsWith('/?q='))
        expect(await page.inputValue('form.filters input[name="q"]')).toBe(HOSTILE.q);
      await page.context().close();
    }
  });
});
