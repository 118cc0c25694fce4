/**
 * Capture against the real Codex CLI 0.169.0 (issue 11 items 2 and 5): `codex exec` plays a scripted
 * turn against the Responses API stand-in. First with a notify program that only records its argument,
 * compared with test/fixtures/real-client/codex-0.169.0-notify.json; then with hansard's notify
 * installed by `hansard integrations sync` into `$CODEX_HOME/config.toml`, the thread's turn is checked
 * on a real `hansard serve`: the person's prompt, the agent's answer, verify clean.
 */
import { existsSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { ROOT } from './support/clients.js';
import { CODEX_FINAL, CODEX_PROMPT, codexScript, runCodex, writeCodexConfig } from './support/codex.js';
import {
  type CaptureServer,
  hansard,
  ofType,
  readStored,
  requireCapture,
  spooledSessions,
  startCaptureServer,
  waitForSession,
} from './support/hansard.js';
import { type ResponsesStub, startResponsesStub } from './support/responses-stub.js';

let cs: CaptureServer;
const roots: string[] = [];
const stubs: ResponsesStub[] = [];
beforeAll(async () => {
  cs = await startCaptureServer();
});
afterAll(async () => {
  for (const s of stubs) await s.close();
  await cs?.srv.close();
  for (const r of roots) rmSync(r, { recursive: true, force: true });
});

async function sandbox() {
  const home = mkdtempSync(join(tmpdir(), 'hansard-rc-codex-'));
  roots.push(home);
  const stub = await startResponsesStub(codexScript);
  stubs.push(stub);
  return { home, stub, codexHome: join(home, '.codex'), cwd: join(home, 'proj'), state: join(home, 'state') };
}

describe('capture from the real Codex CLI 0.169.0', () => {
  it('notify gets one agent-turn-complete JSON as its last argument, as in the fixture', async () => {
    const { home, stub, codexHome, cwd } = await sandbox();
    const notify = join(home, 'log-notify.sh');
    writeFileSync(
      notify,
      `#!/bin/sh\nfor a; do last="$a"; done\nprintf '%s' "$last" > "${home}/notify-$$.json"\n`,
      {
        mode: 0o755,
      },
    );
    writeCodexConfig(codexHome, stub.baseUrl, [notify]);
    const run = await runCodex({ bin: inject('codexBin'), home, codexHome, cwd });
    expect(run.code, run.stderr).toBe(0);
    expect(run.stdout.trim()).toBe(CODEX_FINAL);
    expect(stub.requests.map((r) => r.path)).toEqual(['/v1/responses', '/v1/responses']);
    // notify runs after the turn, possibly after exec returns: wait a little for its file.
    let files: string[] = [];
    for (let i = 0; i < 40 && files.length === 0; i++) {
      files = readdirSync(home).filter((f) => f.startsWith('notify-'));
      if (files.length === 0) await new Promise((r) => setTimeout(r, 100));
    }
    expect(files).toHaveLength(1);
    const got = JSON.parse(readFileSync(join(home, files[0]!), 'utf8'));
    const fixture = JSON.parse(
      readFileSync(join(ROOT, 'test/fixtures/real-client/codex-0.169.0-notify.json'), 'utf8'),
    );
    expect(Object.keys(got)).toEqual(Object.keys(fixture));
    expect({ ...got, 'thread-id': '<id>', 'turn-id': '<id>', cwd: '<cwd>' }).toEqual({
      ...fixture,
      'thread-id': '<id>',
      'turn-id': '<id>',
      cwd: '<cwd>',
    });
    expect(got.cwd).toBe(cwd);
  });

  it("with hansard's notify installed by integrations sync, the thread's turn is recorded on the server", async () => {
    await requireCapture('codex');
    const { home, stub, codexHome, cwd, state } = await sandbox();
    writeCodexConfig(codexHome, stub.baseUrl);
    const env = { HOME: home, CODEX_HOME: codexHome, HANSARD_STATE_DIR: state };
    const sync = await hansard(['integrations', 'sync', '--url', cs.url, '--token', cs.token], env);
    expect(sync.code, `integrations sync: ${sync.stdout}${sync.stderr}`).toBe(0);
    const config = readFileSync(join(codexHome, 'config.toml'), 'utf8');
    expect(config).toMatch(/^notify = \[.*"hook",\s*"codex"\s*\]$/m);
    // Our provider settings survived the merge.
    expect(config).toContain('wire_api = "responses"');
    const run = await runCodex({
      bin: inject('codexBin'),
      home,
      codexHome,
      cwd,
      env: { HANSARD_STATE_DIR: state },
    });
    expect(run.code, run.stderr).toBe(0);
    expect(run.stdout.trim()).toBe(CODEX_FINAL);
    let sids: string[] = [];
    for (let i = 0; i < 50 && sids.length === 0; i++) {
      sids = spooledSessions(state);
      if (sids.length === 0) await new Promise((r) => setTimeout(r, 100));
    }
    expect(sids, `one spooled session under ${state}/spool`).toHaveLength(1);
    const sid = sids[0]!;
    const shippedByItself = await waitForSession(cs, sid, 10_000);
    const up = await hansard(['upload', join(state, 'spool'), '--json'], {
      ...env,
      HANSARD_URL: cs.url,
      HANSARD_TOKEN: cs.token,
    });
    expect(up.code, `hansard upload: ${up.stdout}${up.stderr}`).toBe(0);
    const stored = await readStored(cs, sid);
    console.info(
      `codex: exec ${run.ms} ms, ${stored.events.length} events, shipped by the hook itself: ${shippedByItself}`,
    );
    const problems = stored.verify.problems.filter((p: { severity: string }) => p.severity !== 'info');
    expect(problems, 'verify of the stored session').toEqual([]);
    expect(ofType(stored, 'message').map((m) => m.text)).toEqual([CODEX_PROMPT]);
    expect(ofType(stored, 'agent.output').map((o) => o.text)).toEqual([CODEX_FINAL]);
    expect(ofType(stored, 'turn.start')).toHaveLength(1);
    expect(ofType(stored, 'turn.end')).toHaveLength(1);
    const failures = join(state, 'hook-failures.json');
    expect(existsSync(failures) ? JSON.parse(readFileSync(failures, 'utf8')).failures : []).toEqual([]);
  });
});
