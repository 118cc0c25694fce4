/**
 * Parallel tool calls run their hooks as concurrent processes (issue 11): 24 real `bin/hansard hook
 * claude-code` processes at once on one Claude session, each a PreToolUse then its PostToolUse. No line
 * welded to another, no seq reused, no event lost, every result paired with its own action, verify clean.
 */
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { readHookFailures } from '../../../lib/client/capture/state-dir.js';
import { tmpDirs } from '../../support/tmp.js';
import { fixture, pool, runHook, spoolSessions, useBuiltCli, verifyDir } from './helpers.js';

const cli = useBuiltCli('concurrency');
const tmp = tmpDirs('hansard-hook-concurrency-');
const PARALLEL = 24;

describe('24 concurrent hook processes on one session', () => {
  it('writes every event once, in whole lines with seq 1…n, each result naming its own action; verify clean', async () => {
    const state = tmp.make();
    const env = { HANSARD_STATE_DIR: state };
    const base = JSON.parse(fixture('real-client/03-PreToolUse.hello-from-tool.json')) as Record<
      string,
      unknown
    >;
    const post = JSON.parse(fixture('real-client/06-PostToolUse.hello-from-tool.json')) as Record<
      string,
      unknown
    >;
    expect(
      (await runHook(cli.bin, ['claude-code'], fixture('real-client/02-UserPromptSubmit.json'), env)).code,
    ).toBe(0);
    const calls = Array.from({ length: PARALLEL }, (_, i) => `toolu_par${String(i).padStart(3, '0')}`);
    const runs = await pool(calls, PARALLEL, async (id, i) => {
      const input = { command: `echo call-${i}`, description: `call ${i}` };
      const a = await runHook(
        cli.bin,
        ['claude-code'],
        JSON.stringify({ ...base, tool_use_id: id, tool_input: input }),
        env,
      );
      const b = await runHook(
        cli.bin,
        ['claude-code'],
        JSON.stringify({
          ...post,
          tool_use_id: id,
          tool_input: input,
          tool_response: { stdout: `call-${i}`, stderr: '', interrupted: false },
        }),
        env,
      );
      return [a, b];
    });
    // A hook the machine starves past its hard deadline (4.5 s after its start: 48 Node processes on two
    // cores, beside another suite) is killed by its watchdog, as the agent would kill it at 5 s: the
    // agent sees an empty answer, and the record must stay whole (the checks below). Each such kill is
    // recorded by the watchdog's rescuer (best effort, after the kill); every other hook exits 0.
    for (const r of runs.flat()) {
      expect(r).toMatchObject({ stdout: '', stderr: '' });
      if (r.signal !== 'SIGKILL') expect(r).toMatchObject({ code: 0, signal: null });
    }
    // On a machine too busy to start 24 processes within the 3.5 s budget, a hook may answer empty and
    // defer its payload to the session's inbox: the next hook writes it. The Stop below is that hook.
    // One that answered (its events written) but was still exiting at its hard deadline (4.5 s after its
    // start) is recorded as killed by the watchdog: its events are in the segment all the same, as the
    // checks below find.
    const failures = readHookFailures(state);
    for (const f of failures) {
      expect(f.reason).toBe('timeout');
      expect(f.message).toMatch(
        /the event was deferred|the events were written|^answered, but the process had not ended by its hard deadline/,
      );
    }
    const deferred = failures.filter((f) => f.message.includes('deferred'));
    expect((await runHook(cli.bin, ['claude-code'], fixture('real-client/07-Stop.json'), env)).code).toBe(0);
    expect(
      (await runHook(cli.bin, ['claude-code'], fixture('real-client/08-SessionEnd.json'), env)).code,
    ).toBe(0);

    const dirs = spoolSessions(state);
    expect(dirs).toHaveLength(1);
    const segment = readFileSync(join(dirs[0]!, readSegmentName(dirs[0]!)), 'utf8');
    expect(segment.endsWith('\n')).toBe(true);
    const lines = segment.slice(0, -1).split('\n');
    // Every line parses alone: none welded to another.
    const evs = lines.map((l) => JSON.parse(l) as Record<string, unknown>);
    expect(evs.map((e) => e.seq)).toEqual(evs.map((_, i) => i + 1));
    expect(new Set(evs.map((e) => e.id)).size).toBe(evs.length);
    const actions = evs.filter((e) => e.type === 'agent.action');
    const results = evs.filter((e) => e.type === 'agent.action_result');
    expect(actions).toHaveLength(PARALLEL);
    expect(results).toHaveLength(PARALLEL);
    const actionByCall = new Map(actions.map((a) => [a.call_id, a]));
    expect([...actionByCall.keys()].sort()).toEqual(calls);
    for (const r of results) {
      const a = actions.find((x) => x.id === r.action_id);
      expect(a, `result ${String(r.id)} names no action`).toBeDefined();
      expect((r.output as { stdout: string }).stdout).toBe(
        (a!.input as { command: string }).command.slice(5),
      );
      expect(r.reconstructed).toBeUndefined();
    }
    expect(evs.at(-2)).toMatchObject({ type: 'turn.end', status: 'completed' });
    expect(evs.at(-1)).toMatchObject({ type: 'writer.end' });
    // Each deferral recorded is an event written later (a record may be missed when the failures file's
    // lock stays busy past its short wait: that log is best effort, the events are not).
    expect(evs.filter((e) => typeof e.hook_deferred === 'string').length).toBeGreaterThanOrEqual(
      deferred.length,
    );
    expect(await verifyDir(dirs[0]!)).toEqual([]);
  }, 120_000);
});

function readSegmentName(dir: string): string {
  const segs = readdirSync(dir).filter((n) => n.endsWith('.jsonl'));
  expect(segs).toHaveLength(1);
  return segs[0]!;
}
