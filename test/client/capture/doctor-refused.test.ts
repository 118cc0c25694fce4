/**
 * `hansard doctor` after SessionStart's session-token request was refused (the new-user trial of issues
 * 24/25): the real built hook, its HANSARD_URL at a loopback server that answers 404 to everything (not a
 * hansard server), then `hansard doctor` with the hooks' configured server (a real one). A 404 is not
 * "unreachable": it is recorded and shown as `server_refused`, its status without a stray space, and the
 * fix names the server that refused (not the configured one) and what a 404 there means. A record written
 * before the kind existed (`server_unreachable`, "(404 )") reads the same way.
 */
import { mkdirSync, rmSync, writeFileSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { readHookFailures } from '../../../lib/client/capture/state-dir.js';
import { runHansard } from '../../support/cli.js';
import { useServer } from '../../support/server.js';
import { tmpDirs } from '../../support/tmp.js';
import { fixture, runHook, useBuiltCli } from './helpers.js';

const cli = useBuiltCli('doctor-refused');
const dirs = tmpDirs('hansard-doctor-refused-');
const srv = useServer({ tokens: { capture: ['ingest', 'report', 'read'] } });

/** Something on loopback that is not a hansard server: 404, plain text, to every request. */
let other: Server;
let otherUrl = '';
beforeAll(async () => {
  other = createServer((req, res) => {
    req.resume();
    res.writeHead(404, { 'content-type': 'text/plain' }).end('Not Found');
  });
  await new Promise<void>((resolve) => other.listen(0, '127.0.0.1', () => resolve()));
  otherUrl = `http://127.0.0.1:${(other.address() as AddressInfo).port}`;
});
afterAll(async () => {
  other.closeAllConnections();
  await new Promise<void>((resolve) => other.close(() => resolve()));
});

interface Finding {
  check: string;
  ok: boolean;
  message: string;
  fix: string | null;
}

/** A HOME where `integrations sync` installed everything for the capture token of the real server. */
async function healthyHome(): Promise<string> {
  const root = dirs.make();
  mkdirSync(join(root, '.claude'));
  const r = await runHansard(['integrations', 'sync', '--url', srv.url, '--token', srv.tokens.capture], {
    cwd: root,
    env: { HOME: root, HANSARD_STATE_DIR: join(root, 'state') },
  });
  expect(r.code).toBe(0);
  return root;
}

async function failuresFinding(root: string): Promise<Finding> {
  const r = await runHansard(['doctor', '--json'], {
    cwd: root,
    env: { HOME: root, HANSARD_STATE_DIR: join(root, 'state') },
  });
  return (JSON.parse(r.out) as { findings: Finding[] }).findings.find((f) => f.check === 'hook_failures')!;
}

describe('hansard doctor after a refused session token', () => {
  it('a 404 to the real hook is recorded as server_refused and the fix names the server that refused', async () => {
    const root = await healthyHome();
    const state = join(root, 'state');
    // A shipper "running" (its lock fresh): the hook starts none, so only SessionStart talks to the server.
    mkdirSync(join(state, 'ship.lock'));
    const hook = await runHook(cli.bin, ['claude-code'], fixture('real-client/01-SessionStart.json'), {
      HOME: root,
      HANSARD_STATE_DIR: state,
      HANSARD_URL: otherUrl,
      HANSARD_TOKEN: srv.tokens.capture,
    });
    rmSync(join(state, 'ship.lock'), { recursive: true, force: true });
    expect(hook.code).toBe(0);
    expect(hook.stdout).toContain(
      `No session token: the server at ${otherUrl} refused a session token (404).`,
    );
    expect(readHookFailures(state).map((f) => [f.hook, f.reason, f.message])).toEqual([
      [
        'claude-code:SessionStart',
        'server_refused',
        `the server at ${otherUrl} refused a session token (404)`,
      ],
    ]);

    const f = await failuresFinding(root);
    expect(f.ok).toBe(false);
    expect(f.message).toContain(`claude-code:SessionStart: 1, last server_refused at `);
    expect(f.message).toContain(`(the server at ${otherUrl} refused a session token (404))`);
    expect(f.message).not.toContain('server_unreachable');
    expect(f.fix).toContain(
      `the server at ${otherUrl} (the hooks ship to ${srv.url} now) has no session-token route (404): it is not a hansard server, or not the one meant`,
    );
    expect(f.fix).toContain('hansard integrations sync --url URL');
    expect(f.fix).not.toContain(`the server at ${srv.url} answers now`);
  }, 120_000);

  it('a refusal recorded before the kind existed reads as server_refused, without the stray space', async () => {
    const root = await healthyHome();
    writeFileSync(
      join(root, 'state', 'hook-failures.json'),
      JSON.stringify({
        version: 1,
        failures: [
          {
            at: new Date().toISOString(),
            hook: 'claude-code:SessionStart',
            reason: 'server_unreachable',
            message: 'the server at http://10.255.255.1:8787 refused a session token (404 )',
            ms: 20,
          },
        ],
      }),
    );
    const f = await failuresFinding(root);
    expect(f.message).toContain('last server_refused at');
    expect(f.fix).toContain(
      `the server at http://10.255.255.1:8787 (the hooks ship to ${srv.url} now) has no session-token route (404)`,
    );
  });
});
