/**
 * Declared evidence checked against a recorded transcript (lib/log/analyse/evidence.ts, seed 000 "Read declared
 * evidence", docs/status.md): a real session written with the library writer, merged back from disk, and
 * each kind of claim asked about.
 */
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { beforeAll, describe, expect, it } from 'vitest';
import { CLOCK_SKEW_MICROS, commandOf, EvidenceIndex } from '../../lib/log/analyse/evidence.js';
import { mergeSegments, openSession, sessionDirSources } from '../../lib/log/index.js';

const T0 = Date.UTC(2026, 5, 1) * 1000;
const at = (s: number) => T0 + s * 1_000_000;
let index: EvidenceIndex;
const ids: Record<string, string> = {};
let wId = '';

beforeAll(async () => {
  const w = openSession(mkdtempSync(join(tmpdir(), 'hansard-evidence-')), { agent: 'tester' });
  wId = w.w;
  const m = w.message({ user_id: 'ann', text: 'fix it' }, { at: at(0) });
  const t = w.turnStart({ context_message_ids: [m.id] }, { at: at(1) });
  const act = (name: string, input: unknown, callId: string | null, s: number) => {
    const a = w.action({ turn_id: t.turn_id, tool: 'Bash', input, call_id: callId }, { at: at(s) });
    ids[name] = a.id;
    return a;
  };
  act('unit', { command: 'npm test -- --run parser' }, 'toolu_unit', 2);
  w.actionResult({ action_id: ids.unit!, status: 'ok', exit_code: 0 }, { at: at(3) });
  act('lint', { command: 'npm run lint' }, 'toolu_lint', 4);
  w.actionResult({ action_id: ids.lint!, status: 'error', exit_code: 1 }, { at: at(5) });
  act('build', { cmd: ['bash', '-lc', 'npm run build'] }, 'call_build', 6); // no result yet
  act('noexit', 'make docs', null, 7);
  w.actionResult({ action_id: ids.noexit!, status: 'ok', exit_code: null }, { at: at(8) });
  act('stopped', { command: 'npm run e2e' }, 'toolu_e2e', 9);
  w.actionResult({ action_id: ids.stopped!, status: 'cancelled', exit_code: null }, { at: at(10) });
  // The same command twice: failed, then passed.
  act('flaky1', { command: 'npx vitest run flaky.test.ts' }, 'toolu_f1', 11);
  w.actionResult({ action_id: ids.flaky1!, status: 'error', exit_code: 1 }, { at: at(12) });
  act('flaky2', { command: 'npx vitest run flaky.test.ts' }, 'toolu_f2', 90);
  w.actionResult({ action_id: ids.flaky2!, status: 'ok', exit_code: 0 }, { at: at(91) });
  // Long after the reports below.
  act('late', { command: 'cargo test' }, 'toolu_late', 500);
  w.actionResult({ action_id: ids.late!, status: 'ok', exit_code: 0 }, { at: at(501) });
  w.end({}, { at: at(502) });
  index = new EvidenceIndex();
  for await (const m of mergeSegments(sessionDirSources(w.dir))) index.add(m.event);
});

const REPORT = at(100);
const check = (type: string, ref: string, result: string, when = REPORT) =>
  index.check({ type, ref, result }, when);

describe('EvidenceIndex.check', () => {
  it('supports a pass on a recorded exit code 0, found by call id, action id, command or its first words (two or more)', () => {
    expect(check('test', 'toolu_unit', 'passed')).toMatchObject({
      verdict: 'supported',
      action_id: ids.unit,
      matched_by: 'call_id',
      exit_code: 0,
    });
    expect(check('command', ids.unit!, 'exit:0')).toMatchObject({ verdict: 'supported', matched_by: 'id' });
    expect(check('command', 'npm test -- --run parser', 'completed')).toMatchObject({
      verdict: 'supported',
      matched_by: 'command',
    });
    // Its first words name it too, but a pass of it with arguments is no pass of the command named
    // (`npm test --script-shell=true` runs no test): the reason says to name its call id.
    expect(check('command', 'npm test', 'passed')).toMatchObject({
      verdict: 'unsupported',
      matched_by: 'command_prefix',
      action_id: ids.unit,
      reason: `claimed passed of "npm test"; action ${ids.unit} recorded by ${wId} (library) ran \`npm test -- --run parser\`, with arguments that may change what runs: name its call id (toolu_unit)`,
    });
    expect(check('command', 'npm run lint', 'failed')).toMatchObject({ verdict: 'supported' });
    // A word of a command names nothing: `echo parser` would otherwise support "parser passed".
    expect(check('test', 'parser', 'passed')).toMatchObject({ verdict: 'unsupported', matched_by: null });
    // An argv behind `bash -lc` is the command it runs.
    expect(check('command', 'npm run build', 'passed')).toMatchObject({
      action_id: ids.build,
      matched_by: 'command',
    });
  });

  it('does not support a pass on exit code 1, and says what was recorded', () => {
    const c = check('command', 'npm run lint', 'passed');
    expect(c).toMatchObject({ verdict: 'unsupported', action_id: ids.lint, exit_code: 1 });
    expect(c.reason).toBe(`claimed passed; action ${ids.lint} recorded by ${wId} (library): exit code 1`);
  });

  it('checks claims of failure the same way', () => {
    expect(check('command', 'npm run lint', 'failed').verdict).toBe('supported');
    expect(check('command', 'npm run lint', 'exit:1').verdict).toBe('supported');
    expect(check('command', 'npm run lint', 'exit:2').verdict).toBe('unsupported');
    expect(check('test', 'toolu_unit', 'failed').verdict).toBe('unsupported');
    expect(check('command', 'npm run e2e', 'cancelled').verdict).toBe('supported');
    expect(check('command', 'npm run e2e', 'interrupted').verdict).toBe('supported');
    expect(check('command', 'npm run lint', 'interrupted').verdict).toBe('unsupported');
  });

  it('does not support a claim with a missing result, no exit code, or no matching action', () => {
    expect(check('command', 'npm run build', 'passed')).toMatchObject({
      verdict: 'unsupported',
      reason: `action ${ids.build} has no observed result`,
    });
    expect(check('command', 'make docs', 'passed')).toMatchObject({
      verdict: 'unsupported',
      reason: `claimed passed; action ${ids.noexit} recorded by ${wId} (library): no exit code (status ok)`,
    });
    expect(check('test', 'no-such-suite', 'passed')).toEqual({
      verdict: 'unsupported',
      reason: 'no observed action matches "no-such-suite"',
      action_id: null,
      matched_by: null,
      exit_code: null,
      rests_on: null,
      contested: [],
    });
    // Only whole words at the start of the command, two at least.
    expect(check('command', 'parser', 'passed').verdict).toBe('unsupported');
    expect(check('command', 'npm', 'passed').verdict).toBe('unsupported');
    expect(check('command', 'npm tes', 'passed').verdict).toBe('unsupported');
  });

  it('takes the last matching action no later than the report', () => {
    expect(check('command', 'npx vitest run flaky.test.ts', 'passed')).toMatchObject({
      verdict: 'supported',
      action_id: ids.flaky2,
    });
    // A report made between the two runs (more than the clock slack before the second) is about the first.
    expect(check('command', 'npx vitest run flaky.test.ts', 'passed', at(15))).toMatchObject({
      verdict: 'unsupported',
      action_id: ids.flaky1,
    });
  });

  it('does not count an action recorded after the report (beyond the clock slack)', () => {
    expect(check('command', 'cargo test', 'passed').reason).toBe(
      'the only observed action matching "cargo test" came after the report',
    );
    expect(check('command', 'cargo test', 'passed', at(500) - CLOCK_SKEW_MICROS).verdict).toBe('supported');
    // A call id names its action whenever it was recorded.
    expect(check('command', 'toolu_late', 'passed').verdict).toBe('supported');
  });

  it('leaves file and commit claims unchecked, and refuses results that are not a command’s', () => {
    expect(check('file', 'src/a.ts', 'modified')).toMatchObject({ verdict: 'unchecked', action_id: null });
    expect(check('commit', 'abc1234', 'created').verdict).toBe('unchecked');
    expect(check('command', 'npm run lint', 'created')).toMatchObject({
      verdict: 'unsupported',
      reason: '"created" is a result of a file, not of a command',
    });
  });
});

describe('EvidenceIndex, event by event', () => {
  let n = 0;
  const ev = (type: string, obj: Record<string, unknown>, s: number, w = 'w_obs') =>
    ({ type, w, obj: { type, ...obj }, tsMicros: at(s), raw: '', line: ++n, offset: 0 }) as never;
  /** An index whose writer `w_obs` is observed (a library writer), as the server's writer index says. */
  const observed = () =>
    new EvidenceIndex(
      new Map([['w_obs', { provenance: 'library', agent: 'tester', token_id: 'tok_1', token_label: 'ci' }]]),
    );
  const action = (id: string, command: string, s: number, callId: string | null = null) =>
    ev('agent.action', { id, call_id: callId, input: { command } }, s);
  const result = (actionId: string, status: string, exitCode: number | null, s: number) =>
    ev('agent.action_result', { action_id: actionId, status, exit_code: exitCode }, s);
  const claim = (idx: EvidenceIndex, ref: string, r: string, type = 'command') =>
    idx.check({ type, ref, result: r }, at(100));

  it('supports nothing on an action whose results disagree, whichever came last', () => {
    const idx = observed();
    idx.add(action('a_1', 'npm test', 1));
    idx.add(result('a_1', 'error', 1, 2));
    idx.add(result('a_1', 'ok', 0, 3));
    expect(claim(idx, 'npm test', 'passed')).toMatchObject({
      verdict: 'unsupported',
      reason: 'action a_1 has conflicting results (status error, exit code 1; then status ok, exit code 0)',
    });
    expect(claim(idx, 'npm test', 'failed').verdict).toBe('unsupported');
    // The same result twice is no conflict.
    const same = observed();
    same.add(action('a_2', 'npm test', 1));
    same.add(result('a_2', 'ok', 0, 2));
    same.add(result('a_2', 'ok', 0, 3));
    expect(claim(same, 'npm test', 'passed').verdict).toBe('supported');
  });

  it('takes a result merged before its action (another writer, an earlier clock), by id or call id', () => {
    const idx = observed();
    idx.add(result('a_3', 'ok', 0, 1));
    idx.add(result('toolu_4', 'error', 2, 1));
    idx.add(action('a_3', 'make build', 2));
    idx.add(action('a_4', 'make lint', 2, 'toolu_4'));
    expect(claim(idx, 'make build', 'passed')).toMatchObject({
      verdict: 'supported',
      action_id: 'a_3',
      exit_code: 0,
    });
    expect(claim(idx, 'make lint', 'exit:2')).toMatchObject({ verdict: 'supported', action_id: 'a_4' });
    expect(claim(idx, 'toolu_4', 'exit:2')).toMatchObject({ verdict: 'supported', matched_by: 'call_id' });
    // An empty call id names nothing.
    const blank = observed();
    blank.add(action('a_5', 'make docs', 1, ''));
    expect(claim(blank, '', 'passed').matched_by).toBeNull();
  });

  it('needs status ok with exit 0 for a pass, a recorded non-zero exit for a failure, exit N exactly', () => {
    const idx = observed();
    idx.add(action('a_6', 'make a', 1));
    idx.add(result('a_6', 'error', 0, 2));
    idx.add(action('a_7', 'make b', 1));
    idx.add(result('a_7', 'error', null, 2));
    idx.add(action('a_8', 'make c', 1));
    idx.add(result('a_8', 'error', 12, 2));
    idx.add(action('a_9', 'make d', 1));
    idx.add(result('a_9', 'interrupted', null, 2));
    expect(claim(idx, 'make a', 'passed')).toMatchObject({
      verdict: 'unsupported',
      reason: 'claimed passed; action a_6 recorded by w_obs (library): exit code 0 but status error',
    });
    expect(claim(idx, 'make b', 'failed')).toMatchObject({
      verdict: 'unsupported',
      reason: 'claimed failed; action a_7 recorded by w_obs (library): no exit code (status error)',
    });
    expect(claim(idx, 'make c', 'exit:12').verdict).toBe('supported');
    expect(claim(idx, 'make c', 'exit:1').verdict).toBe('unsupported');
    expect(claim(idx, 'make c', 'failed').verdict).toBe('supported');
    expect(claim(idx, 'make d', 'interrupted')).toMatchObject({
      verdict: 'supported',
      reason: 'claimed interrupted; action a_9 recorded by w_obs (library): status interrupted',
    });
    expect(claim(idx, 'make d', 'cancelled').verdict).toBe('supported');
    expect(claim(idx, 'make c', 'cancelled').verdict).toBe('unsupported');
  });

  it('ignores other events and results that name no action id', () => {
    const idx = observed();
    idx.add(ev('note', { id: 'e_1', text: 'npm test' }, 1));
    idx.add(ev('agent.action', { call_id: 'x', input: { command: 'npm test' } }, 1));
    idx.add(ev('agent.action_result', { status: 'ok', exit_code: 0 }, 2));
    expect(claim(idx, 'npm test', 'passed').verdict).toBe('unsupported');
    expect(claim(idx, 'npm test', 'passed').reason).toBe('no observed action matches "npm test"');
  });
});

describe('commandOf', () => {
  it('reads string inputs, command/cmd fields and shell-wrapped argv', () => {
    expect(commandOf('  ls   -la ')).toBe('ls -la');
    expect(commandOf({ command: 'npm  test' })).toBe('npm test');
    expect(commandOf({ cmd: ['/bin/bash', '-lc', 'echo hi'] })).toBe('echo hi');
    expect(commandOf({ cmd: ['git', 'status'] })).toBe('git status');
    expect(commandOf({ cmd: ['sh', '-c', 'make  all'] })).toBe('make all');
    expect(commandOf({ cmd: ['/usr/bin/zsh', '-lc', 'ls'] })).toBe('ls');
    // Not a `sh -c` wrapper: kept whole.
    expect(commandOf({ cmd: ['bash', '-x', 'run.sh'] })).toBe('bash -x run.sh');
    expect(commandOf({ cmd: ['bash', '-lc', 'ls', 'extra'] })).toBe('bash -lc ls extra');
    expect(commandOf({ cmd: ['fish', '-c', 'ls'] })).toBe('fish -c ls');
    expect(commandOf({ cmd: ['ls', 3] })).toBeNull();
    expect(commandOf(['npm', 'test'])).toBeNull();
    expect(commandOf({ file_path: 'a.ts' })).toBeNull();
    expect(commandOf(null)).toBeNull();
  });
});
