/**
 * What a verdict rests on (issue 24 items 1 and 2, lib/log/analyse/evidence.ts, docs/status.md "What a verdict
 * rests on"): sessions written with the real library writer, merged back from disk with corrections
 * applied as the server applies them, then asked about. The model's own words (a `declared` writer, or one
 * of unknown provenance) support and refute nothing; another writer's correction of a result makes it
 * contested; commands are matched as a shell reads them; ids only in the forms runtimes mint.
 */
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { type EvidenceCheck, EvidenceIndex } from '../../lib/log/analyse/evidence.js';
import { commandMatch, commandOf, isRuntimeCallId } from '../../lib/log/analyse/evidence-match.js';
import {
  applyCorrections,
  decodeEvent,
  mergeSegments,
  openSession,
  type ProvenanceKind,
  type SessionWriter,
  sessionDirSources,
} from '../../lib/log/index.js';

const T0 = Date.UTC(2026, 5, 1) * 1000;
const at = (s: number) => T0 + s * 1_000_000;
const REPORT = at(100);

/** A new session's first writer, of `provenance`. */
function session(provenance: ProvenanceKind, agent = 'claude-code'): SessionWriter {
  return openSession(mkdtempSync(join(tmpdir(), 'hansard-prov-')), { agent, provenance });
}
/** Another writer of `first`'s session. */
function writerOf(
  first: SessionWriter,
  provenance: ProvenanceKind | undefined,
  agent = 'other',
): SessionWriter {
  return openSession(first.dir, { agent, ...(provenance ? { provenance } : {}) });
}

/** A Bash action and its result in `w`; returns the action's and the result's ids. */
function ran(
  w: SessionWriter,
  command: unknown,
  exit: number,
  s: number,
  callId: string | null = null,
): { action: string; result: string } {
  const t = w.turnStart({ context_message_ids: null }, { at: at(s) });
  const a = w.action(
    {
      turn_id: t.turn_id,
      tool: 'Bash',
      input: typeof command === 'string' ? { command } : command,
      call_id: callId,
    },
    { at: at(s + 1) },
  );
  const r = w.actionResult(
    { action_id: a.id, status: exit === 0 ? 'ok' : 'error', exit_code: exit },
    { at: at(s + 2) },
  );
  return { action: a.id, result: r.id };
}

/** The session in `dir` as the server reads it: merged, corrections applied, into an index. */
async function indexOf(dir: string, origins?: ConstructorParameters<typeof EvidenceIndex>[0]) {
  const merged = [];
  for await (const m of mergeSegments(sessionDirSources(dir))) merged.push(m.event);
  const { events } = applyCorrections(merged.map((e) => decodeEvent(e)));
  const index = new EvidenceIndex(origins);
  for (const [i, e] of merged.entries())
    index.add({ ...e, obj: events[i] as unknown as Record<string, unknown> });
  return index;
}

const claim = (index: EvidenceIndex, ref: string, result = 'passed', type = 'test'): EvidenceCheck =>
  index.check({ type, ref, result }, REPORT);

describe("the model's own words never support a claim (issue 24.1)", () => {
  it('a declared tool message saying exit 0 does not turn an observed exit 1 into supported', async () => {
    // The attack of the issue: npm test exits 1 under the hooks; the agent then hands over, through MCP
    // capture, a tool message `{"tool":"Bash","input":{"command":"npm test"},"exit_code":0}`.
    const hook = session('hook');
    const failed = ran(hook, 'npm test', 1, 1, 'toolu_01Real');
    const mcp = writerOf(hook, 'declared', 'subagent');
    ran(mcp, 'npm test', 0, 50);
    const c = claim(await indexOf(hook.dir), 'npm test');
    expect(c).toMatchObject({ verdict: 'unsupported', action_id: failed.action, exit_code: 1 });
    expect(c.rests_on).toMatchObject({
      w: hook.w,
      provenance: 'hook',
      exit_code: 1,
      result_id: failed.result,
    });
    expect(c.reason).toBe(
      `claimed passed; action ${failed.action} recorded by ${hook.w} (hook): exit code 1`,
    );
  });

  it('an action only a declared writer recorded supports nothing, and the reason names that writer', async () => {
    const hook = session('hook');
    ran(hook, 'npm run lint', 0, 1);
    const mcp = writerOf(hook, 'declared', 'subagent');
    ran(mcp, 'npm test', 0, 10, 'toolu_01Declared');
    const index = await indexOf(hook.dir);
    for (const ref of ['npm test', 'toolu_01Declared']) {
      const c = claim(index, ref);
      expect(c).toMatchObject({ verdict: 'unsupported', action_id: null, rests_on: null });
      expect(c.reason).toBe(
        `no observed action matches "${ref}": a matching action of ${mcp.w} (declared) is the agent's own word, which supports nothing`,
      );
    }
    // A claim of failure is refuted by nothing either: declared words neither support nor refute.
    expect(claim(index, 'npm test', 'failed').verdict).toBe('unsupported');
  });

  it('a declared result for an observed action that has none is not counted, and the reason says so', async () => {
    const hook = session('hook');
    const t = hook.turnStart({ context_message_ids: null }, { at: at(1) });
    const a = hook.action(
      { turn_id: t.turn_id, tool: 'Bash', input: { command: 'npm test' } },
      { at: at(2) },
    );
    const mcp = writerOf(hook, 'declared', 'subagent');
    mcp.actionResult({ action_id: a.id, status: 'ok', exit_code: 0 }, { at: at(3) });
    const c = claim(await indexOf(hook.dir), 'npm test');
    expect(c).toMatchObject({ verdict: 'unsupported', action_id: a.id, exit_code: null });
    expect(c.rests_on).toMatchObject({ w: hook.w, result_id: null, provenance: 'hook' });
    expect(c.reason).toBe(
      `action ${a.id} has no observed result; a result from ${mcp.w} (declared) is the agent's own word, which supports nothing`,
    );
  });

  it('a writer with no provenance in its writer.start is unknown and counts for nothing', async () => {
    const hook = session('library');
    ran(hook, 'make docs', 0, 1);
    // a segment of another tool, or written before provenance was recorded: no `meta.provenance`
    const legacy = writerOf(hook, 'library');
    const index0 = await indexOf(hook.dir);
    expect(claim(index0, 'make docs').verdict).toBe('supported');
    ran(legacy, 'npm test', 0, 10);
    // Told by the server's writer index that `legacy` has no known provenance:
    const index = await indexOf(
      hook.dir,
      new Map([[legacy.w, { provenance: 'unknown', agent: 'x', token_id: null, token_label: null }]]),
    );
    expect(claim(index, 'npm test')).toMatchObject({ verdict: 'unsupported', action_id: null });
    expect(claim(index, 'make docs').verdict).toBe('supported');
  });

  it("a correction of a declared writer's meta to `hook` does not make it observed", async () => {
    const hook = session('hook');
    const mcp = writerOf(hook, 'declared', 'subagent');
    ran(mcp, 'npm test', 0, 5);
    const fixer = writerOf(hook, 'library');
    fixer.correct(
      { target_id: mcp.w, field: 'meta', value: { agent: 'claude-code', provenance: 'hook' }, reason: 'x' },
      { at: at(20) },
    );
    const c = claim(await indexOf(hook.dir), 'npm test');
    expect(c).toMatchObject({ verdict: 'unsupported', action_id: null });
  });

  it('names the writer, agent, provenance, uploading token, action and exit code it rests on', async () => {
    const hook = session('hook', 'claude-code');
    const ok = ran(hook, 'npm test', 0, 1, 'toolu_01Ok');
    const index = await indexOf(
      hook.dir,
      new Map([
        [
          hook.w,
          { provenance: 'hook', agent: 'claude-code', token_id: 'tok_7', token_label: 'priya laptop' },
        ],
      ]),
    );
    expect(claim(index, 'toolu_01Ok')).toEqual({
      verdict: 'supported',
      reason: `claimed passed; action ${ok.action} recorded by ${hook.w} (hook): exit code 0`,
      action_id: ok.action,
      matched_by: 'call_id',
      exit_code: 0,
      rests_on: {
        w: hook.w,
        agent: 'claude-code',
        provenance: 'hook',
        token_id: 'tok_7',
        token_label: 'priya laptop',
        action_id: ok.action,
        command: 'npm test',
        result_id: ok.result,
        status: 'ok',
        exit_code: 0,
      },
      contested: [],
    });
  });
});

describe("another writer's correction of a result supports nothing (issue 24.1)", () => {
  it('exit_code := 0 and status := ok from another writer leave the claim unsupported, contested, naming who', async () => {
    const hook = session('hook');
    const failed = ran(hook, 'npm test', 1, 1);
    const other = writerOf(hook, 'library', 'reviewer');
    const c1 = other.correct(
      { target_id: failed.result, field: 'exit_code', value: 0, reason: 'flaky' },
      { at: at(10) },
    );
    const c2 = other.correct(
      { target_id: failed.result, field: 'status', value: 'ok', reason: 'flaky' },
      { at: at(11) },
    );
    const c = claim(await indexOf(hook.dir), 'npm test');
    expect(c.verdict).toBe('unsupported');
    expect(c.contested).toEqual([
      {
        by: c1.id,
        w: other.w,
        provenance: 'library',
        target_id: failed.result,
        field: 'exit_code',
        was: 1,
        value: 0,
      },
      {
        by: c2.id,
        w: other.w,
        provenance: 'library',
        target_id: failed.result,
        field: 'status',
        was: 'error',
        value: 'ok',
      },
    ]);
    expect(c.reason).toBe(
      `action ${failed.action} or its result was changed by a correction from another writer (exit_code of ${failed.result} from 1 to 0 by ${other.w} (library, correction ${c1.id}); status of ${failed.result} from "error" to "ok" by ${other.w} (library, correction ${c2.id})), so it supports nothing`,
    );
    // what it rests on is what its own writer recorded, not the other writer's value
    expect(c.rests_on).toMatchObject({ w: hook.w, exit_code: 1, status: 'error' });
  });

  it("another writer's correction of an action's input neither makes it match nor hides it", async () => {
    const hook = session('hook');
    const r = ran(hook, 'true', 0, 1);
    const other = writerOf(hook, 'library');
    other.correct(
      { target_id: r.action, field: 'input', value: { command: 'npm test' }, reason: 'x' },
      { at: at(9) },
    );
    // refs match what the action's own writer recorded: `true` is not `npm test`
    expect(claim(await indexOf(hook.dir), 'npm test')).toMatchObject({
      verdict: 'unsupported',
      action_id: null,
    });
    // and the failed run another writer renamed away still answers for `npm test`, contested
    const failed = ran(hook, 'npm test', 1, 20);
    other.correct(
      { target_id: failed.action, field: 'input', value: { command: 'make docs' }, reason: 'x' },
      { at: at(30) },
    );
    const c = claim(await indexOf(hook.dir), 'npm test');
    expect(c).toMatchObject({ verdict: 'unsupported', action_id: failed.action });
    expect(c.rests_on).toMatchObject({ command: 'npm test', exit_code: 1 });
    expect(c.contested).toMatchObject([
      { w: other.w, target_id: failed.action, field: 'input', was: { command: 'npm test' } },
    ]);
  });

  it("a writer's correction of its own result keeps working", async () => {
    const hook = session('hook');
    const r = ran(hook, 'npm test', 1, 1);
    hook.correct(
      { target_id: r.result, field: 'exit_code', value: 0, reason: 'recorded wrong' },
      { at: at(10) },
    );
    hook.correct(
      { target_id: r.result, field: 'status', value: 'ok', reason: 'recorded wrong' },
      { at: at(11) },
    );
    const c = claim(await indexOf(hook.dir), 'npm test');
    expect(c).toMatchObject({ verdict: 'supported', exit_code: 0, contested: [] });
    // and says so: a reader can tell a flipped result from a clean 0
    expect(c.reason).toMatch(
      /\(as corrected by its own writer: exit_code 1 → 0, correction e_\w+; status "error" → "ok", correction e_\w+\)$/,
    );
  });
});

describe('commands matched as a shell reads them (issue 24.2)', () => {
  it.each([
    ['a newline', 'npm test\ntrue'],
    ['a carriage return', 'npm test\rtrue'],
    ['CRLF', 'npm test\r\ntrue'],
    ['a line separator', 'npm test\u2028true'],
    ['a vertical tab', 'npm test\vtrue'],
    ['a continuation', 'npm test \\\n&& true'],
    ['an escaped newline', 'npm test \\\ntrue'],
    ['a subshell', 'npm test (true)'],
    ['a group', 'npm test { true; }'],
    ['a list', 'npm test; true'],
    ['a pipe', 'npm test | true'],
    ['or', 'npm test || true'],
    ['background', 'npm test & true'],
    ['a substitution', 'npm test $(true)'],
    ['backquotes', 'npm test `true`'],
    ['a redirection', 'npm test > /dev/null'],
  ])('`npm test` followed by %s is not `npm test`', async (_, command) => {
    const hook = session('hook');
    ran(hook, command, 0, 1);
    expect(claim(await indexOf(hook.dir), 'npm test')).toMatchObject({
      verdict: 'unsupported',
      action_id: null,
    });
  });

  it('still matches the command itself, with arguments, blanks collapsed, and a trailing newline', async () => {
    const hook = session('hook');
    const plain = ran(hook, 'npm test', 0, 1);
    const args = ran(hook, 'npm  run\tlint --fix src', 0, 10);
    const nl = ran(hook, 'make check\n', 0, 20);
    const index = await indexOf(hook.dir);
    expect(claim(index, 'npm test')).toMatchObject({
      verdict: 'supported',
      action_id: plain.action,
      matched_by: 'command',
    });
    expect(claim(index, 'npm run lint')).toMatchObject({
      action_id: args.action,
      matched_by: 'command_prefix',
    });
    expect(claim(index, 'make check')).toMatchObject({ action_id: nl.action, matched_by: 'command' });
  });

  it('a call_id a writer chose that equals a command name does not win over command matching', async () => {
    const hook = session('hook');
    const real = ran(hook, 'make check', 2, 1, 'toolu_01Real');
    // `true`, with the call id "make check": a free string, not a runtime's id
    const fake = ran(hook, 'true', 0, 10, 'make check');
    const index = await indexOf(hook.dir);
    expect(claim(index, 'make check')).toMatchObject({
      verdict: 'unsupported',
      action_id: real.action,
      matched_by: 'command',
      exit_code: 2,
    });
    expect(claim(index, 'make check').action_id).not.toBe(fake.action);
    // The runtime's id still names its action, and an event id its own.
    expect(claim(index, 'toolu_01Real', 'exit:2')).toMatchObject({
      verdict: 'supported',
      matched_by: 'call_id',
    });
    expect(claim(index, fake.action)).toMatchObject({
      verdict: 'supported',
      matched_by: 'id',
      action_id: fake.action,
    });
  });

  it('ids match only in the forms runtimes mint', () => {
    for (const id of ['toolu_01AbC', 'srvtoolu_01x', 'call_A3', 'call_fake1', 'toolu_fake0001a']) {
      expect(isRuntimeCallId(id), id).toBe(true);
    }
    for (const id of ['make check', 'npm test', 'toolu_', 'call_ x', 'tool_001', 'a_1', 'call_a;b', '']) {
      expect(isRuntimeCallId(id), id).toBe(false);
    }
  });

  it('commandOf keeps line breaks and joins an argv without a shell as arguments', () => {
    expect(commandOf({ command: 'npm test\ntrue' })).toBe('npm test\ntrue');
    expect(commandOf({ cmd: ['bash', '-lc', 'npm test\ntrue'] })).toBe('npm test\ntrue');
    // no shell reads an argv: its words are arguments, whatever they hold
    expect(commandOf({ cmd: ['npm', 'test', '\n', 'x'] })).toBe('npm test x');
    expect(commandMatch('npm test x', 'npm test')).toBe('command_prefix');
    expect(commandMatch('npm test\nx', 'npm test')).toBeNull();
    expect(commandMatch('npm testx', 'npm test')).toBeNull();
    expect(commandMatch('npm test', 'npm')).toBeNull();
  });
});
