/**
 * A hook is never in the agent's way (issue 11): the real `bin/hansard hook …` process exits 0 and prints
 * nothing but its JSON answer, whatever happens (malformed input, an unknown event, an unwritable state
 * directory, an unreachable server, a lock it cannot get), answers within its budget (3.5 s), and records
 * what went wrong in hook-failures.json without any payload content.
 */
import { mkdirSync, readdirSync, rmSync, statSync, utimesSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { mappingStatePath, readHookFailures } from '../../../lib/client/capture/state-dir.js';
import { tmpDirs } from '../../support/tmp.js';
import { fixture, runHook, sessionEvents, spoolSessions, useBuiltCli } from './helpers.js';

const cli = useBuiltCli('never-blocks');
const tmp = tmpDirs('hansard-hook-never-');
const SECRET_PROMPT = 'the-prompt-text-that-must-not-leak';

describe('exit 0, stdout clean', () => {
  it('malformed stdin (not JSON, empty, JSON without session_id): exit 0, no output, bad_input recorded', async () => {
    const state = tmp.make();
    for (const input of [`{"prompt":"${SECRET_PROMPT}"`, '', '[]', `{"prompt":"${SECRET_PROMPT}"}`]) {
      const r = await runHook(cli.bin, ['claude-code'], input, { HANSARD_STATE_DIR: state });
      expect(r).toMatchObject({ code: 0, stdout: '' });
    }
    const failures = readHookFailures(state);
    expect(failures.map((f) => [f.hook, f.reason])).toEqual(
      Array(4).fill(['claude-code:unknown', 'bad_input']),
    );
    expect(JSON.stringify(failures)).not.toContain(SECRET_PROMPT);
    for (const f of failures) expect(Date.parse(f.at)).toBeGreaterThan(0);
    const codex = await runHook(cli.bin, ['codex', 'not json'], '', { HANSARD_STATE_DIR: state });
    expect(codex).toMatchObject({ code: 0, stdout: '' });
    expect(readHookFailures(state).at(-1)).toMatchObject({ hook: 'codex:unknown', reason: 'bad_input' });
  });

  it('an unknown event with unknown fields: exit 0, kept as a marked note, fields kept', async () => {
    const state = tmp.make();
    const payload = { session_id: 'abc', hook_event_name: 'FutureEvent', cwd: '/p', novel: { x: 1 } };
    const r = await runHook(cli.bin, ['claude-code'], JSON.stringify(payload), { HANSARD_STATE_DIR: state });
    expect(r).toMatchObject({ code: 0, stdout: '' });
    const evs = sessionEvents(spoolSessions(state)[0]!);
    expect(evs.at(-1)).toMatchObject({
      type: 'note',
      author: 'hansard-hook',
      import_kind: 'unknown_record',
      hook_event: 'FutureEvent',
      novel: { x: 1 },
    });
    expect(JSON.parse(evs.at(-1)!.text as string)).toEqual(payload);
  });

  it('an unwritable state directory (a file where the folder should be): exit 0, SessionStart says capture is off', async () => {
    const dir = tmp.make();
    writeFileSync(join(dir, 'file'), 'x');
    const state = join(dir, 'file', 'state');
    const start = await runHook(cli.bin, ['claude-code'], fixture('real/hook-SessionStart.json'), {
      HANSARD_STATE_DIR: state,
    });
    expect(start.code).toBe(0);
    expect(start.stderr).toBe('');
    const out = JSON.parse(start.stdout) as { hookSpecificOutput: { additionalContext: string } };
    expect(out.hookSpecificOutput.additionalContext).toContain('hansard is not recording this session');
    expect(out.hookSpecificOutput.additionalContext).toContain('is not writable');
    const pre = await runHook(cli.bin, ['claude-code'], fixture('real/hook-PreToolUse.Bash.json'), {
      HANSARD_STATE_DIR: state,
    });
    expect(pre).toMatchObject({ code: 0, stdout: '', stderr: '' });
  });

  it('an unreachable server: exit 0, events kept in the spool, SessionStart says there is no token, failure recorded', async () => {
    const state = tmp.make();
    const env = {
      HANSARD_STATE_DIR: state,
      HANSARD_URL: 'http://127.0.0.1:9',
      HANSARD_TOKEN: 'hns_unreachable',
    };
    const start = await runHook(cli.bin, ['claude-code'], fixture('real/hook-SessionStart.json'), env);
    expect(start.code).toBe(0);
    const ctx = (JSON.parse(start.stdout) as { hookSpecificOutput: { additionalContext: string } })
      .hookSpecificOutput.additionalContext;
    expect(ctx).toContain('No session token: the server at http://127.0.0.1:9 is unreachable');
    expect(ctx).toContain('shipped to http://127.0.0.1:9');
    const prompt = await runHook(cli.bin, ['claude-code'], fixture('real/hook-UserPromptSubmit.json'), env);
    expect(prompt).toMatchObject({ code: 0, stdout: '' });
    expect(sessionEvents(spoolSessions(state)[0]!).map((e) => e.type)).toEqual([
      'writer.start',
      'message',
      'turn.start',
    ]);
    expect(readHookFailures(state)).toContainEqual(
      expect.objectContaining({ hook: 'claude-code:SessionStart', reason: 'server_unreachable' }),
    );
  });
});

describe('the budget', () => {
  /** Holds the session's lock as a live hook would (its mtime kept fresh) until `stop` is called. */
  function holdLock(state: string, sessionId: string): { stop(): void } {
    const lock = mappingStatePath(state, 'claude-code', sessionId).replace(/\.json$/, '.lock');
    mkdirSync(lock, { recursive: true });
    const timer = setInterval(() => {
      const now = new Date();
      utimesSync(lock, now, now);
    }, 200);
    return { stop: () => clearInterval(timer) };
  }

  it('past HANSARD_HOOK_BUDGET_MS the hook answers empty, exits 0 and records a timeout without content', async () => {
    const state = tmp.make();
    const held = holdLock(state, 'test-session-id');
    try {
      const r = await runHook(cli.bin, ['claude-code'], fixture('real/hook-UserPromptSubmit.json'), {
        HANSARD_STATE_DIR: state,
        // Long enough for a loaded machine to load the hook and parse its payload before the deadline
        // (past it, the watchdog ends a hook that has not: hook-watchdog.test.ts).
        HANSARD_HOOK_BUDGET_MS: '2000',
      });
      expect(r).toMatchObject({ code: 0, stdout: '', stderr: '' });
      expect(r.ms).toBeGreaterThan(1_950);
      expect(r.ms).toBeLessThan(4_500);
      const f = readHookFailures(state);
      expect(f).toEqual([
        expect.objectContaining({ hook: 'claude-code:UserPromptSubmit', reason: 'timeout' }),
      ]);
      expect(JSON.stringify(f)).not.toContain('What is 2+2?');
      expect(f[0]!.message).toContain('deferred');
    } finally {
      held.stop();
    }
    // The lock's holder goes away: the session's next hook writes the deferred prompt first.
    rmSync(mappingStatePath(state, 'claude-code', 'test-session-id').replace(/\.json$/, '.lock'), {
      recursive: true,
    });
    const stop = await runHook(cli.bin, ['claude-code'], fixture('real/hook-Stop.json'), {
      HANSARD_STATE_DIR: state,
    });
    expect(stop.code).toBe(0);
    const evs = sessionEvents(spoolSessions(state)[0]!);
    expect(evs.map((e) => e.type)).toEqual(['writer.start', 'message', 'turn.start', 'turn.end']);
    expect(evs[1]).toMatchObject({ text: 'What is 2+2?', hook_deferred: expect.any(String) });
  });

  it('the default budget is 3.5 s: a SessionStart blocked on its lock answers empty within it', async () => {
    const state = tmp.make();
    const held = holdLock(state, 'test-session-id');
    try {
      const r = await runHook(cli.bin, ['claude-code'], fixture('real/hook-SessionStart.json'), {
        HANSARD_STATE_DIR: state,
      });
      expect(r).toMatchObject({ code: 0, stdout: '' });
      expect(r.ms).toBeGreaterThan(3_400);
      // The timer counts from the process start; the margin is for spawning it on a busy machine.
      expect(r.ms).toBeLessThan(4_500);
      expect(readHookFailures(state)[0]).toMatchObject({
        reason: 'timeout',
        hook: 'claude-code:SessionStart',
      });
    } finally {
      held.stop();
    }
  }, 15_000);
});

describe('the code cache (dist/hook.cjs)', () => {
  it('is written at the first run, reused, and a corrupt one is replaced while the hook still works', async () => {
    const state = tmp.make();
    const env = { HANSARD_STATE_DIR: state };
    const cacheFiles = () => readdirSync(join(state, 'cache')).filter((f) => f.endsWith('.v8'));
    expect((await runHook(cli.bin, ['claude-code'], fixture('real/hook-SessionStart.json'), env)).code).toBe(
      0,
    );
    expect(cacheFiles()).toHaveLength(1);
    const file = join(state, 'cache', cacheFiles()[0]!);
    const written = statSync(file).mtimeMs;
    await runHook(cli.bin, ['claude-code'], fixture('real/hook-UserPromptSubmit.json'), env);
    expect(statSync(file).mtimeMs).toBe(written);
    writeFileSync(file, 'not a V8 code cache');
    const r = await runHook(cli.bin, ['claude-code'], fixture('real/hook-Stop.json'), env);
    expect(r).toMatchObject({ code: 0, stdout: '', stderr: '' });
    expect(statSync(file).size).toBeGreaterThan(1000);
    expect(sessionEvents(spoolSessions(state)[0]!).map((e) => e.type)).toEqual([
      'writer.start',
      'message',
      'turn.start',
      'turn.end',
    ]);
  });
});
