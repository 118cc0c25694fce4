/**
 * The program of `dist/hook-watchdog.cjs` (scripts/build.mjs): `node dist/hook-watchdog.cjs <state>
 * <harness> <budget ms> <hard deadline ms> <hook's start, ms since the epoch> killed|gone`, which the hook's
 * supervisor becomes once the hook is gone without having ended by itself (`hook-watchdog.ts`). Reads the
 * hook's notes from stdin (the supervisor hands them over whole; a second at most), then defers and
 * records (`hook-watchdog-rescue.ts`) and exits.
 */
import { rescue } from './hook-watchdog-rescue.js';

const chunks: Buffer[] = [];
let done = false;
const finish = (): void => {
  if (done) return;
  done = true;
  rescue(process.argv.slice(2), Buffer.concat(chunks).toString('utf8'));
  process.exit(0);
};
process.stdin.on('data', (c: Buffer) => chunks.push(c));
process.stdin.on('end', finish);
process.stdin.on('error', finish);
setTimeout(finish, 1_000);
