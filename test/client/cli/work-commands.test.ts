/**
 * `hansard work …` against the real server of `hansard serve` (issue 13 item 1, seed 004): start,
 * heartbeat (with the TTL/3 warning), checkpoint, wait, stop and status, each checked on the server's own
 * answer (GET /v1/work/{id}: history, freshness) and on the files this machine keeps in
 * HANSARD_STATE_DIR/work; the server's refusals (content rule, another session) shown with exit 2.
 */
import { existsSync, mkdtempSync, readdirSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { runCli } from '../../../lib/client/cli/main.js';
import { newId } from '../../../lib/log/format/ids.js';
import { request } from '../../support/http.js';
import { useServer } from '../../support/server.js';

const SID = newId('s');
const OTHER = newId('s');
const srv = useServer({
  real: true,
  tokens: {
    reporter: ['report', 'read'],
    bound: { scopes: ['report', 'read'], session: SID },
  },
});

type Run = { code: number; out: string; err: string };

/** Runs `hansard work …` in this process with its own state directory. */
async function work(args: string[], env: Record<string, string | undefined>): Promise<Run> {
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

function stateEnv(): {
  HANSARD_STATE_DIR: string;
  HANSARD_SESSION_ID: string;
  HANSARD_SESSION_TOKEN: string;
} {
  return {
    HANSARD_STATE_DIR: mkdtempSync(join(tmpdir(), 'hansard-work-')),
    HANSARD_SESSION_ID: SID,
    HANSARD_SESSION_TOKEN: srv.tokens.bound,
  };
}

async function onServer(id: string) {
  const r = await request(srv, 'GET', `/v1/work/${id}`, { token: srv.tokens.reporter });
  expect(r.status).toBe(200);
  return r.json as {
    state: string;
    mode: string;
    summary: string;
    outcome: string | null;
    waiting_on: { dependency: { kind: string; ref?: string }; reason: string } | null;
    freshness: { shown: string; last_heartbeat_at: string };
    history: { op: string }[];
  };
}

async function started(env: Record<string, string>, extra: string[] = []): Promise<string> {
  const r = await work(
    ['start', '--mode', 'implementing', '--summary', 'Parser error recovery', ...extra],
    env,
  );
  expect(r.err).toBe('');
  expect(r.code).toBe(0);
  const id = /started (wk_[0-9A-Z]{26})/.exec(r.out)?.[1];
  expect(id).toBeDefined();
  return id!;
}

describe('hansard work against the real server', () => {
  it('start stores the item (observed, one start in its history) and keeps its item and lease files here', async () => {
    const env = stateEnv();
    const id = await started(env, ['--subject', 'thread:issue-13', '--ttl', '10m']);
    const v = await onServer(id);
    expect(v.freshness.shown).toBe('observed');
    expect(v.history.map((h) => h.op)).toEqual(['start']);
    expect(readdirSync(join(env.HANSARD_STATE_DIR, 'work')).sort()).toEqual([
      `${id}.json`,
      `${id}.lease.json`,
    ]);
    const s = await work(['status'], env);
    expect(s.code).toBe(0);
    expect(s.out).toContain(`${id}  implementing  "Parser error recovery"  observed; last reported start`);
  });

  it('heartbeat renews the lease with no history entry; warns when the interval is longer than TTL/3', async () => {
    const env = stateEnv();
    const id = await started(env, ['--ttl', '15m']);
    const before = (await onServer(id)).freshness.last_heartbeat_at;
    const slow = await work(['heartbeat', '--interval', '6m'], env);
    expect(slow.code).toBe(0);
    expect(slow.err).toMatch(/warning: a heartbeat every 6m is longer than a third of the 15m lease \(5m\)/);
    const fine = await work(['heartbeat', id, '--interval', '5m'], env);
    expect(fine.code).toBe(0);
    expect(fine.err).toBe('');
    expect(fine.out).toMatch(new RegExp(`^${id}: observed, lease renewed until `));
    const v = await onServer(id);
    expect(v.history.map((h) => h.op)).toEqual(['start']);
    expect(v.freshness.last_heartbeat_at >= before).toBe(true);
    // A shorter TTL on the heartbeat moves the threshold with it.
    const short = await work(['heartbeat', id, '--ttl', '3m', '--interval', '90s'], env);
    expect(short.err).toMatch(/longer than a third of the 3m lease \(1m\)/);
  });

  it('checkpoint, wait and stop are recorded once each, in order; stop forgets the item here', async () => {
    const env = stateEnv();
    const id = await started(env);
    const cp = await work(
      ['checkpoint', id, '--mode', 'testing', '--summary', 'Running the parser suite'],
      env,
    );
    expect([cp.code, cp.err]).toEqual([0, '']);
    expect(cp.out).toBe(`checkpoint recorded for ${id}: testing\n`);
    const w = await work(['wait', id, '--on', 'review:PR-12', '--reason', 'Needs a maintainer review'], env);
    expect([w.code, w.err]).toEqual([0, '']);
    let v = await onServer(id);
    expect(v.state).toBe('waiting');
    expect(v.waiting_on).toMatchObject({
      dependency: { kind: 'review', ref: 'PR-12' },
      reason: 'Needs a maintainer review',
    });
    const st = await work(['stop', id, '--completed', '--summary', 'Parser recovers from errors'], env);
    expect([st.code, st.err, st.out]).toEqual([0, '', `stopped ${id} (completed)\n`]);
    v = await onServer(id);
    expect(v.state).toBe('stopped');
    expect(v.outcome).toBe('completed');
    expect(v.history.map((h) => h.op)).toEqual(['start', 'checkpoint', 'wait', 'stop']);
    expect(existsSync(join(env.HANSARD_STATE_DIR, 'work', `${id}.json`))).toBe(false);
    const s = await work(['status', '--json'], env);
    const rows = JSON.parse(s.out).items as { id: string; shown: string; freshness: string }[];
    expect(rows.find((r) => r.id === id)).toMatchObject({ shown: 'stopped' });
    expect(rows.find((r) => r.id === id)?.freshness).toMatch(/^stopped \(completed\)/);
    // A write to a stopped item is refused by the server, shown, exit 2; nothing is left pending.
    const again = await work(['checkpoint', id, '--summary', 'One more thing'], env);
    expect(again.code).toBe(2);
    expect(again.err).toMatch(/the server refused the checkpoint of wk_\w+: .* \(409 work_stopped\)/);
    expect(readdirSync(join(env.HANSARD_STATE_DIR, 'work')).filter((f) => f.includes('pending'))).toEqual([]);
  });

  it('a summary breaking a content rule is refused naming the rule, nothing pending, nothing stored', async () => {
    const env = stateEnv();
    const r = await work(
      ['start', '--mode', 'implementing', '--summary', 'Editing /home/priya/src/parser.ts'],
      env,
    );
    expect(r.code).toBe(2);
    expect(r.err).toMatch(/\(422 content_rule\) \(field summary, rule absolute_path\)/);
    expect(r.err).toContain('nothing was stored');
    expect(readdirSync(join(env.HANSARD_STATE_DIR, 'work'))).toEqual([]);
    const list = await request(srv, 'GET', `/v1/work?session=${SID}`, { token: srv.tokens.reporter });
    expect(JSON.stringify(list.json)).not.toContain('/home/priya');
  });

  it('another session cannot change the item: 403 not_owner, exit 2', async () => {
    const env = stateEnv();
    const id = await started(env);
    const other = { ...env, HANSARD_SESSION_TOKEN: undefined, HANSARD_TOKEN: srv.tokens.reporter };
    const r = await work(['checkpoint', id, '--session', OTHER, '--summary', 'Taking it over'], other);
    expect(r.code).toBe(2);
    expect(r.err).toMatch(/\(403 not_owner\)/);
    expect((await onServer(id)).history.map((h) => h.op)).toEqual(['start']);
  });

  it('status with a session-bound token shows an item of another session from this machine, and goes on', async () => {
    const env = stateEnv();
    const mine = await started(env);
    const unbound = { ...env, HANSARD_SESSION_TOKEN: undefined, HANSARD_TOKEN: srv.tokens.reporter };
    const o = await work(
      ['start', '--session', OTHER, '--mode', 'testing', '--summary', 'Other work'],
      unbound,
    );
    const theirs = /started (wk_\w{26})/.exec(o.out)![1]!;
    const s = await work(['status'], { ...env, HANSARD_SESSION_ID: undefined });
    expect(s.code).toBe(0);
    expect(s.err).toMatch(new RegExp(`^hansard: ${OTHER}: .*\\(40[34] \\w+\\); shown from this machine\n$`));
    expect(s.out).toContain(`${mine}  implementing  "Parser error recovery"  observed; last reported start`);
    expect(s.out).toContain(`${theirs}  testing  "Other work"  observed on this machine (lease until `);
  });

  it('usage mistakes are refused before anything is written (exit 2)', async () => {
    const env = stateEnv();
    const none = await work(['heartbeat'], env);
    expect(none.code).toBe(2);
    expect(none.err).toContain('no open work item on this machine');
    const both = await work(['stop', newId('s').replace('s_', 'wk_'), '--completed', '--paused'], env);
    expect(both.code).toBe(2);
    const ttl = await work(['start', '--mode', 'implementing', '--summary', 'x', '--ttl', '30s'], env);
    expect(ttl.code).toBe(2);
    expect(ttl.err).toContain('a TTL is at least 60 seconds');
    expect(existsSync(join(env.HANSARD_STATE_DIR, 'work'))).toBe(false);
  });

  it('never says idle', async () => {
    const env = stateEnv();
    const id = await started(env);
    for (const args of [['status'], ['status', '--json'], ['heartbeat', id]]) {
      const r = await work(args, env);
      expect(`${r.out}${r.err}`).not.toMatch(/idle/i);
    }
  });
});
