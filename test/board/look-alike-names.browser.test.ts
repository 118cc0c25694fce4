/**
 * Names and cut text as Chromium renders the overview (issue 25.6, docs/board.md): two agents named
 * `José` (precomposed, and e + U+0301) are one option of the agent filter, and choosing it lists both
 * sessions; `alice` and `аlice` (Cyrillic а), `bob` and `bоb` (Cyrillic о) are options and links whose
 * rendered text differs by a visible mark with the code points that set each apart; a title and an agent
 * name cut by the server end on whole characters; the marks keep axe-core's contrast and other rules in
 * light and dark. Real HTTP on loopback, the local stores, Debian's Chromium.
 */
import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import type { Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { browsers } from '../support/browser.js';
import { type BoardFixture, startBoard } from './overview-fixture.js';

interface El {
  textContent: string | null;
  innerText: string;
}
declare const document: unknown;
declare const axe: { run(ctx: unknown, opts: unknown): Promise<{ violations: Violation[] }> };
interface Violation {
  id: string;
  impact: string | null;
  help: string;
  nodes: { target: string[] }[];
}

const AXE = readFileSync(createRequire(import.meta.url).resolve('axe-core/axe.min.js'), 'utf8');
const FLAG = '\u{1F1EB}\u{1F1F7}';
const CODER = '\u{1F469}\u200D\u{1F4BB}';
const HALF_FLAG = /(?<!\p{RI})\p{RI}(?:\p{RI}\p{RI})*(?!\p{RI})/u;
const BARE_JOINER = /\u200D(?!\p{Extended_Pictographic})/u;

let f: BoardFixture;
const open = browsers();
const sids: Record<string, string> = {};

async function boardPage(path = '/'): Promise<Page> {
  const ctx = await open.fresh({ width: 1100, height: 800 });
  await ctx.addCookies([{ name: 'hansard_board', value: f.board, url: f.base }]);
  const page = ctx.pages()[0] ?? (await ctx.newPage());
  await page.goto(`${f.base}${path}`);
  return page;
}

const texts = (page: Page, selector: string) =>
  page.locator(selector).evaluateAll((els) => (els as unknown as El[]).map((e) => e.textContent ?? ''));
const rowText = (page: Page, sid: string, part: string) =>
  page
    .locator(`tr[data-sid="${sid}"] ${part}`)
    // biome-ignore lint/performance/useDomNodeTextContent: what a reader sees, as rendered, is the point
    .evaluateAll((els) => (els as unknown as El[]).map((e) => e.innerText));

beforeAll(async () => {
  f = await startBoard();
  sids.nfc = await f.record('Jos\u00e9', 'Jos\u00e9', 'precomposed');
  sids.nfd = await f.record('Jose\u0301', 'Jose\u0301', 'combining');
  sids.alice = await f.record('alice', 'bob', 'latin');
  sids.cyr = await f.record('\u0430lice', 'b\u043eb', 'cyrillic');
  sids.cut = await f.record(`${'a'.repeat(61)}${CODER}z`, 'priya', `x${FLAG.repeat(60)}`);
}, 60_000);

afterAll(async () => {
  await open.closeAll();
  await f?.close();
});

describe('names and cut text in Chromium', () => {
  it('shows one José, and the filter on it lists both spellings’ sessions', async () => {
    const page = await boardPage();
    const options = await texts(page, 'select[name="agent"] option');
    expect(options.filter((o) => o.normalize('NFC') === 'Jos\u00e9')).toHaveLength(1);
    await page.selectOption('select[name="agent"]', 'Jos\u00e9');
    await page.getByRole('button', { name: 'Filter' }).click();
    await page.waitForURL(/[?&]agent=/);
    const shown = await page
      .locator('main#overview tr[data-sid]')
      .evaluateAll((els) => els.map((e) => e.getAttribute('data-sid')));
    expect(shown.sort()).toEqual([sids.nfc, sids.nfd].sort());
    await page.context().close();
  });

  it('renders look-alike names differently, each with a visible mark of its code points', async () => {
    const page = await boardPage();
    for (const select of ['agent', 'person']) {
      const options = await texts(page, `select[name="${select}"] option`);
      expect(new Set(options).size, options.join(' | ')).toBe(options.length);
    }
    expect(await texts(page, 'select[name="agent"] option')).toEqual(
      expect.arrayContaining(['alice ≈ U+0061', '\u0430lice ≈ U+0430']),
    );
    const latin = await rowText(page, sids.alice!, 'ul.who-agents li');
    const cyrillic = await rowText(page, sids.cyr!, 'ul.who-agents li');
    expect(latin[0]).toContain('≈ U+0061');
    expect(cyrillic[0]).toContain('≈ U+0430');
    const mark = page.locator(`tr[data-sid="${sids.cyr}"] ul.who-agents .look-alike`);
    expect(await mark.isVisible()).toBe(true);
    expect(await mark.getAttribute('title')).toContain('U+0430 U+006C U+0069 U+0063 U+0065');
    await page.context().close();
  });

  it('renders cut titles and names on whole characters', async () => {
    const page = await boardPage();
    const [title] = await rowText(page, sids.cut!, '.row-title');
    const agents = await rowText(page, sids.cut!, 'ul.who-agents a');
    expect(title!.startsWith(`x${FLAG}`)).toBe(true);
    expect(title).not.toMatch(HALF_FLAG);
    expect(agents).toEqual(['a'.repeat(61)]);
    expect(agents[0]).not.toMatch(BARE_JOINER);
    await page.context().close();
  });

  for (const scheme of ['light', 'dark'] as const) {
    it(`keeps the marks free of serious or critical axe-core violations (${scheme})`, async () => {
      const page = await boardPage();
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
      await page.context().close();
    });
  }
});
