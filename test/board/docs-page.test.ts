/**
 * The API reference (`GET /v1/docs`) in a real browser (Debian's Chromium, as test/board/browser.test.ts):
 * under its own CSP it renders with its styles and reports no violation, runs no script, asks nothing of
 * another origin, and shows a section for every operation of the generated document
 * (docs/adr/0006-api-reference-page-stays-server-rendered.md). The screenshot is kept in .test-results/.
 */
import { mkdirSync } from 'node:fs';
import { dirname } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, describe, expect, it } from 'vitest';
import { browsers } from '../support/browser.js';
import { request } from '../support/http.js';
import { useServer } from '../support/server.js';

const SCREENSHOT = fileURLToPath(new URL('../../.test-results/docs.png', import.meta.url));

/** What the page's `getComputedStyle` is (the tests are type-checked without the DOM's types). */
type Window = { getComputedStyle(e: unknown): { backgroundColor: string } };

const srv = useServer();
const open = browsers();

afterAll(async () => {
  await open.closeAll();
});

describe('the API reference in Chromium', () => {
  it('renders every operation of the document under its CSP, styled, with no script and nothing from elsewhere', async () => {
    const doc = (await request(srv, 'GET', '/v1/openapi.json')).json as {
      paths: Record<string, Record<string, { operationId: string }>>;
    };
    const ids = Object.values(doc.paths).flatMap((item) => Object.values(item).map((op) => op.operationId));
    const page = await (await open.fresh({ width: 1200, height: 900 })).newPage();
    const problems: string[] = [];
    const elsewhere: string[] = [];
    page.on('console', (m) => {
      if (m.type() === 'error' || m.type() === 'warning') problems.push(m.text());
    });
    page.on('pageerror', (e) => problems.push(e.message));
    await page.route('**/*', (route) => {
      if (route.request().url().startsWith(`${srv.url}/`)) return route.continue();
      elsewhere.push(route.request().url());
      return route.abort();
    });
    const res = await page.goto(`${srv.url}/v1/docs`);
    expect(res?.status()).toBe(200);
    expect(res?.headers()['content-security-policy']).toContain("default-src 'none'");
    expect(await page.locator('script').count()).toBe(0);
    for (const id of ids) expect(await page.locator(`[id="op-${id}"]`).count(), id).toBe(1);
    // The inline styles apply: a POST's method badge has its colour, which the CSP would otherwise drop.
    const badge = page.locator('[id="op-postChunk"] .method').first();
    expect(
      await badge.evaluate((el) => (globalThis as unknown as Window).getComputedStyle(el).backgroundColor),
    ).toBe('rgb(220, 252, 231)');
    mkdirSync(dirname(SCREENSHOT), { recursive: true });
    await page.locator('[id="op-postChunk"]').scrollIntoViewIfNeeded();
    await page.screenshot({ path: SCREENSHOT });
    expect(problems).toEqual([]);
    expect(elsewhere).toEqual([]);
    expect(ids.length).toBeGreaterThan(20);
  });
});
