/**
 * A hook answers within its budget whatever its work does (issue 25 item 1, seed 000: "A hook stops after
 * 3.5 seconds … On failure, it returns an empty result so the agent continues"). Through the real
 * `bin/hansard hook …` process: a state directory under /proc (where mkdir answers ENOENT: Node's
 * recursive mkdir loops for ever), a project whose `.git/HEAD` is a FIFO or a link to /dev/zero, and a
 * hook whose own thread is made to block for ever (a preload, `block-preload.cjs`: a JavaScript loop, a
 * read of a FIFO, a native loop), which only its supervisor process can end (lib/client/capture/hook-watchdog.ts).
 */
import { execFileSync } from 'node:child_process';
import { existsSync, mkdirSync, readdirSync, symlinkSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { readHookFailures } from '../../../lib/client/capture/state-dir.js';
import { tmpDirs } from '../../support/tmp.js';
import {
  fixture,
  processesNaming,
  ROOT,
  runHook,
  sessionEvents,
  spoolSessions,
  useBuiltCli,
  WATCHDOG_TIMES,
} from './helpers.js';

const cli = useBuiltCli('watchdog');
const tmp = tmpDirs('hansard-hook-watchdog-');
const linux = existsSync('/proc/self/status');
const { BUDGET, GRACE, SLACK, KILL_AFTER } = WATCHDOG_TIMES;

/** A FIFO nobody writes. */
function fifo(path: string): string {
  execFileSync('mkfifo', [path]);
  return path;
}

/** Waits for the rescuer (a process the supervisor becomes after the kill) to record; 10 s at most. */
async function failuresOf(state: string): Promise<ReturnType<typeof readHookFailures>> {
  for (let i = 0; i < 200 && readHookFailures(state).length === 0; i++)
    await new Promise((r) => setTimeout(r, 50));
  return readHookFailures(state);
}

describe.skipIf(!linux)('the two examples of issue 25', () => {
  it(
    'HANSARD_STATE_DIR under /proc (mkdir answers ENOENT): every hook answers at once and exits 0',
    async () => {
      const env = {
        HANSARD_STATE_DIR: `/proc/hansard-test-${process.pid}/state`,
        HANSARD_HOOK_BUDGET_MS: '3000',
      };
      const start = await runHook(
        cli.bin,
        ['claude-code'],
        fixture('real/hook-SessionStart.json'),
        env,
        KILL_AFTER,
      );
      expect(start.code).toBe(0);
      expect(start.ms).toBeLessThan(3_000 + SLACK);
      const ctx = (JSON.parse(start.stdout) as { hookSpecificOutput: { additionalContext: string } })
        .hookSpecificOutput.additionalContext;
      expect(ctx).toContain('hansard is not recording this session');
      const prompt = await runHook(
        cli.bin,
        ['claude-code'],
        fixture('real/hook-UserPromptSubmit.json'),
        env,
        KILL_AFTER,
      );
      expect(prompt).toMatchObject({ code: 0, stdout: '', stderr: '' });
      const codex = await runHook(
        cli.bin,
        [
          'codex',
          JSON.stringify({ type: 'agent-turn-complete', 'thread-id': 't1', 'last-assistant-message': 'x' }),
        ],
        '',
        env,
        KILL_AFTER,
      );
      expect(codex).toMatchObject({ code: 0, stdout: '', stderr: '' });
    },
    3 * KILL_AFTER,
  );

  for (const kind of ['a FIFO', 'a symlink to /dev/zero'] as const) {
    it(
      `.git/HEAD is ${kind}: SessionStart answers at once with the project, without a branch`,
      async () => {
        const project = tmp.make();
        mkdirSync(join(project, '.git'));
        if (kind === 'a FIFO') fifo(join(project, '.git', 'HEAD'));
        else symlinkSync('/dev/zero', join(project, '.git', 'HEAD'));
        const state = tmp.make();
        const payload = { ...JSON.parse(fixture('real/hook-SessionStart.json')), cwd: project };
        const r = await runHook(
          cli.bin,
          ['claude-code'],
          JSON.stringify(payload),
          { HANSARD_STATE_DIR: state },
          KILL_AFTER,
        );
        expect(r.code).toBe(0);
        expect(r.ms).toBeLessThan(3_500);
        const ctx = (JSON.parse(r.stdout) as { hookSpecificOutput: { additionalContext: string } })
          .hookSpecificOutput.additionalContext;
        expect(ctx).toContain('hansard is recording this session as s_');
        expect(ctx).toContain(`Project: ${project.split('/').at(-1)} (${project}).`);
        expect(ctx).not.toContain('git branch');
        expect(readHookFailures(state)).toEqual([]);
      },
      KILL_AFTER + 5_000,
    );
  }
});

describe.skipIf(!linux)('a hook whose own thread blocks for ever: its supervisor ends it', () => {
  const blockEnv = (state: string, at: 'lock' | 'save', how: string) => ({
    HANSARD_STATE_DIR: state,
    HANSARD_HOOK_BUDGET_MS: String(BUDGET),
    NODE_OPTIONS: `--require ${join(ROOT, 'test/client/capture/block-preload.cjs')}`,
    TEST_HOOK_BLOCK_AT: at,
    TEST_HOOK_BLOCK_HOW: how,
    TEST_HOOK_BLOCK_FIFO: fifo(join(tmp.make(), 'never-written')),
  });

  for (const how of ['spin', 'fifo', 'mkdir'] as const) {
    const what = {
      spin: 'a JavaScript loop',
      fifo: 'a read of a FIFO',
      mkdir: "Node's recursive mkdir under /proc",
    }[how];
    it(
      `blocked in ${what} before writing: killed at the deadline with an empty answer, the event deferred and written once by the next hook`,
      async () => {
        const state = tmp.make();
        const r = await runHook(
          cli.bin,
          ['claude-code'],
          fixture('real/hook-UserPromptSubmit.json'),
          blockEnv(state, 'lock', how),
          KILL_AFTER,
        );
        expect(r).toMatchObject({ code: null, signal: 'SIGKILL', stdout: '' });
        expect(r.ms).toBeGreaterThan(BUDGET + GRACE);
        // Killed at its hard deadline, budget + grace after its start, whatever it is doing.
        expect(r.ms).toBeLessThan(BUDGET + GRACE + SLACK);
        const failures = await failuresOf(state);
        expect(failures).toEqual([
          expect.objectContaining({ hook: 'claude-code:UserPromptSubmit', reason: 'timeout' }),
        ]);
        expect(failures[0]!.message).toContain('killed by the watchdog');
        expect(failures[0]!.message).toContain("deferred to the session's next hook");
        expect(JSON.stringify(failures)).not.toContain('What is 2+2?');
        // The session's next hook (nothing blocks it) writes the deferred prompt, then its own event.
        const stop = await runHook(cli.bin, ['claude-code'], fixture('real/hook-Stop.json'), {
          HANSARD_STATE_DIR: state,
        });
        expect(stop).toMatchObject({ code: 0, stdout: '' });
        const evs = sessionEvents(spoolSessions(state)[0]!);
        expect(evs.map((e) => e.type)).toEqual(['writer.start', 'message', 'turn.start', 'turn.end']);
        expect(evs[1]).toMatchObject({ text: 'What is 2+2?', hook_deferred: expect.any(String) });
      },
      2 * KILL_AFTER,
    );
  }

  it(
    'blocked while saving, its events written: killed at the deadline, the event kept once, not deferred',
    async () => {
      const state = tmp.make();
      // The session's first hook, whose events the blocked one finds written: its own timer out of the
      // way (a budget past its hard deadline), so that a loaded machine records no timeout of it.
      const first = await runHook(cli.bin, ['claude-code'], fixture('real/hook-SessionStart.json'), {
        HANSARD_STATE_DIR: state,
        HANSARD_HOOK_BUDGET_MS: '20000',
      });
      expect(first.code).toBe(0);
      const r = await runHook(
        cli.bin,
        ['claude-code'],
        fixture('real/hook-UserPromptSubmit.json'),
        blockEnv(state, 'save', 'fifo'),
        KILL_AFTER,
      );
      expect(r).toMatchObject({ code: null, signal: 'SIGKILL', stdout: '' });
      expect(r.ms).toBeLessThan(BUDGET + GRACE + SLACK);
      const failures = await failuresOf(state);
      expect(failures).toEqual([
        expect.objectContaining({ hook: 'claude-code:UserPromptSubmit', reason: 'timeout' }),
      ]);
      expect(failures[0]!.message).toContain('its events may be partly written');
      const stop = await runHook(cli.bin, ['claude-code'], fixture('real/hook-Stop.json'), {
        HANSARD_STATE_DIR: state,
      });
      expect(stop.code).toBe(0);
      const prompts = sessionEvents(spoolSessions(state)[0]!).filter((e) => e.type === 'message');
      expect(prompts.map((e) => e.text)).toEqual(['What is 2+2?']);
    },
    3 * KILL_AFTER,
  );

  it(
    'a Codex notify blocked for ever: killed at the deadline, the timeout recorded under codex',
    async () => {
      const state = tmp.make();
      const payload = JSON.stringify({
        type: 'agent-turn-complete',
        'thread-id': 't-blocked',
        'last-assistant-message': 'done',
      });
      const r = await runHook(cli.bin, ['codex', payload], '', blockEnv(state, 'lock', 'fifo'), KILL_AFTER);
      expect(r).toMatchObject({ code: null, signal: 'SIGKILL', stdout: '' });
      expect(r.ms).toBeLessThan(BUDGET + GRACE + SLACK);
      expect(await failuresOf(state)).toEqual([
        expect.objectContaining({ hook: 'codex:agent-turn-complete', reason: 'timeout' }),
      ]);
    },
    2 * KILL_AFTER,
  );

  it(
    'a hook only slow (making progress, as one starved of CPU) that reaches its own timer before its hard deadline exits 0 and defers its payload',
    async () => {
      const state = tmp.make();
      // slow until just past its budget (both counted from the process's start): its timer then fires,
      // 900 ms before the hard deadline
      const env = blockEnv(state, 'lock', `slow:${BUDGET + 100}`);
      const r = await runHook(
        cli.bin,
        ['claude-code'],
        fixture('real/hook-UserPromptSubmit.json'),
        env,
        KILL_AFTER,
      );
      expect(r).toMatchObject({ code: 0, signal: null, stdout: '' });
      const failures = readHookFailures(state);
      expect(failures).toEqual([
        expect.objectContaining({ hook: 'claude-code:UserPromptSubmit', reason: 'timeout' }),
      ]);
      expect(failures[0]!.message).toContain("deferred to the session's next hook");
      expect(failures[0]!.message).not.toContain('killed');
    },
    2 * KILL_AFTER,
  );

  it(
    'a hook only slow past its hard deadline is killed there (the agent would kill it at 5 s): its payload deferred and written once by the next hook',
    async () => {
      const state = tmp.make();
      const env = blockEnv(state, 'lock', `slow:${BUDGET + GRACE + 3_000}`);
      const r = await runHook(
        cli.bin,
        ['claude-code'],
        fixture('real/hook-UserPromptSubmit.json'),
        env,
        KILL_AFTER,
      );
      expect(r).toMatchObject({ code: null, signal: 'SIGKILL', stdout: '' });
      expect(r.ms).toBeGreaterThan(BUDGET + GRACE);
      expect(r.ms).toBeLessThan(BUDGET + GRACE + SLACK);
      const failures = await failuresOf(state);
      expect(failures).toEqual([
        expect.objectContaining({ hook: 'claude-code:UserPromptSubmit', reason: 'timeout' }),
      ]);
      expect(failures[0]!.message).toContain('no answer by its hard deadline');
      expect(failures[0]!.message).toContain("deferred to the session's next hook");
      const stop = await runHook(cli.bin, ['claude-code'], fixture('real/hook-Stop.json'), {
        HANSARD_STATE_DIR: state,
      });
      expect(stop.code).toBe(0);
      const prompts = sessionEvents(spoolSessions(state)[0]!).filter((e) => e.type === 'message');
      expect(prompts.map((e) => e.text)).toEqual(['What is 2+2?']);
    },
    2 * KILL_AFTER,
  );

  it(
    'a hook its agent kills while it is blocked (before any deadline) is rescued at once: a 3 MB prompt deferred whole from its spill file, a small one holding {"answered":true} too',
    async () => {
      const base = JSON.parse(fixture('real/hook-UserPromptSubmit.json')) as Record<string, unknown>;
      const cases = [
        { ...base, prompt: `big ${'p'.repeat(3_000_000)}` },
        { ...base, prompt: 'small', tool_response: { answered: true } },
      ];
      for (const payload of cases) {
        const state = tmp.make();
        const r = await runHook(
          cli.bin,
          ['claude-code'],
          JSON.stringify(payload),
          blockEnv(state, 'lock', 'fifo'),
          1_500,
        );
        expect(r).toMatchObject({ signal: 'SIGKILL', stdout: '' });
        const failures = await failuresOf(state);
        expect(failures).toEqual([
          expect.objectContaining({ hook: 'claude-code:UserPromptSubmit', reason: 'timeout' }),
        ]);
        expect(failures[0]!.message).toContain('killed by something other than its watchdog');
        expect(failures[0]!.message).toContain("deferred to the session's next hook");
        expect(readdirSync(join(state, 'claude-code')).filter((f) => f.endsWith('.spill'))).toEqual([]);
        const stop = await runHook(cli.bin, ['claude-code'], fixture('real/hook-Stop.json'), {
          HANSARD_STATE_DIR: state,
        });
        expect(stop.code).toBe(0);
        const [message] = sessionEvents(spoolSessions(state)[0]!).filter((e) => e.type === 'message');
        // (the writer keeps 1 MiB of a field: DESIGN §7)
        expect(String(message!.text).slice(0, 20)).toBe(String(payload.prompt).slice(0, 20));
      }
    },
    3 * KILL_AFTER,
  );

  it(
    'a hook with a 5 MB payload that ends by itself leaves no spill file behind',
    async () => {
      const state = tmp.make();
      const post = {
        ...JSON.parse(fixture('real/hook-PostToolUse.Bash.json')),
        tool_response: { stdout: 'x'.repeat(5_000_000), stderr: '', interrupted: false },
      };
      // Its own timer out of the way (a budget past the hard deadline, which stays at most 4.6 s after
      // the start): on a loaded machine parsing and writing 5 MB can take longer than 3.5 s, and a hook
      // that times out records a failure; this case is about one that ends by itself.
      const r = await runHook(cli.bin, ['claude-code'], JSON.stringify(post), {
        HANSARD_STATE_DIR: state,
        HANSARD_HOOK_BUDGET_MS: '20000',
      });
      expect(r).toMatchObject({ code: 0, stdout: '' });
      expect(readdirSync(join(state, 'claude-code')).filter((f) => f.endsWith('.spill'))).toEqual([]);
      expect(readHookFailures(state)).toEqual([]);
      for (let i = 0; i < 40 && processesNaming(state).length > 0; i++)
        await new Promise((done) => setTimeout(done, 50));
      expect(processesNaming(state)).toEqual([]);
    },
    KILL_AFTER,
  );

  it(
    'an ordinary hook kills its supervisor as it exits, and records nothing',
    async () => {
      const state = tmp.make();
      // A long budget: left alone, the supervisor would sleep 20 s; it must be gone at once.
      const r = await runHook(cli.bin, ['claude-code'], fixture('real/hook-UserPromptSubmit.json'), {
        HANSARD_STATE_DIR: state,
        HANSARD_HOOK_BUDGET_MS: '20000',
      });
      expect(r).toMatchObject({ code: 0, stdout: '', stderr: '' });
      // (A killed process may take a moment to go on a busy machine.)
      for (let i = 0; i < 40 && processesNaming(state).length > 0; i++)
        await new Promise((done) => setTimeout(done, 50));
      expect(processesNaming(state)).toEqual([]);
      expect(readHookFailures(state)).toEqual([]);
    },
    KILL_AFTER,
  );
});
