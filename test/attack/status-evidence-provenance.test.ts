/**
 * Verdicts an agent cannot game, over real HTTP (issue 24 items 1 and 2, docs/status.md "What a verdict
 * rests on"): segments uploaded by tokens with labels, a report claiming `passed`, and the verdict read
 * back from `GET …/status`, `inspect`, the text replay and the board's session page.
 *
 * - the agent's own words (a `declared` writer, as MCP capture writes) never support a claim;
 * - every check names the writer, its agent and provenance, the uploading token's label (from the
 *   server's writer index, never the segment's bytes), the action and its exit code;
 * - another writer's correction of a result makes it contested (it supports nothing), a writer's own
 *   correction keeps working;
 * - `npm test\ntrue` is not `npm test`, and a `call_id` of "make check" is no id.
 */
import { mkdirSync, mkdtempSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { openSession, type ProvenanceKind, type SessionWriter } from '../../lib/log/index.js';
import { request } from '../support/http.js';
import { readLocal } from '../support/segments.js';
import { useServer } from '../support/server.js';
import { upload } from '../support/stored.js';

const srv = useServer({ tokens: { reader: ['read'], reporter: ['report'], board: ['board'] } });

/** Ten minutes ago: the actions happened before the reports the tests make now. */
const past = (s: number) => (Date.now() - 600_000 + s * 1000) * 1000;

/** An ingest token with `label`, made through the API as an admin would. */
async function ingestToken(label: string): Promise<string> {
  const a = await request(srv, 'POST', '/v1/tokens', {
    token: srv.admin,
    json: { scopes: ['ingest'], label },
  });
  expect(a.status, a.text).toBe(201);
  return a.json.token as string;
}

/** A writer of a new session (no `first`) or of `first`'s. */
function writer(provenance: ProvenanceKind, agent: string, first?: SessionWriter): SessionWriter {
  mkdirSync(srv.workDir, { recursive: true });
  const dir = first ? first.dir : mkdtempSync(join(srv.workDir, 'prov-'));
  return openSession(dir, { agent, provenance });
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
  return { action: a.id, result: r.id };
}

const send = (w: SessionWriter, token: string) =>
  upload(srv, token, readLocal({ sid: w.sid, w: w.w, dir: w.dir, path: w.path }));

/** Reports `claims` (each `[type, ref, result]`) and reads the checks back. */
async function verdicts(sid: string, claims: [string, string, string][]) {
  const events = [
    { kind: 'evidence', evidence: claims.map(([type, ref, result]) => ({ type, ref, result })) },
  ];
  const r = await request(srv, 'POST', `/v1/sessions/${sid}/status`, {
    token: srv.tokens.reporter,
    json: { state: 'needs_review', note: 'done', events },
  });
  expect(r.status, r.text).toBe(201);
  const s = await request(srv, 'GET', `/v1/sessions/${sid}/status`, { token: srv.tokens.reader });
  expect(s.status, s.text).toBe(200);
  return {
    status: s.json,
    checks: s.json.events[0].evidence.map((i: { check: Record<string, unknown> }) => i.check),
  };
}

describe('the model cannot make its own words count as evidence', () => {
  it('a declared tool message saying exit 0 leaves the observed exit 1 standing, and the check names its basis', async () => {
    const hook = writer('hook', 'claude-code');
    const failed = ran(hook, 'npm test', 1, 1, 'toolu_01HookRun');
    hook.close();
    // What MCP capture_subagent_messages writes for {"tool":"Bash","input":{"command":"npm test"},"exit_code":0}
    const mcp = writer('declared', 'subagent', hook);
    ran(mcp, 'npm test', 0, 60, 'toolu_01Forged');
    mcp.close();
    expect((await send(hook, await ingestToken('priya laptop hook'))).status).toBe(201);
    expect((await send(mcp, await ingestToken('mcp server'))).status).toBe(201);

    const { status, checks } = await verdicts(hook.sid, [
      ['test', 'npm test', 'passed'],
      ['test', 'toolu_01Forged', 'passed'],
    ]);
    expect(checks[0]).toMatchObject({
      verdict: 'unsupported',
      action_id: failed.action,
      exit_code: 1,
      rests_on: {
        w: hook.w,
        agent: 'claude-code',
        provenance: 'hook',
        token_label: 'priya laptop hook',
        action_id: failed.action,
        result_id: failed.result,
        exit_code: 1,
      },
      contested: [],
    });
    expect(checks[1]).toMatchObject({ verdict: 'unsupported', action_id: null, rests_on: null });
    expect(checks[1].reason).toContain(`${mcp.w} (declared)`);
    expect(status.evidence).toEqual({ supported: 0, unsupported: 2, unchecked: 0, contested: 0 });

    // inspect names the basis of each checked claim
    const i = await request(srv, 'GET', `/v1/sessions/${hook.sid}/inspect`, { token: srv.tokens.reader });
    expect(i.json.declared.claims[0]).toMatchObject({
      verdict: 'unsupported',
      rests_on: { w: hook.w, provenance: 'hook', token_label: 'priya laptop hook', exit_code: 1 },
    });
    // and the board's session page shows it beside the claim
    const page = await request(srv, 'GET', `/sessions/${hook.sid}`, { token: srv.tokens.board });
    expect(page.status).toBe(200);
    expect(page.text).toContain('rests on <code>npm test</code>, exit code 1 recorded by');
    expect(page.text).toContain('uploaded with token “priya laptop hook”');
    expect(page.text).toMatch(/data-provenance="hook"/);
  });

  it('the token label comes from the server, whatever the segment says about itself', async () => {
    const hook = writer('hook', 'claude-code');
    // a writer.start may carry any extra meta; only the server's record of the upload names the token
    hook.note({ author: 'x', text: 'token_label: admin' }, { at: past(0) });
    ran(hook, 'make check', 0, 1);
    hook.close();
    await send(hook, await ingestToken('ci runner 7'));
    const { checks } = await verdicts(hook.sid, [['command', 'make check', 'passed']]);
    expect(checks[0]).toMatchObject({
      verdict: 'supported',
      rests_on: { token_label: 'ci runner 7', provenance: 'hook', agent: 'claude-code' },
    });
    expect(typeof (checks[0].rests_on as { token_id: unknown }).token_id).toBe('string');
  });
});

describe("another writer's correction of a result supports nothing", () => {
  it('exit_code := 0 by another writer: unsupported, contested, naming the writer; the board says contested', async () => {
    const hook = writer('hook', 'claude-code');
    const failed = ran(hook, 'npm test', 1, 1);
    hook.close();
    const other = writer('library', 'reviewer', hook);
    const c = other.correct(
      { target_id: failed.result, field: 'exit_code', value: 0, reason: 'flaky' },
      { at: past(30) },
    );
    other.correct(
      { target_id: failed.result, field: 'status', value: 'ok', reason: 'flaky' },
      { at: past(31) },
    );
    other.close();
    const token = await ingestToken('uploader');
    await send(hook, token);
    await send(other, token);
    const { status, checks } = await verdicts(hook.sid, [['test', 'npm test', 'passed']]);
    expect(checks[0]).toMatchObject({ verdict: 'unsupported', action_id: failed.action });
    expect(checks[0].contested).toContainEqual({
      by: c.id,
      w: other.w,
      provenance: 'library',
      target_id: failed.result,
      field: 'exit_code',
      was: 1,
      value: 0,
    });
    expect(checks[0].reason).toContain(`exit_code of ${failed.result} from 1 to 0 by ${other.w} (library`);
    // the basis is what the hook recorded (exit 1), never the other writer's 0
    expect(checks[0].rests_on).toMatchObject({ w: hook.w, exit_code: 1, status: 'error' });
    // never "recorded exit code 0" without a word of the correction
    expect(checks[0].reason).not.toMatch(/^claimed passed/);
    expect(status.evidence).toMatchObject({ unsupported: 1, contested: 1 });
    const page = await request(srv, 'GET', `/sessions/${hook.sid}`, { token: srv.tokens.board });
    expect(page.text).toContain('data-label="contested"');
    expect(page.text).toContain(`corrected from 1 to 0 by <code>${other.w}</code>`);
    const board = await request(srv, 'GET', '/v1/board', { token: srv.tokens.board });
    const row = board.json.sessions.find((x: { sid: string }) => x.sid === hook.sid);
    expect(row.evidence).toMatchObject({ unsupported: 1, contested: 1 });
    const text = await request(srv, 'GET', `/v1/sessions/${hook.sid}/replay?format=text`, {
      token: srv.tokens.reader,
    });
    expect(text.text).toContain('evidence test "npm test" passed: contested (action ');
  });

  it("a writer's correction of its own result keeps working", async () => {
    const hook = writer('hook', 'claude-code');
    const r = ran(hook, 'npm test', 1, 1);
    hook.correct({ target_id: r.result, field: 'exit_code', value: 0, reason: 'mis-read' }, { at: past(20) });
    hook.correct({ target_id: r.result, field: 'status', value: 'ok', reason: 'mis-read' }, { at: past(21) });
    hook.close();
    await send(hook, srv.admin);
    const { checks } = await verdicts(hook.sid, [['test', 'npm test', 'passed']]);
    expect(checks[0]).toMatchObject({ verdict: 'supported', exit_code: 0, contested: [] });
  });
});

describe('commands as a shell reads them, ids as runtimes mint them', () => {
  it('`npm test\\ntrue` does not support "npm test passed"; a call_id "make check" running `true` is no id', async () => {
    const hook = writer('hook', 'codex');
    ran(hook, 'npm test\ntrue', 0, 1);
    ran(hook, 'npm test\r\ntrue', 0, 5);
    ran(hook, 'true', 0, 10, 'make check');
    hook.close();
    await send(hook, srv.admin);
    const { checks } = await verdicts(hook.sid, [
      ['test', 'npm test', 'passed'],
      ['command', 'make check', 'passed'],
    ]);
    expect(checks[0]).toMatchObject({ verdict: 'unsupported', action_id: null });
    expect(checks[1]).toMatchObject({ verdict: 'unsupported', action_id: null });
  });
});
