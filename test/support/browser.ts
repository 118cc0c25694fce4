/**
 * Debian's Chromium driven by playwright-core, for the board's browser tests (`pretest` installs it:
 * scripts/ensure-chromium.mjs): a fresh persistent context per call, each with its own empty profile,
 * closed by `closeAll`.
 */
import { mkdtempSync } from 'node:fs';
import { join } from 'node:path';
import { type BrowserContext, chromium } from 'playwright-core';

export const CHROMIUM = '/usr/bin/chromium';
export const CHROMIUM_ARGS = [
  '--no-sandbox',
  '--disable-gpu',
  '--disable-quic',
  '--no-first-run',
  '--disable-background-networking',
  '--disable-component-update',
  '--disable-sync',
];

/** Opens browsers with empty profiles under `tmp`; `closeAll` closes every one it opened. */
export function browsers(tmp: () => string) {
  const contexts: BrowserContext[] = [];
  return {
    /** A new browser with its own empty profile (no cookies). */
    async fresh(
      opts: { width?: number; height?: number; javaScriptEnabled?: boolean } = {},
    ): Promise<BrowserContext> {
      const profile = mkdtempSync(join(tmp(), 'profile-'));
      const ctx = await chromium.launchPersistentContext(profile, {
        executablePath: CHROMIUM,
        headless: true,
        args: CHROMIUM_ARGS,
        viewport: { width: opts.width ?? 1100, height: opts.height ?? 700 },
        javaScriptEnabled: opts.javaScriptEnabled ?? true,
      });
      contexts.push(ctx);
      return ctx;
    },
    async closeAll(): Promise<void> {
      for (const c of contexts.splice(0)) await c.close().catch(() => {});
    },
  };
}
