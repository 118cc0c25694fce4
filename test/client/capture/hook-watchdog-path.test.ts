/**
 * The hook's watchdog whatever PATH its agent runs it with (issue 25 item 1). `hansard integrations sync`
 * installs hook commands that need no PATH (absolute node and bin/hansard), and an agent may run them
 * with an empty one. The supervisor (lib/client/capture/hook-watchdog.ts) is a shell script that runs
 * `cat` and `sleep`: with an empty PATH neither was found, so there was no hard deadline at all, and
 * `cat` ended at once, so every hook slower than the rescuer's start was recorded as killed ("ended
 * before it answered … no payload was read"), and `hansard doctor` failed on a loaded machine (the
 * integrations-e2e test in a full run). Through the real `bin/hansard hook …` process.
 */
import { execFileSync } from 'node:child_process';
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { readHookFailures } from '../../../lib/client/capture/state-dir.js';
import { tmpDirs } from '../../support/tmp.js';
import { fixture, processesNaming, ROOT, runHook, useBuiltCli, WATCHDOG_TIMES } from './helpers.js';

const cli = useBuiltCli('watchdog-path');
const tmp = tmpDirs('hansard-hook-watchdog-path-');
const linux = existsSync('/proc/self/status');
const { BUDGET, GRACE, SLACK, KILL_AFTER } = WATCHDOG_TIMES;

/** The environment of a hook slowed or blocked by block-preload.cjs, run with an empty PATH. */
function noPathEnv(state: string, how: string, budget: number): Record<string, string> {
  const never = join(tmp.make(), 'never-written');
  execFileSync('mkfifo', [never]);
  return {
    PATH: '',
    HANSARD_STATE_DIR: state,
    HANSARD_HOOK_BUDGET_MS: String(budget),
    NODE_OPTIONS: `--require ${join(ROOT, 'test/client/capture/block-preload.cjs')}`,
    TEST_HOOK_BLOCK_AT: 'lock',
    TEST_HOOK_BLOCK_HOW: how,
    TEST_HOOK_BLOCK_FIFO: never,
  };
}

describe.skipIf(!linux)('the watchdog with an empty PATH', () => {
  it(
    'a hook slow for 1.5 s (within its budget) answers, exits 0 and records no failure',
    async () => {
      const state = tmp.make();
      const r = await runHook(
        cli.bin,
        ['claude-code'],
        fixture('real/hook-UserPromptSubmit.json'),
        noPathEnv(state, 'slow:1500', 10_000),
        KILL_AFTER,
      );
      expect(r).toMatchObject({ code: 0, signal: null, stdout: '' });
      // A rescuer started by mistake would have had the 1.5 s to record; give it a moment more.
      for (let i = 0; i < 40 && processesNaming(state).length > 0; i++)
        await new Promise((done) => setTimeout(done, 50));
      expect(processesNaming(state)).toEqual([]);
      expect(readHookFailures(state)).toEqual([]);
    },
    KILL_AFTER + 5_000,
  );

  it(
    'a hook blocked for ever in a FIFO read is killed at its hard deadline, the timeout recorded',
    async () => {
      const state = tmp.make();
      const r = await runHook(
        cli.bin,
        ['claude-code'],
        fixture('real/hook-UserPromptSubmit.json'),
        noPathEnv(state, 'fifo', BUDGET),
        KILL_AFTER,
      );
      expect(r).toMatchObject({ code: null, signal: 'SIGKILL', stdout: '' });
      expect(r.ms).toBeLessThan(BUDGET + GRACE + SLACK);
      let failures = readHookFailures(state);
      for (let i = 0; i < 200 && failures.length === 0; i++) {
        await new Promise((done) => setTimeout(done, 50));
        failures = readHookFailures(state);
      }
      expect(failures).toEqual([
        expect.objectContaining({ hook: 'claude-code:UserPromptSubmit', reason: 'timeout' }),
      ]);
      expect(failures[0]!.message).toContain('killed by the watchdog');
    },
    KILL_AFTER + 5_000,
  );
});
