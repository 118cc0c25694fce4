/**
 * vitest's setupFiles (vitest.config.ts): no process outlives its test file. Every process a test file
 * starts inherits a marker in its environment (`HANSARD_TEST_FILE=<run>:<file id>`); when the file ends
 * (this afterAll runs after the file's own), any process still carrying the marker, or still a child of
 * the file's worker, fails the file with its pid and command line, and is killed. A process stopped in the
 * file's teardown gets 3 s to exit. test/support/services.ts checks the whole run once more at its end.
 */
import { randomBytes } from 'node:crypto';
import { afterAll } from 'vitest';
import { provided } from '../../harness/shared.js';
import {
  descendants,
  describeProcs,
  FILE_MARKER,
  isRunnerProcess,
  killAll,
  lingering,
  marked,
  type ProcInfo,
} from './processes.js';

const marker = `${(await provided('hansardRun')) ?? 'norun'}:${randomBytes(6).toString('hex')}`;
process.env[FILE_MARKER] = marker;

afterAll(async () => {
  const left = await lingering(() => leftBehind(marker), 3000);
  if (left.length === 0) return;
  killAll(left);
  throw new Error(
    `leak check: ${left.length} process(es) this test file started outlived it (killed now):\n${describeProcs(left)}`,
  );
}, 10_000);

/** This file's processes still alive (marked or children of this worker), vitest's and esbuild's aside. */
function leftBehind(mark: string): ProcInfo[] {
  const seen = new Map<number, ProcInfo>();
  for (const p of [...marked(FILE_MARKER, (v) => v === mark), ...descendants(process.pid)]) {
    if (p.pid !== process.pid && !isRunnerProcess(p)) seen.set(p.pid, p);
  }
  return [...seen.values()];
}
