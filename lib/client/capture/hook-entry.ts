/**
 * The program of `dist/hook-bundle.cjs` (scripts/build.mjs): `dist/hook.cjs` (`hook-loader.ts`) loads it
 * and calls `start` with the watchdog it started (null for `hansard hook ship`); runs `hansard hook …` and
 * exits 0 whatever happens (see `hook-main.ts`).
 */
import { hookMain } from './hook-main.js';
import type { Watchdog } from './hook-watchdog.js';

/** Runs the hook of `process.argv` and exits with its code. */
export function start(watchdog: Watchdog | null): void {
  hookMain(process.argv.slice(2), process.env, watchdog).then(
    (code) => process.exit(code),
    () => process.exit(0),
  );
}
