/**
 * The edges of the evidence check that mutation testing showed untested (docs/mutation.md, issue 24):
 * where a writer's origin comes from (the server's index, or its writer.start as written), results that
 * disagree in one field only, how a result's fields default, refs that look like ids, and commands whose
 * line break follows a space. Events are fed one by one, as the merge gives them.
 */
import { describe, expect, it } from 'vitest';
import { EvidenceIndex, type GivenOrigin } from '../../lib/log/analyse/evidence.js';
import {
  commandMatch,
  commandOf,
  isActionId,
  isRuntimeCallId,
} from '../../lib/log/analyse/evidence-match.js';
import { asProvenance, isObserved, PROVENANCE_KINDS, provenanceOf } from '../../lib/log/format/provenance.js';

const T0 = Date.UTC(2026, 5, 1) * 1000;
const at = (s: number) => T0 + s * 1_000_000;
const A1 = 'a_01JAAAAAAAAAAAAAAAAAAAAAA1';
const A2 = 'a_01JAAAAAAAAAAAAAAAAAAAAAA2';
let n = 0;
const ev = (type: string, obj: Record<string, unknown>, s: number, w = 'w_hook') =>
  ({ type, w, obj: { type, ...obj }, tsMicros: at(s), raw: '', line: ++n, offset: 0 }) as never;
const action = (id: string, command: string, s: number, callId: string | null = null, w = 'w_hook') =>
  ev('agent.action', { id, call_id: callId, input: { command } }, s, w);
const result = (actionId: string, fields: Record<string, unknown>, s: number, w = 'w_hook') =>
  ev('agent.action_result', { id: `e_r${++n}`, action_id: actionId, ...fields }, s, w);
const origin = (provenance: GivenOrigin['provenance'], label: string | null = null): GivenOrigin => ({
  provenance,
  agent: 'claude-code',
  token_id: label === null ? null : 'tok_1',
  token_label: label,
});
const indexOf = (origins: Record<string, GivenOrigin> = { w_hook: origin('hook') }) =>
  new EvidenceIndex(new Map(Object.entries(origins)));
const claim = (idx: EvidenceIndex, ref: string, r = 'passed', type = 'command') =>
  idx.check({ type, ref, result: r }, at(100));

describe("a writer's origin", () => {
  it("the server's provenance wins over what the writer.start says; a null one is read from it", () => {
    const idx = indexOf({ w_hook: origin('declared', 'mcp'), w_old: origin(null, 'priya laptop') });
    idx.add(ev('writer.start', { meta: { agent: 'x', provenance: 'library' } }, 0, 'w_hook'));
    idx.add(ev('writer.start', { meta: { agent: 'old-agent', provenance: 'hook' } }, 0, 'w_old'));
    idx.add(action(A1, 'npm test', 1, null, 'w_hook'));
    idx.add(result(A1, { status: 'ok', exit_code: 0 }, 2, 'w_hook'));
    idx.add(action(A2, 'make check', 3, null, 'w_old'));
    idx.add(result(A2, { status: 'ok', exit_code: 0 }, 4, 'w_old'));
    expect(claim(idx, 'npm test')).toMatchObject({ verdict: 'unsupported', action_id: null });
    // provenance from the bytes, agent and token from the server's index
    expect(claim(idx, 'make check')).toMatchObject({
      verdict: 'supported',
      rests_on: { provenance: 'hook', agent: 'claude-code', token_id: 'tok_1', token_label: 'priya laptop' },
    });
    // a writer with no writer.start seen and a null given provenance is unknown
    expect(idx.origin('w_old').provenance).toBe('hook');
    const lone = indexOf({ w_x: origin(null, 'l') });
    expect(lone.origin('w_x')).toEqual({
      provenance: 'unknown',
      agent: 'claude-code',
      token_id: 'tok_1',
      token_label: 'l',
    });
    expect(lone.origin('w_never')).toEqual({
      provenance: 'unknown',
      agent: null,
      token_id: null,
      token_label: null,
    });
  });

  it('without an index, the writer.start says it (agent too), and a non-string agent is none', () => {
    const idx = new EvidenceIndex();
    idx.add(ev('writer.start', { meta: { agent: 'coder', provenance: 'library' } }, 0, 'w_a'));
    idx.add(ev('writer.start', { meta: { agent: 7, provenance: 'hook' } }, 0, 'w_b'));
    idx.add(ev('writer.start', { meta: null }, 0, 'w_c'));
    expect(idx.origin('w_a')).toEqual({
      provenance: 'library',
      agent: 'coder',
      token_id: null,
      token_label: null,
      mixed_tokens: false,
    });
    expect(idx.origin('w_b')).toMatchObject({ provenance: 'hook', agent: null });
    expect(idx.origin('w_c')).toMatchObject({ provenance: 'unknown', agent: null });
  });

  it('provenance kinds: only hook, harness, transcript and library are observed', () => {
    expect(PROVENANCE_KINDS).toEqual(['hook', 'harness', 'transcript', 'library', 'declared']);
    expect(
      ['hook', 'harness', 'transcript', 'library', 'declared', 'unknown'].map((p) => isObserved(p as never)),
    ).toEqual([true, true, true, true, false, false]);
    expect(provenanceOf({ provenance: 'hook' })).toBe('hook');
    expect(provenanceOf({ provenance: 'HOOK' })).toBe('unknown');
    expect(provenanceOf({ provenance: 7 })).toBe('unknown');
    expect(provenanceOf({})).toBe('unknown');
    expect(provenanceOf(null)).toBe('unknown');
    expect(provenanceOf('hook')).toBe('unknown');
    expect(asProvenance('transcript')).toBe('transcript');
    expect(asProvenance('observed')).toBe('unknown');
    expect(asProvenance(null)).toBe('unknown');
    expect(asProvenance(undefined)).toBe('unknown');
  });
});

describe('results', () => {
  it('disagree when only the exit code differs, or only the status', () => {
    const idx = indexOf();
    idx.add(action(A1, 'make a', 1));
    idx.add(result(A1, { status: 'error', exit_code: 1 }, 2));
    idx.add(result(A1, { status: 'error', exit_code: 2 }, 3));
    idx.add(action(A2, 'make b', 4));
    idx.add(result(A2, { status: 'error', exit_code: null }, 5));
    idx.add(result(A2, { status: 'cancelled', exit_code: null }, 6));
    expect(claim(idx, 'make a', 'failed').reason).toBe(
      `action ${A1} has conflicting results (status error, exit code 1; then status error, exit code 2)`,
    );
    expect(claim(idx, 'make b', 'cancelled').reason).toBe(
      `action ${A2} has conflicting results (status error; then status cancelled)`,
    );
  });

  it('a result without a status reads ok; an exit code that is no integer reads as none', () => {
    const idx = indexOf();
    idx.add(action(A1, 'make a', 1));
    idx.add(result(A1, { exit_code: 0 }, 2));
    idx.add(action(A2, 'make b', 3));
    idx.add(result(A2, { status: 'ok', exit_code: 0.5 }, 4));
    expect(claim(idx, 'make a')).toMatchObject({ verdict: 'supported', rests_on: { status: 'ok' } });
    expect(claim(idx, 'make b')).toMatchObject({ verdict: 'unsupported', exit_code: null });
  });

  it('a result naming an empty call id attaches to nothing', () => {
    const idx = indexOf();
    idx.add(action(A1, 'make a', 1, ''));
    idx.add(result('', { status: 'ok', exit_code: 0 }, 2));
    expect(claim(idx, 'make a').reason).toBe(`action ${A1} has no observed result`);
  });

  it('the first action of an id (or call id) keeps it; later results of that id are its', () => {
    const idx = indexOf();
    idx.add(action(A1, 'make a', 1, 'toolu_01Same'));
    idx.add(result(A1, { status: 'error', exit_code: 1 }, 2));
    idx.add(action(A1, 'make b', 3, 'toolu_01Same'));
    idx.add(result(A1, { status: 'ok', exit_code: 0 }, 4));
    expect(claim(idx, A1, 'failed')).toMatchObject({ verdict: 'unsupported', matched_by: 'id' });
    expect(claim(idx, A1, 'failed').reason).toContain('conflicting results');
    expect(claim(idx, 'toolu_01Same', 'failed').reason).toContain('conflicting results');
  });

  it('exit:N is read whole: anything around it is no exit claim', () => {
    const idx = indexOf();
    idx.add(action(A1, 'make a', 1));
    idx.add(result(A1, { status: 'error', exit_code: 1 }, 2));
    expect(claim(idx, 'make a', 'exit:1').verdict).toBe('supported');
    for (const r of ['xexit:1', 'exit:1x']) {
      expect(claim(idx, 'make a', r).reason).toBe(`"${r}" is a result of a file, not of a command`);
    }
  });

  it('a malformed `corrected` list is no correction', () => {
    const idx = indexOf();
    idx.add(action(A1, 'make a', 1));
    const r = result(A1, { status: 'ok', exit_code: 0 }, 2) as unknown as { obj: Record<string, unknown> };
    r.obj.corrected = [{ by: 7, field: 'exit_code' }, 'x', null, { by: 'e_1' }, { field: 'status' }];
    idx.add(r as never);
    expect(claim(idx, 'make a')).toMatchObject({ verdict: 'supported', contested: [] });
    const odd = indexOf();
    odd.add(action(A1, 'make a', 1));
    const r2 = result(A1, { status: 'ok', exit_code: 0 }, 2) as unknown as { obj: Record<string, unknown> };
    r2.obj.corrected = 'everything';
    odd.add(r2 as never);
    expect(claim(odd, 'make a').verdict).toBe('supported');
  });
});

describe('refs that name uncounted writers', () => {
  it("names a declared writer's action matched by id, call id or command, not one after the report", () => {
    const idx = indexOf({ w_hook: origin('hook'), w_mcp: origin('declared') });
    idx.add(action(A1, 'npm test', 1, 'toolu_01Decl', 'w_mcp'));
    idx.add(action(A2, 'cargo test', 500, null, 'w_mcp'));
    const named = `: a matching action of w_mcp (declared) is the agent's own word, which supports nothing`;
    expect(claim(idx, A1).reason).toBe(`no observed action matches "${A1}"${named}`);
    expect(claim(idx, 'toolu_01Decl').reason).toBe(`no observed action matches "toolu_01Decl"${named}`);
    expect(claim(idx, 'npm test').reason).toBe(`no observed action matches "npm test"${named}`);
    expect(claim(idx, 'npm').reason).toBe('no observed action matches "npm"');
    expect(claim(idx, 'cargo test').reason).toBe('no observed action matches "cargo test"');
    // an id-looking ref that is not one of the forms names nothing by id
    expect(claim(idx, `x${A1}`).reason).toBe(`no observed action matches "x${A1}"`);
  });
});

describe('more edges', () => {
  it('names a declared action recorded within the clock slack after the report', () => {
    const idx = indexOf({ w_hook: origin('hook'), w_mcp: origin('declared') });
    idx.add(action(A1, 'make x', 130, null, 'w_mcp'));
    expect(claim(idx, 'make x').reason).toContain('a matching action of w_mcp (declared)');
  });

  it('an action whose input names no command is skipped, not matched', () => {
    const idx = indexOf();
    idx.add(ev('agent.action', { id: A1, call_id: null, input: { file_path: 'src/a.ts' } }, 1));
    idx.add(result(A1, { status: 'ok', exit_code: 0 }, 2));
    expect(claim(idx, 'npm test')).toMatchObject({ verdict: 'unsupported', action_id: null });
  });

  it('the meta a writer.start was written with is the one read, whatever else was corrected', () => {
    const idx = new EvidenceIndex();
    idx.add(
      ev(
        'writer.start',
        {
          meta: { agent: 'a', provenance: 'hook' },
          corrected: [{ by: 'e_c1', field: 'redacted', was: { provenance: 'declared' }, reason: 'x' }],
        },
        0,
        'w_a',
      ),
    );
    expect(idx.origin('w_a').provenance).toBe('hook');
  });

  it('a result from a declared writer merged before its observed action is named, alone', () => {
    const idx = indexOf({ w_hook: origin('hook'), w_mcp: origin('declared') });
    idx.add(result(A1, { status: 'ok', exit_code: 0 }, 1, 'w_mcp'));
    idx.add(action(A1, 'npm test', 2));
    expect(claim(idx, 'npm test').reason).toBe(
      `action ${A1} has no observed result; a result from w_mcp (declared) is the agent's own word, which supports nothing`,
    );
  });
});

describe('the matcher', () => {
  it.each([
    'npm test \ntrue',
    'npm test --coverage\ntrue',
    'npm test \rtrue',
    'npm test \vtrue',
    'npm test \ftrue',
    'npm test \u0085true',
    'npm test \u2028true',
    'npm test \u2029true',
    'npm test \\\ntrue',
    'npm test (x)',
    'npm test x)',
    'npm test {x',
    'npm test }',
    'npm test $(x)',
  ])('a space, arguments, then a shell break: %j is not `npm test`', (command) => {
    expect(commandMatch(command, 'npm test')).toBeNull();
  });

  it('ids only in their whole forms', () => {
    expect(isActionId(A1)).toBe(true);
    expect(isActionId(`x${A1}`)).toBe(false);
    expect(isActionId(`${A1}x`)).toBe(false);
    expect(isRuntimeCallId('xtoolu_01')).toBe(false);
    expect(isRuntimeCallId('toolu_01 x')).toBe(false);
  });

  it('trims blanks and newlines at both ends only, and joins an unwrapped argv', () => {
    expect(commandOf({ command: ' \n npm test \n ' })).toBe('npm test');
    expect(commandOf('\tmake  check\t')).toBe('make check');
    expect(commandOf({ cmd: ['npm', 'test\nx\ny'] })).toBe('npm test x y');
    expect(commandOf({ cmd: ['npm', 'test\vx\u2029y'] })).toBe('npm test x y');
    expect(commandOf({ cmd: ['shellcheck', '-c', 'x'] })).toBe('shellcheck -c x');
    expect(commandOf({ cmd: ['bash', '-lcx', 'y'] })).toBe('bash -lcx y');
    expect(commandOf({ cmd: ['bash', 'x-c', 'y'] })).toBe('bash x-c y');
    expect(commandOf({ cmd: ['/bin/sh', '-c', 'a\nb'] })).toBe('a\nb');
    expect(commandOf({ cmd: ['sh', '-c'] })).toBe('sh -c');
    expect(commandOf({ cmd: ['a', 1] })).toBeNull();
    expect(commandOf({ other: 'x' })).toBeNull();
    expect(commandOf(['npm', 'test'])).toBeNull();
    expect(commandOf(null)).toBeNull();
    expect(commandOf(7)).toBeNull();
  });
});
