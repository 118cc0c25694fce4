/**
 * `npm run screenshots`: the board's overview and a session's timeline, light and dark, desktop (1280 px)
 * and phone (390 px) width, as PNGs in docs/board/ (issue 14, linked from the README). Starts the built
 * `hansard serve` on loopback with a fresh data directory, fills it with scripts/board-demo.ts, signs
 * Debian's Chromium in with a board link and takes each picture. Needs /usr/bin/chromium (`npm test`'s
 * pretest installs it: scripts/ensure-chromium.mjs).
 */
import { mkdirSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { chromium } from 'playwright-core';
import { startServer } from '../bench/serve.js';
import { seedBoardDemo } from './board-demo.js';

const ADMIN = `hns_${'S'.repeat(43)}`;
const OUT = join(import.meta.dirname, '..', 'docs', 'board');

const data = mkdtempSync(join(tmpdir(), 'hansard-shots-'));
const { url, proc } = await startServer(data, ADMIN);
const browser = await chromium.launch({
  executablePath: '/usr/bin/chromium',
  args: ['--no-sandbox', '--disable-gpu', '--font-render-hinting=none'],
});
try {
  const { audited } = await seedBoardDemo(url, ADMIN);
  const res = await fetch(`${url}/v1/tokens`, {
    method: 'POST',
    headers: { authorization: `Bearer ${ADMIN}`, 'content-type': 'application/json' },
    body: JSON.stringify({ scopes: ['board'], label: 'screenshots' }),
  });
  const { token: secret } = (await res.json()) as { token: string };
  mkdirSync(OUT, { recursive: true });
  const sizes = { desktop: { width: 1280, height: 860 }, phone: { width: 390, height: 844 } } as const;
  for (const scheme of ['light', 'dark'] as const) {
    for (const [name, viewport] of Object.entries(sizes)) {
      const ctx = await browser.newContext({ viewport, colorScheme: scheme, deviceScaleFactor: 1 });
      const page = await ctx.newPage();
      await page.goto(`${url}/?token=${encodeURIComponent(secret)}`);
      await page.waitForLoadState('load');
      await page.waitForTimeout(700);
      await page.screenshot({
        path: join(OUT, `overview-${scheme}-${name}.png`),
        fullPage: name === 'desktop',
      });
      await page.goto(`${url}/sessions/${audited}`);
      await page.waitForLoadState('load');
      await page.waitForTimeout(700);
      await page.screenshot({
        path: join(OUT, `timeline-${scheme}-${name}.png`),
        fullPage: name === 'desktop',
      });
      await ctx.close();
      console.log(`docs/board/{overview,timeline}-${scheme}-${name}.png`);
    }
  }
} finally {
  await browser.close();
  proc.kill('SIGTERM');
  await new Promise((r) => proc.once('exit', r));
  rmSync(data, { recursive: true, force: true });
}
