/**
 * The Claude Code hook heartbeats its session's open work item (issue 13 item 6, seed 004 step 3):
 * `renewSessionLeases` (in the hook: local lease only, at most once per TTL/3, only the hook's session,
 * never a closing item) and `sendDueHeartbeats` (in the shipper) against the real server; then end to end:
 * the real built hook process (SessionStart gives the session and its token, `hansard work start` uses
 * them), a later hook renews the lease and its detached shipper sends the heartbeat.
 */
import { execFileSync } from 'node:child_process';
import { lstatSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { ApiClient } from '../../../lib/client/api/client.js';
import { runShipper } from '../../../lib/client/capture/ship.js';
import { readHookFailures } from '../../../lib/client/capture/state-dir.js';
import { runCli } from '../../../lib/client/cli/main.js';
import { renewSessionLeases, sendDueHeartbeats } from '../../../lib/client/work/hook-heartbeat.js';
import { leasePath, readLease, writePending } from '../../../lib/client/work/local.js';
import { newId } from '../../../lib/log/format/ids.js';
import { request } from '../../support/http.js';
import { useServer } from '../../support/server.js';
import { fixture, runHook, useBuiltCli } from '../capture/helpers.js';

const srv = useServer({
  real: true,
  tokens: { reporter: ['report', 'read'], other: ['report', 'read'], ingestOnly: ['ingest'] },
});
const cli = useBuiltCli('work-hook');

async function work(args: string[], env: Record<string, string>) {
  let out = '';
  let err = '';
  const code = await runCli(['work', ...args], {
    stdout: { write: (s: string | Uint8Array) => (out += String(s)) },
    stderr: { write: (s: string) => (err += s) },
    env: { HANSARD_URL: srv.url, USER: 'priya', ...env },
    cwd: tmpdir(),
  });
  return { code, out, err };
}

async function startIn(state: string, sid: string, token: string, ttl = '15m'): Promise<string> {
  const r = await work(['start', '--mode', 'implementing', '--summary', 'Parser work', '--ttl', ttl], {
    HANSARD_STATE_DIR: state,
    HANSARD_SESSION_ID: sid,
    HANSARD_TOKEN: token,
  });
  expect([r.code, r.err]).toEqual([0, '']);
  return /started (wk_\w{26})/.exec(r.out)![1]!;
}

async function lastHeartbeat(id: string): Promise<string> {
  const r = await request(srv, 'GET', `/v1/work/${id}`, { token: srv.tokens.reporter });
  return r.json.freshness.last_heartbeat_at as string;
}

/** Moves the lease's renewal (and its acknowledgement) `ms` into the past, its expiry unchanged. */
function backdate(state: string, id: string, ms: number): void {
  const l = JSON.parse(readFileSync(leasePath(state, id), 'utf8'));
  const then = new Date(Date.now() - ms).toISOString();
  writeFileSync(leasePath(state, id), JSON.stringify({ ...l, renewed_at: then, sent_at: then }));
}

describe('the hook heartbeats its session’s work items', () => {
  it('renews at most once per TTL/3, only its own session, never a closing item; the shipper half sends each once', async () => {
    const state = mkdtempSync(join(tmpdir(), 'hansard-work-hook-'));
    const [mine, other] = [newId('s'), newId('s')];
    const a = await startIn(state, mine, srv.tokens.reporter);
    const b = await startIn(state, other, srv.tokens.reporter);
    const now = Date.now();
    // Just started: within TTL/3 (5 min of 15), nothing to renew.
    expect(renewSessionLeases(state, mine, now)).toEqual([]);
    expect(renewSessionLeases(state, mine, now + 4 * 60_000)).toEqual([]);
    expect(renewSessionLeases(state, mine, now + 5 * 60_000 + 1000)).toEqual([a]);
    const lease = readLease(state, a, now + 5 * 60_000 + 1000);
    expect(lease.state).toBe('observed');
    // Renewed at that time: again not before another TTL/3.
    expect(renewSessionLeases(state, mine, now + 6 * 60_000)).toEqual([]);

    // The shipper half: the renewed lease goes to the server once; the other session's is not due.
    backdate(state, a, 6 * 60_000);
    expect(renewSessionLeases(state, mine)).toEqual([a]);
    const before = await lastHeartbeat(a);
    const client = new ApiClient({ url: srv.url, token: srv.tokens.reporter, retries: 0 });
    expect(await sendDueHeartbeats(state, client)).toEqual({
      sent: [a],
      forgotten: [],
      refused: [],
      failed: [],
    });
    expect((await lastHeartbeat(a)) > before).toBe(true);
    expect(await sendDueHeartbeats(state, client)).toEqual({
      sent: [],
      forgotten: [],
      refused: [],
      failed: [],
    });

    // A pending stop: closing, not renewed (seed 004 step 6).
    backdate(state, b, 6 * 60_000);
    writePending(state, {
      version: 1,
      op: 'stop',
      work_id: b,
      body: { session: other, system: 'hansard-cli', actor: 'priya', outcome: 'completed' },
      idempotency_key: 'wkop_test-closing',
      created_at: new Date().toISOString(),
    });
    expect(renewSessionLeases(state, other)).toEqual([]);
  });

  it('an item the server says is stopped is forgotten by the shipper half, not renewed again', async () => {
    const state = mkdtempSync(join(tmpdir(), 'hansard-work-hook-'));
    const sid = newId('s');
    const id = await startIn(state, sid, srv.tokens.reporter);
    // Stopped elsewhere (through the API directly): this machine still holds the item.
    const stop = await request(srv, 'POST', `/v1/work/${id}/stop`, {
      token: srv.tokens.reporter,
      json: { session: sid, system: 'hansard-cli', actor: 'priya', outcome: 'completed' },
    });
    expect(stop.status).toBe(200);
    backdate(state, id, 6 * 60_000);
    expect(renewSessionLeases(state, sid)).toEqual([id]);
    const client = new ApiClient({ url: srv.url, token: srv.tokens.reporter, retries: 0 });
    expect(await sendDueHeartbeats(state, client)).toEqual({
      sent: [],
      forgotten: [id],
      refused: [],
      failed: [],
    });
    expect(readLease(state, id).state).toBe('missing');
    expect(renewSessionLeases(state, sid)).toEqual([]);
  });

  it('a heartbeat the shipper cannot send is left due and recorded for doctor (a token without report)', async () => {
    const state = mkdtempSync(join(tmpdir(), 'hansard-work-hook-'));
    const sid = newId('s');
    const id = await startIn(state, sid, srv.tokens.reporter);
    backdate(state, id, 6 * 60_000);
    expect(renewSessionLeases(state, sid)).toEqual([id]);
    await runShipper(state, { HANSARD_URL: srv.url, HANSARD_TOKEN: srv.tokens.ingestOnly });
    const failures = readHookFailures(state).filter((f) => f.message.startsWith('work heartbeat'));
    expect(failures).toHaveLength(1);
    expect(failures[0]).toMatchObject({
      hook: 'shipper',
      message: expect.stringContaining(`work heartbeat of ${id}:`),
    });
    const lease = readLease(state, id);
    expect(lease.state === 'observed' && (lease.lease.sent_at ?? '') < lease.lease.renewed_at).toBe(true);
  });

  it("a heartbeat refused as not the shipper token's (not_owner) is recorded as work_refused and its lease forgotten, as `hansard work heartbeat` does", async () => {
    const state = mkdtempSync(join(tmpdir(), 'hansard-work-hook-'));
    const sid = newId('s');
    const id = await startIn(state, sid, srv.tokens.reporter);
    backdate(state, id, 6 * 60_000);
    expect(renewSessionLeases(state, sid)).toEqual([id]);
    // The hooks' token is another than the one the item was started with.
    await runShipper(state, { HANSARD_URL: srv.url, HANSARD_TOKEN: srv.tokens.other });
    const failures = readHookFailures(state).filter((f) => f.message.startsWith('work heartbeat'));
    expect(failures).toEqual([
      expect.objectContaining({
        hook: 'shipper',
        reason: 'work_refused',
        message: expect.stringContaining(
          `work heartbeat of ${id} refused (not_owner), its lease forgotten here`,
        ),
      }),
    ]);
    expect(readLease(state, id).state).toBe('missing');
    expect(renewSessionLeases(state, sid)).toEqual([]);
  });

  it('a heartbeat refused as naming another actor than the item was started with (work_mismatch) is recorded as work_refused and stays due', async () => {
    const state = mkdtempSync(join(tmpdir(), 'hansard-work-hook-'));
    const sid = newId('s');
    const id = await startIn(state, sid, srv.tokens.reporter);
    // What this machine holds of the item names another actor than the server has.
    const itemFile = leasePath(state, id).replace(/\.lease\.json$/, '.json');
    writeFileSync(
      itemFile,
      JSON.stringify({ ...JSON.parse(readFileSync(itemFile, 'utf8')), actor: 'not-priya' }),
    );
    backdate(state, id, 6 * 60_000);
    expect(renewSessionLeases(state, sid)).toEqual([id]);
    await runShipper(state, { HANSARD_URL: srv.url, HANSARD_TOKEN: srv.tokens.reporter });
    const failures = readHookFailures(state).filter((f) => f.message.startsWith('work heartbeat'));
    expect(failures).toEqual([
      expect.objectContaining({
        reason: 'work_refused',
        message: expect.stringContaining(`work heartbeat of ${id} refused (work_mismatch):`),
      }),
    ]);
    const lease = readLease(state, id);
    expect(lease.state === 'observed' && (lease.lease.sent_at ?? '') < lease.lease.renewed_at).toBe(true);
  });

  it('a lease that is a FIFO is never read: the real hook answers at once and renews it as a regular file', async () => {
    const state = mkdtempSync(join(tmpdir(), 'hansard-work-hook-fifo-'));
    const env = { HANSARD_STATE_DIR: state };
    const first = await runHook(cli.bin, ['claude-code'], fixture('real-client/01-SessionStart.json'), env);
    const sid = /recording this session as (s_[0-9A-Z]{26})/.exec(
      JSON.parse(first.stdout).hookSpecificOutput.additionalContext,
    )![1]!;
    const id = await startIn(state, sid, srv.tokens.reporter);
    rmSync(leasePath(state, id));
    execFileSync('mkfifo', [leasePath(state, id)]);
    const hook = await runHook(
      cli.bin,
      ['claude-code'],
      fixture('real-client/02-UserPromptSubmit.json'),
      env,
      20_000,
    );
    expect(hook).toMatchObject({ code: 0, signal: null });
    expect(hook.ms).toBeLessThan(3_500);
    expect(lstatSync(leasePath(state, id)).isFile()).toBe(true);
    expect(readLease(state, id).state).toBe('observed');
  }, 60_000);

  it('end to end: the real hook renews the lease of the item started with its session token, its shipper sends it', async () => {
    const state = mkdtempSync(join(tmpdir(), 'hansard-work-hook-e2e-'));
    const env = { HANSARD_STATE_DIR: state, HANSARD_URL: srv.url, HANSARD_TOKEN: srv.admin };
    const first = await runHook(cli.bin, ['claude-code'], fixture('real-client/01-SessionStart.json'), env);
    expect(first.code).toBe(0);
    const ctx = JSON.parse(first.stdout).hookSpecificOutput.additionalContext as string;
    const sid = /recording this session as (s_[0-9A-Z]{26})/.exec(ctx)![1]!;
    const token = /--session-token (hns_\S+)/.exec(ctx)![1]!;
    const r = await work(['start', '--mode', 'implementing', '--summary', 'Parser work'], {
      HANSARD_STATE_DIR: state,
      HANSARD_SESSION_ID: sid,
      HANSARD_SESSION_TOKEN: token,
    });
    expect([r.code, r.err]).toEqual([0, '']);
    const id = /started (wk_\w{26})/.exec(r.out)![1]!;
    const started = await lastHeartbeat(id);
    backdate(state, id, 6 * 60_000);

    const hook = await runHook(
      cli.bin,
      ['claude-code'],
      fixture('real-client/02-UserPromptSubmit.json'),
      env,
    );
    expect(hook.code).toBe(0);
    const renewed = readLease(state, id);
    expect(renewed.state).toBe('observed');
    expect(
      Date.now() - Date.parse((renewed as { lease: { renewed_at: string } }).lease.renewed_at),
    ).toBeLessThan(60_000);
    // The detached shipper sends it: wait for the server to see it.
    let seen = started;
    for (let i = 0; i < 100 && seen === started; i++) {
      await new Promise((res) => setTimeout(res, 100));
      seen = await lastHeartbeat(id);
    }
    expect(seen > started).toBe(true);
    const history = (await request(srv, 'GET', `/v1/work/${id}`, { token: srv.tokens.reporter })).json
      .history;
    expect(history.map((h: { op: string }) => h.op)).toEqual(['start']);
  }, 120_000);
});
