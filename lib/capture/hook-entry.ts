/**
 * The program of `dist/hook.js` (scripts/build.mjs): runs `hansard hook …` and exits 0 whatever happens
 * (see `hook-main.ts`).
 */
import { hookMain } from './hook-main.js';

hookMain(process.argv.slice(2), process.env).then(
  (code) => process.exit(code),
  () => process.exit(0),
);
