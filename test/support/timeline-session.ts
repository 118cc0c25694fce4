/**
 * A synthetic 50-row session holding every row kind of the board's timeline (issue 14.3), written by the
 * real library writer and stored through the real app: two writers (agents) and two people; turns with
 * actions, results with exit codes (one failing, one corrected from exit 1 to exit 2), durations, a long
 * output cut at 2 KB; attribution to a person's message (recorded context), contested between two people,
 * cascaded, recorded to a message that is not in the session (a verify `dangling_reference`) and to none;
 * a note and a correction; a quarantined line (JSON cut in the middle, verify `truncated_line`) appended raw; and an agent's status report with
 * a supported and an unsupported claim, made between the events (so its Declared row sits among them).
 * Markup in an agent's name, a message, a note and a status note checks the escaping.
 */
import { appendFileSync, readFileSync } from 'node:fs';
import { expect } from 'vitest';
import { openSession } from '../../lib/log/index.js';
import { request } from './http.js';

/** Markup a writer put in places the page shows: it must show as text. */
export const HOSTILE = {
  agent: 'fixer <b>bot</b>',
  message: "The payments worker is down <script>alert('x')</script>, please restart it",
  note: '<img src=x onerror=alert(1)> looks fine\nsecond line',
  statusNote: 'ready for <i>review</i>',
} as const;

/** The stored session: its id, writers and the ids of the events the tests look for. */
/** Every row kind the stored session holds (the tests check each is shown). */
export const FIXTURE_KINDS = [
  'writer_start',
  'writer_end',
  'join',
  'leave',
  'message',
  'turn_start',
  'turn_end',
  'action',
  'result',
  'output',
  'note',
  'correction',
  'declared',
  'quarantined',
] as const;

export interface TimelineSession {
  sid: string;
  /** writer A (agent `HOSTILE.agent`) and writer B (agent `reviewer`) */
  wa: string;
  wb: string;
  ids: {
    m1: string;
    m4: string;
    failing: string;
    failingResult: string;
    corrected: string;
    correction: string;
    contested: string;
    cascade: string;
    dangling: string;
    declaredBefore: string;
  };
  /** the quarantined line's number in writer B's segment */
  quarantinedLine: number;
  /** rows the timeline has: events, the quarantined line and the declared report */
  rows: number;
}

const S = 1_000_000;

/**
 * Writes the session under `root`, uploads both segments with `admin` (one chunk each) and posts the
 * status report with `reporter` (scope report), on the server at `srv.url`.
 */
export async function storeTimelineSession(
  srv: { url: string },
  root: string,
  admin: string,
  reporter: string,
): Promise<TimelineSession> {
  // The first part of the session is recorded before the report (made now), the rest after it.
  const now = Date.now() * 1000;
  let at = now - 600 * S;
  const step = (s = 1) => {
    at += s * S;
    return { at };
  };
  // A minute of slack: the report is made once both segments are uploaded.
  const later = (s: number) => ({ at: now + (60 + s) * S });
  const clock = { clock: () => at };
  const A = openSession(root, { agent: HOSTILE.agent, host: 'ci-1', pid: 1 }, clock);
  const B = openSession(root, { sid: A.sid, agent: 'reviewer', host: 'ci-2', pid: 2 }, clock);
  // A: a turn answering priya's message, with a passing, a long, a failing and an edit action.
  B.participantJoin({ user_id: 'priya', display_name: 'Priya' }, step());
  const m1 = B.message({ user_id: 'priya', text: HOSTILE.message }, step());
  const t1 = A.turnStart({ context_message_ids: [m1.id] }, step());
  const a1 = A.action(
    { turn_id: t1.id, tool: 'bash', input: { command: 'systemctl restart payments' } },
    step(),
  );
  A.actionResult({ action_id: a1.id, status: 'ok', output: 'restarted', exit_code: 0 }, step(2));
  const a2 = A.action({ turn_id: t1.id, tool: 'bash', input: { command: 'npm test' } }, step());
  A.actionResult({ action_id: a2.id, status: 'ok', output: 'ok 1\n'.repeat(600), exit_code: 0 }, step(3));
  const a3 = A.action({ turn_id: t1.id, tool: 'bash', input: { command: 'npm run lint' } }, step());
  const r3 = A.actionResult(
    { action_id: a3.id, status: 'error', output: 'src/a.ts: 3 problems', error: 'lint failed', exit_code: 1 },
    step(),
  );
  const a4 = A.action(
    {
      turn_id: t1.id,
      tool: 'Edit',
      input: { file_path: 'src/payments.ts', old_string: 'a', new_string: 'b' },
    },
    step(),
  );
  A.actionResult({ action_id: a4.id, status: 'ok', output: null, exit_code: null }, step());
  A.output({ turn_id: t1.id, text: 'Restarted. Lint fails on one file.' }, step());
  A.turnEnd({ turn_id: t1.id, status: 'completed' }, step());
  // Two people write before A's next turn: its actions are contested; the second cascades.
  B.participantJoin({ user_id: 'sam', display_name: 'Sam' }, step());
  B.message({ user_id: 'sam', text: 'Check the lint errors too' }, step());
  B.message({ user_id: 'priya', text: 'And the flaky test' }, step());
  const t2 = A.turnStart({}, step());
  const a5 = A.action({ turn_id: t2.id, tool: 'Read', input: { file_path: 'src/lint.ts' } }, step());
  A.actionResult({ action_id: a5.id, status: 'ok', output: 'export const x = 1;', exit_code: null }, step());
  const a6 = A.action({ turn_id: t2.id, tool: 'bash', input: { command: 'eslint --fix src' } }, step());
  A.actionResult({ action_id: a6.id, status: 'ok', output: 'fixed', exit_code: 0 }, step());
  A.output({ turn_id: t2.id, text: 'Fixed the lint problems.' }, step());
  A.turnEnd({ turn_id: t2.id, status: 'completed' }, step());
  // B notes, corrects the lint result's exit code, and then a line of B's is torn (appended raw).
  B.note({ author: 'reviewer', text: HOSTILE.note }, step());
  const corr = B.correct(
    { target_id: r3.id, field: 'exit_code', value: 2, reason: 'the runner exits 2 on lint errors' },
    step(),
  );
  appendFileSync(B.path, `{"v":3,"sid":"${A.sid}","type":"message","text":"torn <b>half\n`);
  const quarantinedLine = readFileSync(B.path, 'utf8').trimEnd().split('\n').length;
  const before = B.note({ author: 'reviewer', text: 'the report comes after this note' }, step());
  // After the report: a turn with an empty recorded context, an output caused by a missing message,
  // a failing deploy answering sam, the end.
  const m4 = B.message({ user_id: 'sam', text: 'Thanks, ship it' }, later(1));
  const t3 = A.turnStart({ context_message_ids: [] }, later(2));
  const a7 = A.action({ turn_id: t3.id, tool: 'bash', input: { command: 'git commit -am fix' } }, later(3));
  A.actionResult({ action_id: a7.id, status: 'ok', output: '[main 1a2b3c] fix', exit_code: 0 }, later(4));
  const dangling = A.output(
    { turn_id: t3.id, text: 'Committed.', caused_by: ['m_01JNOTINTHISSESSION000000'] },
    later(5),
  );
  A.turnEnd({ turn_id: t3.id, status: 'completed' }, later(6));
  const t4 = A.turnStart({ context_message_ids: [m4.id] }, later(7));
  const a8 = A.action(
    { turn_id: t4.id, tool: 'bash', input: { command: './deploy.sh production' } },
    later(8),
  );
  const r8 = A.actionResult(
    { action_id: a8.id, status: 'error', output: '', error: './deploy.sh: not found', exit_code: 127 },
    later(9),
  );
  A.output({ turn_id: t4.id, text: 'The deploy failed: the script is missing.' }, later(10));
  A.turnEnd({ turn_id: t4.id, status: 'failed' }, later(11));
  for (let i = 0; i < 6; i++) B.note({ author: 'reviewer', text: `checked item ${i + 1}` }, later(12 + i));
  B.participantLeave({ user_id: 'sam' }, later(20));
  A.end({ reason: 'done' }, later(21));
  B.end({ reason: 'done' }, later(22));

  for (const w of [A, B]) {
    const a = await request(srv, 'POST', `/v1/sessions/${A.sid}/writers/${w.w}/chunks?offset=0`, {
      token: admin,
      body: readFileSync(w.path),
    });
    expect(a.status, a.text).toBe(201);
  }
  const st = await request(srv, 'POST', `/v1/sessions/${A.sid}/status`, {
    token: reporter,
    json: {
      state: 'needs_review',
      note: HOSTILE.statusNote,
      events: [
        {
          kind: 'evidence',
          evidence: [
            { type: 'command', ref: 'npm test', result: 'passed' },
            { type: 'command', ref: 'npm run lint', result: 'passed' },
          ],
        },
      ],
    },
  });
  expect(st.status, st.text).toBe(201);
  const lines = (p: string) => readFileSync(p, 'utf8').trimEnd().split('\n').length;
  return {
    sid: A.sid,
    wa: A.w,
    wb: B.w,
    ids: {
      m1: m1.id,
      m4: m4.id,
      failing: a8.id,
      failingResult: r8.id,
      corrected: r3.id,
      correction: corr.id,
      contested: a5.id,
      cascade: a6.id,
      dangling: dangling.id,
      declaredBefore: before.id,
    },
    quarantinedLine,
    // every line of both segments is a row (the quarantined one too), plus the one declared report
    rows: lines(A.path) + lines(B.path) + 1,
  };
}
