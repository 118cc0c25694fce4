/**
 * The command lines `hansard integrations sync` installs really run (issue 11 items 3 and 4): the CLI is
 * built from the current source (test/client/capture/helpers.ts useBuiltCli), sync writes Claude Code's settings
 * and Codex's config in a temporary HOME, and the test runs each installed command as the clients do
 * (Claude Code: through a shell, the payload on stdin; Codex: the argv with the event JSON appended), with
 * an empty PATH, so nothing depends on where `node` or `hansard` are on it. The events reach a real
 * server, and `hansard doctor` from the same build then exits 0.
 */
import { spawn } from 'node:child_process';
import { mkdirSync, readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { parse } from '@decimalturn/toml-patch';
import { describe, expect, it } from 'vitest';
import { request } from '../../support/http.js';
import { useServer } from '../../support/server.js';
import { tmpDirs } from '../../support/tmp.js';
import { fixture, spoolSessions, useBuiltCli } from './helpers.js';

const cli = useBuiltCli('integrations-e2e');
const srv = useServer({ tokens: { capture: ['ingest', 'report', 'read'] } });
const dirs = tmpDirs('hansard-integrations-e2e-');

const CLAUDE_FIXTURES = readdirSync(join(__dirname, '../../fixtures/real-client'))
  .filter((f) => /^\d\d-.*\.json$/.test(f))
  .sort();

/** Runs a process to its end without blocking this one (the server answers from this process). */
function run(
  cmd: string,
  args: string[],
  opts: { env: NodeJS.ProcessEnv; input?: string },
): Promise<{ status: number | null; stdout: string; stderr: string }> {
  const child = spawn(cmd, args, { env: opts.env, stdio: ['pipe', 'pipe', 'pipe'] });
  let stdout = '';
  let stderr = '';
  child.stdout.setEncoding('utf8').on('data', (t: string) => (stdout += t));
  child.stderr.setEncoding('utf8').on('data', (t: string) => (stderr += t));
  child.stdin.end(opts.input ?? '');
  return new Promise((done) => child.on('close', (status) => done({ status, stdout, stderr })));
}

describe('the installed hook commands run', () => {
  it('sync, then every real-client payload through the installed commands, then doctor: all ✓', async () => {
    const home = dirs.make();
    mkdirSync(join(home, '.claude'));
    mkdirSync(join(home, '.codex'));
    const env = { HOME: home, HANSARD_STATE_DIR: join(home, 'state') };
    const sync = await run(
      process.execPath,
      [cli.bin, 'integrations', 'sync', '--url', srv.url, '--token', srv.tokens.capture],
      { env },
    );
    expect(sync.stderr).toBe('');
    expect(sync.status).toBe(0);

    const settings = JSON.parse(readFileSync(join(home, '.claude', 'settings.json'), 'utf8'));
    for (const name of CLAUDE_FIXTURES) {
      const payload = fixture(`real-client/${name}`);
      const event = JSON.parse(payload).hook_event_name as string;
      const command = settings.hooks[event][0].hooks[0].command as string;
      expect(command).toContain(cli.bin);
      // as Claude Code runs it: a shell command line, the payload on stdin; no PATH to lean on
      const hook = await run('/bin/sh', ['-c', command], { input: payload, env: { ...env, PATH: '' } });
      expect({ name, status: hook.status, stderr: hook.stderr }).toEqual({ name, status: 0, stderr: '' });
    }
    const notify = parse(readFileSync(join(home, '.codex', 'config.toml'), 'utf8')).notify as string[];
    const payload = fixture('real-client/codex-0.169.0-notify.json').trim();
    const codex = await run(notify[0]!, [...notify.slice(1), payload], { env: { ...env, PATH: '' } });
    expect({ status: codex.status, stderr: codex.stderr }).toEqual({ status: 0, stderr: '' });
    expect(spoolSessions(env.HANSARD_STATE_DIR)).toHaveLength(2);

    // ship what the detached shippers have not sent yet, then ask doctor
    expect((await run(process.execPath, [cli.bin, 'hook', 'ship'], { env })).status).toBe(0);
    const doctor = await run(process.execPath, [cli.bin, 'doctor', '--json'], { env });
    const report = JSON.parse(doctor.stdout) as { ok: boolean; findings: { check: string; ok: boolean }[] };
    expect(report.findings.filter((f) => !f.ok)).toEqual([]);
    expect(doctor.status).toBe(0);
    const sessions = await request(srv, 'GET', '/v1/sessions', { token: srv.tokens.capture });
    expect(sessions.json.sessions).toHaveLength(2);
  }, 60_000);
});
