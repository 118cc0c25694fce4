/**
 * Attack on the capture hook's reading of Claude Code's transcript for token usage (issue 27 item 1: "The
 * hook may read usage from `transcript_path` only when it is a regular file under the Claude Code projects
 * folder, from the offset it last read, within its budget"; docs/capture.md "Token usage"), through the
 * real `bin/hansard hook claude-code` process: a `transcript_path` that is `/dev/zero`, a link in the
 * projects folder to a file outside it or to `/dev/zero`, a path with `..` that leaves the folder, a
 * transcript replaced between hook calls (by a new file, by a link), and a transcript with one 50 MB line.
 * Each hook must answer (exit 0, nothing on stderr) inside its budget and record no usage it should not;
 * what it records is folded by `hansard usage DIR --json`, each message once. The records are the real
 * ones of test/fixtures/real/ccl-representative_messages.jsonl, as test/client/capture/hook-usage.test.ts
 * uses them.
 */
import { spawnSync } from 'node:child_process';
import { appendFileSync, mkdirSync, renameSync, symlinkSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { HOOK_BUDGET_MS } from '../../lib/client/capture/hook.js';
import { readHookFailures } from '../../lib/client/capture/state-dir.js';
import { USAGE_LINE_MAX_BYTES } from '../../lib/client/capture/transcript-usage.js';
import {
  fixture,
  hookEnv,
  runHook,
  sessionEvents,
  spoolSessions,
  useBuiltCli,
} from '../client/capture/helpers.js';
import { tmpDirs } from '../support/tmp.js';

const cli = useBuiltCli('usage-attack');
const tmp = tmpDirs('hansard-usage-attack-');

type Ev = Record<string, unknown>;
const REAL = fixture('real/ccl-representative_messages.jsonl')
  .split('\n')
  .filter(Boolean)
  .map((l) => JSON.parse(l) as Ev);
const ASSISTANT = REAL.find((r) => r.type === 'assistant')!;

/** An assistant record shaped as the fixture's, with message `id`, output count `out` and `text`. */
function assistant(id: string, out: number, text: string): string {
  const m = ASSISTANT.message as Ev;
  return `${JSON.stringify({
    ...ASSISTANT,
    uuid: `${id}-${out}`,
    requestId: `req_${id}`,
    message: {
      ...m,
      id,
      content: [{ type: 'text', text }],
      usage: { ...(m.usage as Ev), output_tokens: out },
    },
  })}\n`;
}

function setup() {
  const root = tmp.make();
  const config = join(root, 'claude');
  const project = join(config, 'projects', '-home-user-proj');
  mkdirSync(project, { recursive: true });
  const outside = join(root, 'outside');
  mkdirSync(outside);
  const state = join(root, 'state');
  return {
    root,
    state,
    config,
    project,
    outside,
    transcript: join(project, 'sess-attack.jsonl'),
    env: { HANSARD_STATE_DIR: state, CLAUDE_CONFIG_DIR: config },
  };
}

/** One hook call; it must answer 0, silently, inside the budget (the process's start included). */
async function hook(env: Record<string, string>, transcript: string, p: Ev): Promise<number> {
  const r = await runHook(
    cli.bin,
    ['claude-code'],
    JSON.stringify({ session_id: 'sess-attack', transcript_path: transcript, cwd: '/home/user/proj', ...p }),
    env,
  );
  expect(r.code, String(p.hook_event_name)).toBe(0);
  expect(r.signal).toBeNull();
  expect(r.stderr).toBe('');
  // the agent kills a hook at 5 s; the budget is 3.5 s from the process's start
  expect(r.ms, String(p.hook_event_name)).toBeLessThan(HOOK_BUDGET_MS + 1_000);
  return r.ms;
}

const usageIds = (state: string) =>
  sessionEvents(spoolSessions(state)[0]!)
    .filter((e) => e.import_kind === 'token_usage')
    .map((e) => e.message_id as string);

/** A turn's worth of hooks around whatever the transcript holds: prompt, a tool call, Stop. */
async function turn(env: Record<string, string>, transcript: string, n: number): Promise<void> {
  await hook(env, transcript, { hook_event_name: 'UserPromptSubmit', prompt: `go ${n}` });
  const call = { tool_name: 'Bash', tool_input: { command: 'true' }, tool_use_id: `toolu_${n}` };
  await hook(env, transcript, { hook_event_name: 'PreToolUse', ...call });
  await hook(env, transcript, {
    hook_event_name: 'PostToolUse',
    ...call,
    tool_response: { stdout: '', stderr: '', interrupted: false },
  });
  await hook(env, transcript, { hook_event_name: 'Stop', last_assistant_message: 'nothing to wait for' });
}

describe('paths the hook must not read', () => {
  const refused = async (
    make: (s: ReturnType<typeof setup>) => string,
  ): Promise<ReturnType<typeof setup>> => {
    const s = setup();
    const path = make(s);
    await hook(s.env, path, { hook_event_name: 'SessionStart', source: 'startup' });
    await turn(s.env, path, 1);
    await turn(s.env, path, 2);
    expect(usageIds(s.state)).toEqual([]);
    const failures = readHookFailures(s.state).filter((f) => f.reason === 'transcript_refused');
    expect(failures).toHaveLength(1);
    expect(failures[0]!.message).not.toContain(path);
    return s;
  };

  it('/dev/zero itself', async () => {
    await refused(() => '/dev/zero');
  });

  it('a link in the projects folder to /dev/zero', async () => {
    await refused((s) => {
      const link = join(s.project, 'zero.jsonl');
      symlinkSync('/dev/zero', link);
      return link;
    });
  });

  it('a link in the projects folder to a transcript-shaped file outside it', async () => {
    await refused((s) => {
      const out = join(s.outside, 'elsewhere.jsonl');
      writeFileSync(out, assistant('msg_outside', 7, 'from outside'));
      const link = join(s.project, 'sess-attack.jsonl');
      symlinkSync(out, link);
      return link;
    });
  });

  it('a path that starts in the projects folder and leaves it with ..', async () => {
    await refused((s) => {
      writeFileSync(join(s.outside, 't.jsonl'), assistant('msg_dotdot', 7, 'via dot dot'));
      return join(s.project, '..', '..', '..', 'outside', 't.jsonl');
    });
  });

  it('…while a path with .. that stays in the projects folder is read as the file it names', async () => {
    const s = setup();
    writeFileSync(s.transcript, assistant('msg_inside', 7, 'inside'));
    const path = join(s.project, '..', '-home-user-proj', 'sess-attack.jsonl');
    await hook(s.env, path, { hook_event_name: 'SessionStart', source: 'startup' });
    await turn(s.env, path, 1);
    expect(usageIds(s.state)).toEqual(['msg_inside']);
  });
});

describe('a transcript replaced between hook calls', () => {
  const localUsage = (state: string) => {
    const r = spawnSync(process.execPath, [cli.bin, 'usage', spoolSessions(state)[0]!, '--json'], {
      env: hookEnv({}),
      encoding: 'utf8',
    });
    expect(r.status, r.stderr).toBe(0);
    return JSON.parse(r.stdout).total as { output_tokens: number; input_tokens: number; records: number };
  };

  it('by a new file holding the same messages and one more: read from 0, each message counted once', async () => {
    const s = setup();
    await hook(s.env, s.transcript, { hook_event_name: 'SessionStart', source: 'startup' });
    const first = Array.from({ length: 10 }, (_, i) => assistant(`msg_r${i}`, 10 + i, `answer ${i}`)).join(
      '',
    );
    writeFileSync(s.transcript, first);
    await turn(s.env, s.transcript, 1);
    const before = localUsage(s.state);
    expect(before.records).toBe(10);
    // an atomic save: a new file (new inode) renamed over the transcript
    const tmpFile = join(s.project, '.sess-attack.jsonl.tmp');
    writeFileSync(tmpFile, first + assistant('msg_new', 5, 'one more'));
    renameSync(tmpFile, s.transcript);
    await turn(s.env, s.transcript, 2);
    const after = localUsage(s.state);
    expect(after.records).toBe(11);
    expect(after.output_tokens).toBe(before.output_tokens + 5);
  });

  // DEFECT: the same, with 40 messages. A new file at the path (new inode) is read from 0
  // (transcript-usage.ts, as documented), and its messages are written as notes again; the fold replaces
  // a repeated message id only among the writer's last 32 (RECENT_MAX), so with more than 32 messages
  // before the replacement every one is counted twice (81 records for 41 messages; the test above, with
  // 10, holds only because they fit the window). Issue 27 item 1: a message is counted once. What should
  // happen: a replaced transcript does not count again what was counted (e.g. the hook skips message ids
  // it already wrote from that path, or the prefix it read is recognised), so the total stays 41 records.
  it.fails('by a new file holding the same 40 messages and one more: each message still counted once', async () => {
    const s = setup();
    await hook(s.env, s.transcript, { hook_event_name: 'SessionStart', source: 'startup' });
    const first = Array.from({ length: 40 }, (_, i) => assistant(`msg_r${i}`, 10 + i, `answer ${i}`)).join(
      '',
    );
    writeFileSync(s.transcript, first);
    await turn(s.env, s.transcript, 1);
    expect(localUsage(s.state).records).toBe(40);
    const tmpFile = join(s.project, '.sess-attack.jsonl.tmp');
    writeFileSync(tmpFile, first + assistant('msg_new', 5, 'one more'));
    renameSync(tmpFile, s.transcript);
    await turn(s.env, s.transcript, 2);
    expect(localUsage(s.state).records).toBe(41);
  });

  it('by a link to a file outside the projects folder: nothing of it read', async () => {
    const s = setup();
    await hook(s.env, s.transcript, { hook_event_name: 'SessionStart', source: 'startup' });
    writeFileSync(s.transcript, assistant('msg_ok', 3, 'fine'));
    await turn(s.env, s.transcript, 1);
    const out = join(s.outside, 'secret.jsonl');
    writeFileSync(out, assistant('msg_ok', 3, 'fine') + assistant('msg_secret', 9, 'the secret'));
    const link = join(s.project, '.link');
    symlinkSync(out, link);
    renameSync(link, s.transcript);
    await turn(s.env, s.transcript, 2);
    expect(usageIds(s.state)).toEqual(['msg_ok']);
    const texts = JSON.stringify(sessionEvents(spoolSessions(s.state)[0]!));
    expect(texts).not.toContain('the secret');
  });
});

describe('one 50 MB line', () => {
  it('every hook answers inside its budget, the line is never recorded, the messages around it are, once', async () => {
    const s = setup();
    await hook(s.env, s.transcript, { hook_event_name: 'SessionStart', source: 'startup' });
    const size = 50 * 1024 * 1024;
    expect(size).toBeGreaterThan(USAGE_LINE_MAX_BYTES);
    writeFileSync(s.transcript, assistant('msg_before', 4, 'before'));
    // an assistant record with usage whose text is 50 MB: past the line limit, skipped
    appendFileSync(s.transcript, assistant('msg_huge', 999_999, 'y'.repeat(size)));
    appendFileSync(s.transcript, assistant('msg_after', 6, 'after'));
    const times: number[] = [];
    times.push(await hook(s.env, s.transcript, { hook_event_name: 'UserPromptSubmit', prompt: 'go' }));
    // tool calls until the reader is past the line (it reads 2 MiB of it per hook once it skips it)
    let n = 0;
    while (!usageIds(s.state).includes('msg_after')) {
      expect(++n, 'hooks spent before msg_after was read').toBeLessThan(40);
      const call = { tool_name: 'Bash', tool_input: { command: 'true' }, tool_use_id: `toolu_big${n}` };
      times.push(
        await hook(s.env, s.transcript, {
          hook_event_name: 'PostToolUse',
          ...call,
          tool_response: { stdout: '', stderr: '', interrupted: false },
        }),
      );
    }
    times.push(await hook(s.env, s.transcript, { hook_event_name: 'Stop', last_assistant_message: 'after' }));
    expect(usageIds(s.state)).toEqual(['msg_before', 'msg_after']);
    expect(Math.max(...times)).toBeLessThan(HOOK_BUDGET_MS + 1_000);
    // it takes ~19 hooks (the rest of the line read 2 MiB a hook): see the next test
    expect(n).toBeGreaterThan(0);
  }, 120_000);

  // DEFECT: docs/capture.md says a line longer than 16 MiB "is skipped (its usage is lost)": that line's.
  // But the reader passes the rest of a skipped line at most 2 MiB per hook invocation (readFrom's
  // `midLine` branch spends the byte budget on bytes it throws away), so a 50 MB line takes ~19 further
  // hooks to pass (the test above), and a session that ends sooner (prompt, Stop, SessionEnd: the usual
  // end of a one-question session) never records the messages AFTER the line either: msg_after's usage is
  // lost though its line is tiny. What should happen: passing the rest of a skipped line only looks for
  // its newline, which costs no byte budget worth counting (or is bounded by the time budget alone), so
  // the next hook (here the Stop, at the latest SessionEnd) reads msg_after.
  it.fails('a session that ends right after the 50 MB line still records the message after it', async () => {
    const s = setup();
    await hook(s.env, s.transcript, { hook_event_name: 'SessionStart', source: 'startup' });
    writeFileSync(s.transcript, assistant('msg_before', 4, 'before'));
    appendFileSync(s.transcript, assistant('msg_huge', 999_999, 'y'.repeat(50 * 1024 * 1024)));
    appendFileSync(s.transcript, assistant('msg_after', 6, 'after'));
    await hook(s.env, s.transcript, { hook_event_name: 'UserPromptSubmit', prompt: 'go' });
    await hook(s.env, s.transcript, { hook_event_name: 'Stop', last_assistant_message: 'after' });
    await hook(s.env, s.transcript, { hook_event_name: 'SessionEnd', reason: 'exit' });
    expect(usageIds(s.state)).toEqual(['msg_before', 'msg_after']);
  }, 60_000);
});
