/**
 * Attack (issue 24 items 1 and 2, docs/status.md "What a verdict rests on"): can an agent holding only
 * what an agent holds (its MCP server, a session token with ingest/report/read, the ability to run Bash)
 * make a failed `npm test` read **supported**? Over real HTTP against the server, with segments written
 * by the real library writer and uploaded by tokens minted through the API, the verdict read back from
 * `GET …/status`.
 *
 * Each test is one attempt. An attempt that holds is an ordinary test; one that gives way is kept as
 * `it.skip` with a `FAULT:` comment saying what gives way (the suite stays green, the fault stays
 * written down).
 */
import { mkdirSync, mkdtempSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { openSession, type ProvenanceKind, type SessionWriter } from '../../lib/log/index.js';
import { request } from '../support/http.js';
import { readLocal } from '../support/segments.js';
import { useServer } from '../support/server.js';
import { postChunk, upload } from '../support/stored.js';

const srv = useServer({
  tokens: { reader: ['read'], reporter: ['report'], capture: ['ingest', 'report', 'read'] },
});

/** Ten minutes ago, plus `s` seconds: the actions happened before the reports the tests make now. */
const past = (s: number) => (Date.now() - 600_000 + s * 1000) * 1000;

/** A writer of a new session (no `first`) or of `first`'s. */
function writer(provenance: ProvenanceKind | undefined, agent: string, first?: SessionWriter): SessionWriter {
  mkdirSync(srv.workDir, { recursive: true });
  const dir = first ? first.dir : mkdtempSync(join(srv.workDir, 'forge-'));
  return openSession(dir, { agent, ...(provenance ? { provenance } : {}) });
}

/** A Bash action with its result; the two ids. */
function ran(w: SessionWriter, command: string, exit: number, s: number, callId: string | null = null) {
  const t = w.turnStart({ context_message_ids: null }, { at: past(s) });
  const a = w.action(
    { turn_id: t.turn_id, tool: 'Bash', input: { command }, call_id: callId },
    { at: past(s + 1) },
  );
  const r = w.actionResult(
    { action_id: a.id, status: exit === 0 ? 'ok' : 'error', exit_code: exit },
    { at: past(s + 2) },
  );
  return { action: a.id, result: r.id, turn: t.turn_id };
}

const segOf = (w: SessionWriter) => readLocal({ sid: w.sid, w: w.w, dir: w.dir, path: w.path });
const send = (w: SessionWriter, token: string) => upload(srv, token, segOf(w));

/** The capture token (the hook's shipper) and the agent's session token for `sid`, as the hook mints it. */
async function sessionToken(sid: string, label = 'agent session'): Promise<string> {
  const r = await request(srv, 'POST', `/v1/sessions/${sid}/tokens`, {
    token: srv.tokens.capture,
    json: { scopes: ['ingest', 'report', 'read'], label },
  });
  expect(r.status, r.text).toBe(201);
  return r.json.token as string;
}

/** The hook's writer of a new session: `npm test` exit 1, uploaded by the capture token. */
async function failedUnderHook(): Promise<{ hook: SessionWriter; failed: ReturnType<typeof ran> }> {
  const hook = writer('hook', 'claude-code');
  const failed = ran(hook, 'npm test', 1, 10, 'toolu_01FailedRun');
  await send(hook, srv.tokens.capture);
  return { hook, failed };
}

/** Reports `claims` with `token` and reads the checks back. */
async function verdicts(sid: string, claims: [string, string, string][], token = srv.tokens.reporter) {
  const events = [
    { kind: 'evidence', evidence: claims.map(([type, ref, result]) => ({ type, ref, result })) },
  ];
  const r = await request(srv, 'POST', `/v1/sessions/${sid}/status`, {
    token,
    json: { state: 'needs_review', note: 'done', events },
  });
  expect(r.status, r.text).toBe(201);
  const s = await request(srv, 'GET', `/v1/sessions/${sid}/status`, { token: srv.tokens.reader });
  expect(s.status, s.text).toBe(200);
  return s.json.events[0].evidence.map((i: { check: Record<string, unknown> }) => i.check) as Record<
    string,
    unknown
  >[];
}

/** The library's writer.start line of `w`'s segment with its `"provenance":"…"` replaced by `raw` (JSON). */
function withProvenance(w: SessionWriter, raw: string): string {
  const lines = segOf(w).bytes.toString('utf8').split('\n');
  const replaced = lines[0]!.replace(/"provenance":"[a-z]+"/, raw);
  expect(replaced).not.toBe(lines[0]);
  lines[0] = replaced;
  return lines.join('\n');
}

describe('provenance a writer claims for itself', () => {
  // FAULT: the session token the agent holds (ingest) uploads a new writer whose writer.start says
  // provenance "hook"; its `npm test` exit 0, later than the hook's exit 1, is the last matching observed
  // action, so the claim reads supported. docs/status.md says so ("an ingest token can still upload a
  // segment that claims hook; the token label is how to tell"), but nothing in the verdict tells: the check
  // is `supported` and the label is just another label. A fix needs provenance the server grants, not one
  // the bytes claim: e.g. a token kind or scope for observed writers (the hook's capture token) that a
  // session token minted for the agent never carries, and `hook`/`harness`/`transcript` kept only from such
  // a token (else `unknown`).
  // biome-ignore lint/suspicious/noSkippedTests: a FAULT kept skipped until fixed (see above)
  it.skip('a session token uploading a writer that says provenance hook cannot turn exit 1 into supported', async () => {
    const { hook } = await failedUnderHook();
    const forged = writer('hook', 'claude-code', hook);
    ran(forged, 'npm test', 0, 60, 'toolu_01ForgedRun');
    await send(forged, await sessionToken(hook.sid));
    const [check = {}] = await verdicts(hook.sid, [['test', 'npm test', 'passed']]);
    expect(check).toMatchObject({ verdict: 'unsupported' });
  });

  // Held since mixed_tokens (issue 24.1): a writer with chunks from another token than its first's
  // (a session token minted from it too) counts for nothing.
  it("the agent's session token appending to the hook's own writer cannot make the claim supported", async () => {
    const { hook } = await failedUnderHook();
    const before = segOf(hook).bytes.length;
    // The agent reopens the hook's segment (as fetched or read from the spool) and goes on writing it.
    hook.close();
    const same = openSession(hook.dir, {
      sid: hook.sid,
      writerId: hook.w,
      agent: 'claude-code',
      provenance: 'hook',
    });
    ran(same, 'npm test', 0, 60, 'toolu_01Appended');
    same.close();
    const tail = segOf(same).bytes.subarray(before);
    const a = await postChunk(srv, await sessionToken(hook.sid), hook.sid, hook.w, before, tail);
    expect(a.status, a.text).toBe(201);
    const [check = {}] = await verdicts(hook.sid, [['test', 'npm test', 'passed']]);
    expect(check).toMatchObject({ verdict: 'unsupported' });
  });

  // Held: the appended correction makes the hook writer mixed, so nothing of it counts.
  it("a correction appended to the hook's writer by another token is contested, not the hook's own", async () => {
    const { hook, failed } = await failedUnderHook();
    const before = segOf(hook).bytes.length;
    hook.close();
    const same = openSession(hook.dir, {
      sid: hook.sid,
      writerId: hook.w,
      agent: 'claude-code',
      provenance: 'hook',
    });
    same.correct(
      { target_id: failed.result, field: 'exit_code', value: 0, reason: 'flaky' },
      { at: past(40) },
    );
    same.correct(
      { target_id: failed.result, field: 'status', value: 'ok', reason: 'flaky' },
      { at: past(41) },
    );
    same.close();
    const tail = segOf(same).bytes.subarray(before);
    const a = await postChunk(srv, await sessionToken(hook.sid), hook.sid, hook.w, before, tail);
    expect(a.status, a.text).toBe(201);
    const [check = {}] = await verdicts(hook.sid, [['test', 'npm test', 'passed']]);
    expect(check).toMatchObject({ verdict: 'unsupported' });
  });

  it('provenance in odd forms (upper case, an array, an object, a number, padded) is unknown and counts for nothing', async () => {
    const { hook, failed } = await failedUnderHook();
    const token = await sessionToken(hook.sid);
    for (const meta of [
      '"HOOK"',
      '["hook"]',
      '{"kind":"hook"}',
      '1',
      '" hook"',
      '"hook\\u0000"',
      '"h\\u043eok"',
    ]) {
      const w = writer(undefined, 'claude-code', hook);
      // the library writes a valid writer.start; replace it by one whose meta.provenance is odd
      ran(w, 'npm test', 0, 60 + Math.random());
      w.close();
      const a = await postChunk(srv, token, hook.sid, w.w, 0, withProvenance(w, `"provenance":${meta}`));
      expect(a.status, a.text).toBe(201);
    }
    const [check = {}] = await verdicts(hook.sid, [['test', 'npm test', 'passed']]);
    expect(check).toMatchObject({ verdict: 'unsupported', action_id: failed.action });
  });

  it('duplicate provenance keys read as JSON.parse reads them (the last), by the index and the check alike', async () => {
    const { hook, failed } = await failedUnderHook();
    const w = writer(undefined, 'subagent', hook);
    ran(w, 'npm test', 0, 60);
    w.close();
    // the last key is declared: whoever reads the first would take it for a hook
    const body = withProvenance(w, '"provenance":"hook","provenance":"declared"');
    const a = await postChunk(srv, await sessionToken(hook.sid), hook.sid, w.w, 0, body);
    expect(a.status, a.text).toBe(201);
    const [check = {}] = await verdicts(hook.sid, [['test', 'npm test', 'passed']]);
    expect(check).toMatchObject({ verdict: 'unsupported', action_id: failed.action });
    expect(check.reason).not.toContain(`${w.w} (hook)`);
    const writers = await request(srv, 'GET', `/v1/sessions/${hook.sid}`, { token: srv.tokens.reader });
    expect(JSON.stringify(writers.json)).not.toMatch(new RegExp(`"${w.w}"[^}]*"provenance":"hook"`));
  });

  it('a declared writer whose meta.extra or a later correction of its meta says hook stays declared', async () => {
    const { hook, failed } = await failedUnderHook();
    const token = await sessionToken(hook.sid);
    // meta.extra cannot win over the explicit field (the MCP server's path)
    const extra = openSession(hook.dir, {
      agent: 'subagent',
      provenance: 'declared',
      extra: { provenance: 'hook' },
    });
    ran(extra, 'npm test', 0, 60);
    extra.close();
    await send(extra, token);
    // a correction of its own writer.start's meta, provenance := hook
    const corr = writer('declared', 'subagent', hook);
    ran(corr, 'npm test', 0, 70);
    const start = segOf(corr).bytes.toString('utf8').split('\n')[0]!;
    const startId = JSON.parse(start).id as string;
    corr.correct(
      { target_id: startId, field: 'meta', value: { agent: 'claude-code', provenance: 'hook' }, reason: 'x' },
      { at: past(80) },
    );
    corr.close();
    await send(corr, token);
    const [check = {}] = await verdicts(hook.sid, [['test', 'npm test', 'passed']]);
    expect(check).toMatchObject({ verdict: 'unsupported', action_id: failed.action });
    expect(check.reason).toContain('exit code 1');
  });
});

describe("other writers' results, corrections and ids", () => {
  it("a declared writer's exit-0 result for the hook's action (by its a_ id and by its call id) counts for nothing", async () => {
    const { hook, failed } = await failedUnderHook();
    const d = writer('declared', 'subagent', hook);
    const t = d.turnStart({ context_message_ids: null }, { at: past(50) });
    d.actionResult({ action_id: failed.action, status: 'ok', exit_code: 0 }, { at: past(51) });
    d.actionResult({ action_id: 'toolu_01FailedRun', status: 'ok', exit_code: 0 }, { at: past(52) });
    d.turnEnd({ turn_id: t.turn_id, status: 'completed' }, { at: past(53) });
    d.close();
    await send(d, await sessionToken(hook.sid));
    const checks = await verdicts(hook.sid, [
      ['test', 'npm test', 'passed'],
      ['test', failed.action, 'passed'],
      ['test', 'toolu_01FailedRun', 'passed'],
    ]);
    for (const c of checks) expect(c).toMatchObject({ verdict: 'unsupported', exit_code: 1 });
  });

  it("another observed writer's exit-0 result for the hook's action makes the results conflict: unsupported", async () => {
    const { hook, failed } = await failedUnderHook();
    const lib = writer('library', 'tool', hook);
    const t = lib.turnStart({ context_message_ids: null }, { at: past(50) });
    lib.actionResult({ action_id: failed.action, status: 'ok', exit_code: 0 }, { at: past(51) });
    lib.turnEnd({ turn_id: t.turn_id, status: 'completed' }, { at: past(52) });
    lib.close();
    await send(lib, srv.tokens.capture);
    const [check = {}] = await verdicts(hook.sid, [['test', 'npm test', 'passed']]);
    expect(check).toMatchObject({ verdict: 'unsupported', action_id: failed.action });
    expect(check.reason).toContain('conflicting results');
  });

  it("corrections by another writer of the action's input, call_id, or the result's status, exit_code, action_id are contested", async () => {
    const cases: [string, unknown, 'action' | 'result'][] = [
      ['call_id', 'toolu_01Other', 'action'],
      ['status', 'ok', 'result'],
      ['exit_code', 0, 'result'],
    ];
    for (const [field, value, on] of cases) {
      const { hook, failed } = await failedUnderHook();
      const d = writer('declared', 'subagent', hook);
      d.correct(
        { target_id: on === 'action' ? failed.action : failed.result, field, value, reason: 'x' },
        { at: past(40) },
      );
      if (field === 'status')
        d.correct({ target_id: failed.result, field: 'exit_code', value: 0, reason: 'x' }, { at: past(41) });
      d.close();
      await send(d, await sessionToken(hook.sid));
      const [check = {}] = await verdicts(hook.sid, [['test', 'npm test', 'passed']]);
      expect(check, field).toMatchObject({ verdict: 'unsupported' });
      expect((check.contested as unknown[]).length, field).toBeGreaterThan(0);
    }
  });

  it('a correction moving the failed result to another action leaves the failed action without a result: unsupported', async () => {
    const hook = writer('hook', 'claude-code');
    const failed = ran(hook, 'npm test', 1, 10);
    const other = ran(hook, 'ls', 0, 20);
    await send(hook, srv.tokens.capture);
    const d = writer('declared', 'subagent', hook);
    d.correct(
      { target_id: failed.result, field: 'action_id', value: other.action, reason: 'x' },
      { at: past(40) },
    );
    d.correct(
      { target_id: other.result, field: 'action_id', value: failed.action, reason: 'x' },
      { at: past(41) },
    );
    d.close();
    await send(d, await sessionToken(hook.sid));
    const [check = {}] = await verdicts(hook.sid, [['test', 'npm test', 'passed']]);
    expect(check).toMatchObject({ verdict: 'unsupported', action_id: failed.action });
  });

  // Held: refs match commands as their own writer recorded them; the renamed failed run still answers,
  // contested.
  it("another writer correcting the failed run's command away cannot let an earlier pass support the claim", async () => {
    const hook = writer('hook', 'claude-code');
    ran(hook, 'npm test', 0, 5);
    const failed = ran(hook, 'npm test', 1, 10);
    await send(hook, srv.tokens.capture);
    const d = writer('declared', 'subagent', hook);
    d.correct(
      { target_id: failed.action, field: 'input', value: { command: 'true' }, reason: 'typo' },
      { at: past(40) },
    );
    d.close();
    await send(d, await sessionToken(hook.sid));
    const [check = {}] = await verdicts(hook.sid, [['test', 'npm test', 'passed']]);
    expect(check).toMatchObject({ verdict: 'unsupported' });
  });

  it('without any correction, the last run before the report decides: an earlier pass does not cover a later failure', async () => {
    const hook = writer('hook', 'claude-code');
    ran(hook, 'npm test', 0, 5);
    const failed = ran(hook, 'npm test', 1, 10);
    await send(hook, srv.tokens.capture);
    const [check = {}] = await verdicts(hook.sid, [['test', 'npm test', 'passed']]);
    expect(check).toMatchObject({ verdict: 'unsupported', action_id: failed.action });
  });

  it("a declared action reusing the hook's call id (earlier in time) takes neither the id nor the result", async () => {
    const hook = writer('hook', 'claude-code');
    const d = writer('declared', 'subagent', hook);
    // dated before the hook's run, so it comes first in merged order
    ran(d, 'npm test', 0, 1, 'toolu_01FailedRun');
    d.close();
    const failed = ran(hook, 'npm test', 1, 10, 'toolu_01FailedRun');
    await send(hook, srv.tokens.capture);
    await send(d, await sessionToken(hook.sid));
    const checks = await verdicts(hook.sid, [
      ['test', 'toolu_01FailedRun', 'passed'],
      ['test', 'npm test', 'passed'],
    ]);
    for (const c of checks)
      expect(c).toMatchObject({ verdict: 'unsupported', action_id: failed.action, exit_code: 1 });
  });

  it('an a_ ref naming a passing action of another session does not cross sessions', async () => {
    const other = writer('hook', 'claude-code');
    const passed = ran(other, 'npm test', 0, 10);
    await send(other, srv.tokens.capture);
    const { hook } = await failedUnderHook();
    const [check = {}] = await verdicts(hook.sid, [['test', passed.action, 'passed']]);
    expect(check).toMatchObject({ verdict: 'unsupported', action_id: null });
  });

  it('a declared action dated far in the past or the future changes nothing (clock games)', async () => {
    const { hook, failed } = await failedUnderHook();
    const d = writer('declared', 'subagent', hook);
    const t = d.turnStart({ context_message_ids: null }, { at: past(-86_400 * 365) });
    const a = d.action(
      { turn_id: t.turn_id, tool: 'Bash', input: { command: 'npm test' } },
      { at: past(-86_400 * 365) },
    );
    d.actionResult({ action_id: a.id, status: 'ok', exit_code: 0 }, { at: past(86_400 * 365) });
    d.close();
    await send(d, await sessionToken(hook.sid));
    const [check = {}] = await verdicts(hook.sid, [['test', 'npm test', 'passed']]);
    expect(check).toMatchObject({ verdict: 'unsupported', action_id: failed.action, exit_code: 1 });
  });

  // Held: a ref mixing look-alike characters into an ASCII word is refused at the report (400).
  it('a look-alike ref (Cyrillic р in npm) does not read as a supported npm test', async () => {
    const { hook } = await failedUnderHook();
    const more = openSession(hook.dir, { agent: 'claude-code', provenance: 'hook' });
    ran(more, 'n\u0440m test', 0, 30);
    more.close();
    await send(more, srv.tokens.capture);
    const r = await request(srv, 'POST', `/v1/sessions/${hook.sid}/status`, {
      token: srv.tokens.reporter,
      json: {
        state: 'done',
        events: [{ kind: 'evidence', evidence: [{ type: 'test', ref: 'n\u0440m test', result: 'passed' }] }],
      },
    });
    expect(r.status, r.text).toBe(400);
    expect(r.text).toContain('U+0440 in \\"nрm\\" looks like \\"p\\"');
  });
});
