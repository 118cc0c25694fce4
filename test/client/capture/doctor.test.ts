/**
 * `hansard doctor` (issue 11 item 3) against a real server on loopback (useServer) and real files in a
 * temporary HOME: a healthy setup (made by `hansard integrations sync`) exits 0; each broken thing exits 1
 * with its finding and the command that fixes it; failures older than 7 days are not counted; the token
 * probes write nothing on the server.
 */
import { execFileSync } from 'node:child_process';
import { mkdirSync, readFileSync, rmSync, utimesSync, writeFileSync } from 'node:fs';
import { createServer } from 'node:net';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { beforeAll, describe, expect, it } from 'vitest';
import { runHansard } from '../../support/cli.js';
import { request } from '../../support/http.js';
import { useServer } from '../../support/server.js';
import { tmpDirs } from '../../support/tmp.js';

/** This checkout: the one whose bin/hansard the hooks run. */
const ROOT_DIR = resolve(dirname(fileURLToPath(import.meta.url)), '../../..');

const dirs = tmpDirs('hansard-doctor-');
const srv = useServer({
  tokens: {
    capture: ['ingest', 'report', 'read'],
    narrow: ['ingest', 'read'],
    bound: { scopes: ['ingest', 'report'], session: 's_01JD0000000000000000000000' },
  },
});

interface Finding {
  check: string;
  ok: boolean;
  warn?: boolean;
  message: string;
  fix: string | null;
  details?: Record<string, unknown>;
}

/** A HOME where `integrations sync` installed everything for the capture token. */
async function healthyHome(): Promise<string> {
  const root = dirs.make();
  mkdirSync(join(root, '.claude'));
  mkdirSync(join(root, '.codex'));
  const r = await runHansard(['integrations', 'sync', '--url', srv.url, '--token', srv.tokens.capture], {
    cwd: root,
    env: { HOME: root, HANSARD_STATE_DIR: join(root, 'state') },
  });
  expect(r.code).toBe(0);
  return root;
}

async function doctor(root: string, more: Record<string, string> = {}) {
  const r = await runHansard(['doctor', '--json'], {
    cwd: root,
    env: { HOME: root, HANSARD_STATE_DIR: join(root, 'state'), ...more },
  });
  const report = JSON.parse(r.out) as { ok: boolean; findings: Finding[] };
  const by = Object.fromEntries(report.findings.map((f) => [f.check, f])) as Record<string, Finding>;
  return { code: r.code, report, by, err: r.err };
}

/** The checks that failed. */
const failed = (report: { findings: Finding[] }) => report.findings.filter((f) => !f.ok).map((f) => f.check);

const SID = 's_01JD1111111111111111111111';
const W = 'w_01JD2222222222222222222222';

describe('hansard doctor', () => {
  let healthy: string;
  beforeAll(async () => {
    healthy = await healthyHome();
  });

  it('exits 0 on a healthy setup, every check ✓, and its probes write nothing on the server', async () => {
    const d = await doctor(healthy);
    expect(failed(d.report)).toEqual([]);
    expect(d.code).toBe(0);
    expect(d.by.token!.details).toEqual({ scopes: ['ingest', 'report', 'read'], session_bound: false });
    expect(d.report.findings.map((f) => f.check)).toEqual([
      'server_config',
      'server',
      'token',
      'state_dir',
      'claude_code_hooks',
      'codex_notify',
      'spool',
      'hook_failures',
      'hansard_command',
    ]);
    // an admin token runs every probe (admin, ingest, report, read, board): still nothing stored
    const admin = await doctor(healthy, { HANSARD_TOKEN: srv.admin });
    expect(admin.by.token!.details!.scopes).toEqual(['ingest', 'report', 'read', 'board', 'admin']);
    // It works, and doctor says a narrower token is safer (the capture token gets no such advice).
    expect(admin.by.token!.ok).toBe(true);
    expect(admin.by.token!.message).toContain('it is an admin token');
    expect(admin.by.token!.message).toContain('hansard token create --scopes ingest,report,read');
    expect(d.by.token!.message).not.toContain('admin token');
    const list = await request(srv, 'GET', '/v1/sessions', { token: srv.admin });
    expect(list.json.sessions).toEqual([]);
  });

  it('prints one line per check with ✓/✗ and the fix under a ✗', async () => {
    const root = dirs.make();
    const r = await runHansard(['doctor'], {
      cwd: root,
      env: { HOME: root, HANSARD_STATE_DIR: join(root, 's') },
    });
    expect(r.code).toBe(1);
    expect(r.out).toMatch(/^✗ server_config +no token for the hooks/m);
    expect(r.out).toMatch(/^ {4}fix: hansard integrations sync --url URL --token hns_…$/m);
    expect(r.out).toMatch(/^✓ state_dir +/m);
    expect(r.out).toMatch(/something needs action/);
  });

  it('hansard not on PATH: a warning (!) naming the command the hooks run and npm link, not a failure', async () => {
    const d = await doctor(healthy, { PATH: '/usr/bin:/bin' });
    expect(d.code).toBe(0);
    const f = d.by.hansard_command!;
    expect(f).toMatchObject({ ok: true, warn: true });
    expect(f.message).toContain('hansard is not on PATH');
    expect(f.message).toContain(`${process.execPath} ${join(ROOT_DIR, 'bin', 'hansard')}`);
    expect(f.fix).toContain('npm link');
    const text = await runHansard(['doctor'], {
      cwd: healthy,
      env: { HOME: healthy, HANSARD_STATE_DIR: join(healthy, 'state'), PATH: '/usr/bin:/bin' },
    });
    expect(text.out).toMatch(/^! hansard_command +hansard is not on PATH/m);
    expect(text.out).toMatch(/^ {4}fix: npm link/m);

    // On PATH (an npm link): ✓ naming it, no fix.
    const bin = join(dirs.make(), 'bin');
    mkdirSync(bin);
    writeFileSync(join(bin, 'hansard'), '#!/bin/sh\n', { mode: 0o755 });
    const linked = await doctor(healthy, { PATH: `${bin}:/usr/bin:/bin` });
    expect(linked.by.hansard_command).toMatchObject({ ok: true, fix: null });
    expect(linked.by.hansard_command!.warn).toBeUndefined();
    expect(linked.by.hansard_command!.message).toBe(`hansard on PATH is ${join(bin, 'hansard')}`);
  });

  it('neither Claude Code nor Codex set up: both ✗ (nothing would be captured)', async () => {
    const root = dirs.make();
    const d = await doctor(root, { HANSARD_URL: srv.url, HANSARD_TOKEN: srv.tokens.capture });
    expect(d.code).toBe(1);
    expect(failed(d.report)).toEqual(['claude_code_hooks', 'codex_notify']);
    expect(d.by.claude_code_hooks!.fix).toBe('hansard integrations sync');
  });

  it('no token: server_config ✗ with the sync fix', async () => {
    const root = dirs.make();
    const d = await doctor(root, { HANSARD_URL: srv.url });
    expect(d.code).toBe(1);
    expect(d.by.server_config!.ok).toBe(false);
    expect(d.by.server_config!.fix).toContain('hansard integrations sync');
    expect(d.by.token!.message).toContain('not checked');
  });

  it('server unreachable: server ✗ with the command that starts one', async () => {
    const port = await new Promise<number>((resolve) => {
      const s = createServer().listen(0, '127.0.0.1', () => {
        const p = (s.address() as { port: number }).port;
        s.close(() => resolve(p));
      });
    });
    const d = await doctor(healthy, { HANSARD_URL: `http://127.0.0.1:${port}` });
    expect(d.code).toBe(1);
    expect(d.by.server!.ok).toBe(false);
    expect(d.by.server!.message).toContain('connection refused');
    expect(d.by.server!.fix).toContain('hansard serve');
  });

  it('an unknown token, one lacking report, and one bound to a session: token ✗ with how to make one', async () => {
    const unknown = await doctor(healthy, { HANSARD_TOKEN: `hns_${'z'.repeat(43)}` });
    expect(unknown.code).toBe(1);
    expect(unknown.by.token!.message).toContain('does not work');
    expect(unknown.by.token!.fix).toContain('hansard token create --scopes ingest,report');
    const narrow = await doctor(healthy, { HANSARD_TOKEN: srv.tokens.narrow });
    expect(narrow.code).toBe(1);
    expect(narrow.by.token!.message).toContain('scopes ingest, read');
    expect(narrow.by.token!.details).toEqual({ scopes: ['ingest', 'read'], session_bound: false });
    const bound = await doctor(healthy, { HANSARD_TOKEN: srv.tokens.bound });
    expect(bound.code).toBe(1);
    expect(bound.by.token!.details).toEqual({ scopes: ['ingest', 'report'], session_bound: true });
  });

  it('an unwritable state directory: state_dir ✗ with the fix', async () => {
    const root = dirs.make();
    writeFileSync(join(root, 'file'), '');
    const state = join(root, 'file', 'state');
    const d = await doctor(healthy, {
      HANSARD_STATE_DIR: state,
      HANSARD_URL: srv.url,
      HANSARD_TOKEN: srv.tokens.capture,
    });
    expect(d.code).toBe(1);
    expect(failed(d.report)).toEqual(['state_dir']);
    expect(d.by.state_dir!.message).toContain('ENOTDIR');
    expect(d.by.state_dir!.fix).toContain(`mkdir -p ${state}`);
  });

  it('a read-only state directory (a read-only tmpfs; needs root to mount): state_dir ✗ with EROFS', async (ctx) => {
    const state = join(dirs.make(), 'state');
    mkdirSync(state);
    try {
      execFileSync('mount', ['-t', 'tmpfs', '-o', 'ro,size=1m', 'tmpfs', state], { stdio: 'pipe' });
    } catch {
      ctx.skip(); // mounting is not allowed here
    }
    try {
      const d = await doctor(healthy, {
        HANSARD_STATE_DIR: state,
        HANSARD_URL: srv.url,
        HANSARD_TOKEN: srv.tokens.capture,
      });
      expect(failed(d.report)).toEqual(['state_dir']);
      expect(d.by.state_dir!.message).toContain('EROFS');
    } finally {
      execFileSync('umount', [state]);
    }
  });

  it('Claude Code: a missing event, a command that no longer exists, malformed settings: ✗ with the fix', async () => {
    const root = await healthyHome();
    const path = join(root, '.claude', 'settings.json');
    const good = readFileSync(path, 'utf8');
    const s = JSON.parse(good);
    delete s.hooks.Stop;
    writeFileSync(path, JSON.stringify(s));
    let d = await doctor(root);
    expect(d.code).toBe(1);
    expect(failed(d.report)).toEqual(['claude_code_hooks']);
    expect(d.by.claude_code_hooks!.message).toContain("lacks hansard's hook for Stop");
    expect(d.by.claude_code_hooks!.fix).toBe('hansard integrations sync --only claude-code');

    writeFileSync(path, good.replaceAll(/"[^"]*\/bin\/hansard/g, '"/gone/checkout/bin/hansard'));
    d = await doctor(root);
    expect(d.by.claude_code_hooks!.message).toContain('/gone/checkout/bin/hansard, which no longer exists');

    writeFileSync(path, '{"hooks": ');
    d = await doctor(root);
    expect(d.by.claude_code_hooks!.ok).toBe(false);
    expect(d.by.claude_code_hooks!.message).toContain('not valid JSON');

    rmSync(path);
    d = await doctor(root);
    expect(d.by.claude_code_hooks!.message).toContain('not installed');
    expect(d.by.claude_code_hooks!.fix).toBe('hansard integrations sync');
  });

  it('a project whose settings hold a partial hansard install: ✗ naming the project fix', async () => {
    const root = await healthyHome();
    const project = join(root, 'repo');
    mkdirSync(join(project, '.claude'), { recursive: true });
    writeFileSync(
      join(project, '.claude', 'settings.json'),
      JSON.stringify({
        hooks: { Stop: [{ hooks: [{ type: 'command', command: 'hansard hook claude-code' }] }] },
      }),
    );
    const d = await doctor(project, { HOME: root, HANSARD_STATE_DIR: join(root, 'state') });
    expect(d.code).toBe(1);
    expect(d.by.claude_code_hooks!.message).toContain(
      `${join(project, '.claude', 'settings.json')} lacks hansard's hook for`,
    );
    expect(d.by.claude_code_hooks!.fix).toContain(`hansard integrations sync --project ${project}`);
  });

  it('user and project settings running different hansard commands: ✗ (every event recorded twice)', async () => {
    const root = await healthyHome();
    const project = join(root, 'repo');
    const r = await runHansard(['integrations', 'sync', '--project', project], {
      cwd: root,
      env: { HOME: root, HANSARD_STATE_DIR: join(root, 'state') },
    });
    expect(r.code).toBe(0);
    expect((await doctor(project, { HOME: root, HANSARD_STATE_DIR: join(root, 'state') })).code).toBe(0); // the same command: Claude Code runs it once
    const path = join(project, '.claude', 'settings.json');
    writeFileSync(path, readFileSync(path, 'utf8').replaceAll(' hook claude-code', ' hook  claude-code'));
    const d = await doctor(project, { HOME: root, HANSARD_STATE_DIR: join(root, 'state') });
    expect(d.code).toBe(1);
    expect(d.by.claude_code_hooks!.message).toContain('more than once');
    expect(d.by.claude_code_hooks!.fix).toBe(
      `hansard integrations sync --only claude-code && hansard integrations sync --project ${project}`,
    );
  });

  it("Codex: no notify, or another program's: ✗ with the fix", async () => {
    const root = await healthyHome();
    const path = join(root, '.codex', 'config.toml');
    writeFileSync(path, 'model = "o3"\n');
    let d = await doctor(root);
    expect(d.code).toBe(1);
    expect(failed(d.report)).toEqual(['codex_notify']);
    expect(d.by.codex_notify!.fix).toBe('hansard integrations sync --only codex');
    writeFileSync(path, 'notify = ["/usr/local/bin/ding"]\n');
    d = await doctor(root);
    expect(d.by.codex_notify!.message).toContain('another program');
    expect(d.by.codex_notify!.fix).toBe('hansard integrations sync --only codex --force');
    // no Codex on this machine at all is fine while Claude Code captures
    rmSync(join(root, '.codex'), { recursive: true });
    d = await doctor(root);
    expect(d.by.codex_notify!.ok).toBe(true);
    expect(d.code).toBe(0);
  });

  it('spool backlog: events not shipped for minutes are ✗ with the fix; a session written just now is in flight', async () => {
    const root = await healthyHome();
    const dir = join(root, 'state', 'spool', SID);
    mkdirSync(dir, { recursive: true });
    const seg = join(dir, `${W}.jsonl`);
    writeFileSync(seg, '{"a":1}\n{"a":2}\n{"a":3}\n');
    let d = await doctor(root);
    expect(d.by.spool!.ok).toBe(true);
    expect(d.by.spool!.message).toContain('3 events');
    const old = new Date(Date.now() - 10 * 60 * 1000);
    utimesSync(seg, old, old);
    d = await doctor(root);
    expect(d.code).toBe(1);
    expect(failed(d.report)).toEqual(['spool']);
    expect(d.by.spool!.message).toContain(
      `3 events (24 bytes) of 1 session(s) are not on the server yet: ${SID}`,
    );
    expect(d.by.spool!.fix).toBe('hansard hook ship');
    // shipped.json says the server holds it all: nothing left
    writeFileSync(
      join(root, 'state', 'shipped.json'),
      JSON.stringify({ version: 1, sessions: { [SID]: { [W]: 24 } } }),
    );
    expect((await doctor(root)).code).toBe(0);
  });

  it('hook failures of the last 7 days, grouped by hook with counts and the last reason; older ones not counted', async () => {
    const root = await healthyHome();
    const ago = (h: number) => new Date(Date.now() - h * 3600 * 1000).toISOString();
    const f = (at: string, hook: string, reason: string) => ({
      at,
      hook,
      reason,
      message: `${reason} happened`,
      ms: 10,
    });
    const path = join(root, 'state', 'hook-failures.json');
    writeFileSync(
      path,
      JSON.stringify({ version: 1, failures: [f(ago(8 * 24), 'claude-code:Stop', 'internal')] }),
    );
    let d = await doctor(root);
    expect(d.by.hook_failures!.ok).toBe(true);
    expect(d.code).toBe(0);
    writeFileSync(
      path,
      JSON.stringify({
        version: 1,
        failures: [
          f(ago(8 * 24), 'claude-code:Stop', 'internal'),
          f(ago(50), 'claude-code:PreToolUse', 'timeout'),
          f(ago(2), 'claude-code:PreToolUse', 'bad_input'),
          f(ago(1), 'codex:agent-turn-complete', 'timeout'),
        ],
      }),
    );
    d = await doctor(root);
    expect(d.code).toBe(1);
    expect(failed(d.report)).toEqual(['hook_failures']);
    const hooks = d.by.hook_failures!.details!.hooks as {
      hook: string;
      count: number;
      last_reason: string;
    }[];
    expect(hooks.map((h) => [h.hook, h.count, h.last_reason])).toEqual([
      ['claude-code:PreToolUse', 2, 'bad_input'],
      ['codex:agent-turn-complete', 1, 'timeout'],
    ]);
    expect(d.by.hook_failures!.message).toContain('3 hook failure(s) in the last 7 days');
    expect(d.by.hook_failures!.fix).toContain('hansard integrations sync');
  });
});
