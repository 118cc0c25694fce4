/**
 * Debian's Chromium driven by playwright-core, for the board's browser tests (`pretest` installs it:
 * scripts/ensure-chromium.mjs): one Chromium per run (test/support/services.ts), a fresh browser context
 * per call, closed by `closeAll`.
 */
import { type Browser, type BrowserContext, chromium } from 'playwright-core';
import { sharedEndpoint } from '../../harness/shared.js';

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

/**
 * Opens fresh browser contexts (each with its own empty storage: no cookies) in the run's shared Chromium
 * (test/support/services.ts), or outside such a run in a Chromium of its own; `closeAll` closes every one
 * it opened (and a Chromium it launched).
 */
export function browsers() {
  const contexts: BrowserContext[] = [];
  let browser: Promise<Browser> | undefined;
  const connect = async (): Promise<Browser> => {
    const shared = await sharedEndpoint('chromium');
    if (shared !== null) return chromium.connect(shared);
    return chromium.launch({ executablePath: CHROMIUM, headless: true, args: CHROMIUM_ARGS });
  };
  return {
    /** A new browser context with its own empty storage (no cookies). */
    async fresh(
      opts: { width?: number; height?: number; javaScriptEnabled?: boolean } = {},
    ): Promise<BrowserContext> {
      browser ??= connect();
      const ctx = await (await browser).newContext({
        viewport: { width: opts.width ?? 1100, height: opts.height ?? 700 },
        javaScriptEnabled: opts.javaScriptEnabled ?? true,
      });
      contexts.push(ctx);
      return ctx;
    },
    async closeAll(): Promise<void> {
      for (const c of contexts.splice(0)) await c.close().catch(() => {});
      // Disconnects from the shared Chromium; closes one launched here.
      const b = browser;
      browser = undefined;
      await (await b?.catch(() => undefined))?.close().catch(() => {});
    },
  };
}
