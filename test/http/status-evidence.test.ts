/**
 * Declared evidence checked against the stored transcript, end to end over real HTTP (issue 12 item 2,
 * seed 000 "Read declared evidence"): a session with passing, failing and missing results, a report that
 * claims each kind, and the verdicts in `GET …/status`, `inspect`, the text replay (rows marked Declared)
 * and the board; a claim whose action arrives in a segment uploaded after the report is unsupported, then
 * supported once it is there.
 */
import { mkdirSync, mkdtempSync } from 'node:fs';
import { join } from 'node:path';
import { beforeAll, describe, expect, it } from 'vitest';
import { openSession } from '../../lib/log/index.js';
import { request } from '../support/http.js';
import { readLocal } from '../support/segments.js';
import { useServer } from '../support/server.js';
import { upload } from '../support/stored.js';

const srv = useServer({ tokens: { reader: ['read'], reporter: ['report'], board: ['board'] } });
/** The label `ensureTenant` gives a tenant's first admin token, which uploads the segment here. */
const ADMIN_LABEL = 'bootstrap admin';

/** Ten minutes ago: the actions happened before the report the test makes now. */
const past = (s: number) => (Date.now() - 600_000 + s * 1000) * 1000;

let sid: string;
let wId: string;
const ids: Record<string, string> = {};

function firstWriter() {
  mkdirSync(srv.workDir, { recursive: true });
  const w = openSession(mkdtempSync(join(srv.workDir, 'ev-')), { agent: 'coder' });
  sid = w.sid;
  wId = w.w;
  const m = w.message({ user_id: 'ann', text: 'make the tests pass' }, { at: past(0) });
  const t = w.turnStart({ context_message_ids: [m.id] }, { at: past(1) });
  const run = (name: string, command: string, callId: string, s: number, exit: number | null | 'none') => {
    const a = w.action(
      { turn_id: t.turn_id, tool: 'Bash', input: { command }, call_id: callId },
      { at: past(s) },
    );
    ids[name] = a.id;
    if (exit !== 'none')
      w.actionResult(
        { action_id: a.id, status: exit === 0 ? 'ok' : 'error', exit_code: exit },
        { at: past(s + 1) },
      );
  };
  run('tests', 'npm test', 'toolu_tests', 2, 0);
  run('lint', 'npm run lint', 'toolu_lint', 4, 1);
  run('build', 'npm run build', 'toolu_build', 6, 'none');
  w.close();
  return readLocal({ sid: w.sid, w: w.w, dir: w.dir, path: w.path });
}

const CLAIMS = [
  { kind: 'evidence', evidence: [{ type: 'test', ref: 'npm test', result: 'passed' }] },
  {
    kind: 'evidence',
    evidence: [
      { type: 'command', ref: 'npm run lint', result: 'passed' },
      { type: 'command', ref: 'toolu_build', result: 'completed' },
      { type: 'command', ref: 'cargo test', result: 'exit:0' },
    ],
  },
  { kind: 'decision', evidence: [{ type: 'file', ref: 'src/parser.ts', result: 'modified' }] },
];

const getStatus = () => request(srv, 'GET', `/v1/sessions/${sid}/status`, { token: srv.tokens.reader });
const verdictsOf = (json: { events: { evidence: { ref: string; check: { verdict: string } }[] }[] }) =>
  json.events.flatMap((e) => e.evidence.map((i) => [i.ref, i.check.verdict]));

beforeAll(async () => {
  await upload(srv, srv.admin, firstWriter());
  const a = await request(srv, 'POST', `/v1/sessions/${sid}/status`, {
    token: srv.tokens.reporter,
    json: { state: 'needs_review', note: 'tests pass, lint clean', events: CLAIMS },
  });
  expect(a.status, a.text).toBe(201);
});

describe('a report checked against the transcript', () => {
  it('gives each verdict in GET …/status, with why', async () => {
    const s = await getStatus();
    expect(s.status).toBe(200);
    expect(verdictsOf(s.json)).toEqual([
      ['npm test', 'supported'],
      ['npm run lint', 'unsupported'],
      ['toolu_build', 'unsupported'],
      ['cargo test', 'unsupported'],
      ['src/parser.ts', 'unchecked'],
    ]);
    const checks = s.json.events.flatMap((e: { evidence: { check: object }[] }) =>
      e.evidence.map((i) => i.check),
    );
    expect(checks[0]).toMatchObject({ action_id: ids.tests, matched_by: 'command', exit_code: 0 });
    expect(checks[1]).toMatchObject({
      action_id: ids.lint,
      exit_code: 1,
      reason: `claimed passed; action ${ids.lint} recorded by ${wId} (library): exit code 1`,
      // what the verdict rests on: the writer, who recorded it, and the token that uploaded it
      rests_on: { w: wId, agent: 'coder', provenance: 'library', token_label: ADMIN_LABEL, exit_code: 1 },
    });
    expect(checks[2]).toMatchObject({
      action_id: ids.build,
      reason: `action ${ids.build} has no observed result`,
    });
    expect(checks[3]).toMatchObject({ action_id: null, reason: 'no observed action matches "cargo test"' });
    expect(s.json.evidence).toEqual({ supported: 1, unsupported: 3, unchecked: 1, contested: 0 });
  });

  it('shows them in inspect, apart from what was recorded', async () => {
    const a = await request(srv, 'GET', `/v1/sessions/${sid}/inspect`, { token: srv.tokens.reader });
    expect(a.status).toBe(200);
    expect(a.json.declared).toMatchObject({
      state: 'needs_review',
      reports: 1,
      evidence: { supported: 1, unsupported: 3, unchecked: 1, contested: 0 },
    });
    expect(a.json.declared.unsupported.map((u: { ref: string }) => u.ref)).toEqual([
      'npm run lint',
      'toolu_build',
      'cargo test',
    ]);
    // Declared claims fill no observed field: the recorded actions are the three that ran.
    expect(a.json.actions).toMatchObject({ total: 3, failed: 1 });
  });

  it('marks the report Declared in the text replay, after the events before it', async () => {
    const a = await request(srv, 'GET', `/v1/sessions/${sid}/replay?format=text`, {
      token: srv.tokens.reader,
    });
    expect(a.status).toBe(200);
    const lines = a.text.trimEnd().split('\n');
    const row = lines.findIndex((l) => l.includes('Declared: needs_review'));
    expect(row).toBe(lines.length - 1);
    expect(lines[row]).toMatch(
      / {2}declared {8}status\.report {8}Declared: needs_review "tests pass, lint clean"; /,
    );
    expect(lines[row]).toContain('evidence test "npm test" passed: supported');
    expect(lines[row]).toContain(
      `evidence command "npm run lint" passed: unsupported (claimed passed; action ${ids.lint} recorded by ${wId} (library): exit code 1)`,
    );
    expect(lines[row]).toContain('decision file "src/parser.ts" modified: unchecked');
    // The NDJSON replay is the transcript alone.
    const nd = await request(srv, 'GET', `/v1/sessions/${sid}/replay`, { token: srv.tokens.reader });
    expect(nd.text).not.toContain('Declared');
  });

  it('counts the verdicts on the board', async () => {
    const a = await request(srv, 'GET', '/v1/board', { token: srv.tokens.board });
    const row = a.json.sessions.find((s: { sid: string }) => s.sid === sid);
    expect(row.evidence).toEqual({ supported: 1, unsupported: 3, unchecked: 1, contested: 0 });
  });

  it('turns a claim supported when the segment with its action is uploaded after the report', async () => {
    const w = openSession(join(srv.workDir, 'ev-late', sid), { sid, agent: 'ci' });
    const a = w.action(
      { turn_id: 't_01M8QD44444444444444444444', tool: 'Bash', input: { command: 'cargo test' } },
      {
        at: past(20),
      },
    );
    w.actionResult({ action_id: a.id, status: 'ok', exit_code: 0 }, { at: past(30) });
    w.end({}, { at: past(31) });
    await upload(srv, srv.admin, readLocal({ sid, w: w.w, dir: w.dir, path: w.path }));
    const s = await getStatus();
    expect(verdictsOf(s.json)[3]).toEqual(['cargo test', 'supported']);
    expect(s.json.evidence).toEqual({ supported: 2, unsupported: 2, unchecked: 1, contested: 0 });
    // The board's counts follow (its cache is keyed by the session's bytes).
    const b = await request(srv, 'GET', '/v1/board', { token: srv.tokens.board });
    expect(b.json.sessions.find((x: { sid: string }) => x.sid === sid).evidence.supported).toBe(2);
  });
});
