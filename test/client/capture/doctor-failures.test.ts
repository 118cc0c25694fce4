/**
 * `hansard doctor`'s hook failures after a server outage (docs/capture.md `hook_failures`), against a
 * real server on loopback and real files: `server_unreachable` failures stay ✗ while their events are not
 * shipped, with a fix that fits the reason (the server, `hansard hook ship`; not `integrations sync`);
 * once a real `hansard hook ship` run has shipped everything after them they are a ✓ note; a failure
 * after that ship still counts; `hansard doctor --clear-failures` empties the record; `hansard hook
 * ship` with nothing to send says so.
 */
import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { openSession } from '../../../lib/log/write/writer.js';
import { runHansard } from '../../support/cli.js';
import { useServer } from '../../support/server.js';
import { tmpDirs } from '../../support/tmp.js';

const dirs = tmpDirs('hansard-doctor-failures-');
const srv = useServer({ tokens: { capture: ['ingest', 'report', 'read'] } });

interface Finding {
  check: string;
  ok: boolean;
  message: string;
  fix: string | null;
}

/** A HOME where `integrations sync` installed everything for the capture token. */
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

const run = (root: string, args: string[]) =>
  runHansard(args, { cwd: root, env: { HOME: root, HANSARD_STATE_DIR: join(root, 'state') } });

async function failures(root: string) {
  const r = await run(root, ['doctor', '--json']);
  const report = JSON.parse(r.out) as { findings: Finding[] };
  return { code: r.code, f: report.findings.find((f) => f.check === 'hook_failures')! };
}

const ago = (h: number) => new Date(Date.now() - h * 3600 * 1000).toISOString();
const unreachable = (at: string) => ({
  at,
  hook: 'shipper',
  reason: 'server_unreachable',
  message: 'cannot reach the server (ECONNREFUSED)',
  ms: 10,
});

describe('hansard doctor after a server outage', () => {
  it('server_unreachable failures are ✗ until everything is shipped after them, then a ✓ note; --clear-failures empties the record', async () => {
    const root = await healthyHome();
    const state = join(root, 'state');
    const path = join(state, 'hook-failures.json');
    writeFileSync(
      path,
      JSON.stringify({ version: 1, failures: Array.from({ length: 8 }, () => unreachable(ago(2))) }),
    );
    // The events captured while the server was down.
    const w = openSession(join(state, 'spool'), { agent: 'claude-code' });
    w.message({ user_id: 'priya', text: 'written while the server was down' });
    w.end();

    let d = await failures(root);
    expect(d.code).toBe(1);
    expect(d.f.ok).toBe(false);
    expect(d.f.message).toContain('8 hook failure(s) in the last 7 days');
    expect(d.f.fix).toContain('hansard hook ship');
    expect(d.f.fix).not.toContain('integrations sync');
    expect(d.f.fix).toContain('hansard doctor --clear-failures');

    const ship = await run(root, ['hook', 'ship']);
    expect(ship.code, ship.err).toBe(0);
    expect(ship.err + ship.out).toContain('shipped 1 session(s)');
    d = await failures(root);
    expect(d.code).toBe(0);
    expect(d.f.ok).toBe(true);
    expect(d.f.message).toContain(
      '8 past failures while the server was unreachable; everything was shipped since',
    );
    const human = await run(root, ['doctor']);
    expect(human.out).toMatch(/✓ hook_failures +8 past failures while the server was unreachable/);

    // A failure after the last ship still needs action.
    const now = JSON.parse(readFileSync(path, 'utf8'));
    now.failures.push(unreachable(new Date(Date.now() + 1000).toISOString()));
    writeFileSync(path, JSON.stringify(now));
    d = await failures(root);
    expect(d.f.ok).toBe(false);
    expect(d.f.message).toContain('1 hook failure(s) in the last 7 days');
    expect(d.f.message).toContain('8 past failures while the server was unreachable');

    const cleared = await run(root, ['doctor', '--clear-failures']);
    expect(cleared.err).toContain('cleared 9 hook failure records');
    expect(cleared.out).toContain('✓ hook_failures     no hook failures in the last 7 days');
    expect(JSON.parse(readFileSync(path, 'utf8'))).toEqual({ version: 1, failures: [] });
  });

  it('hansard hook ship with nothing to send says "nothing to ship"', async () => {
    const root = await healthyHome();
    const r = await run(root, ['hook', 'ship']);
    expect(r.code).toBe(0);
    expect(r.err + r.out).toContain('hansard: nothing to ship');
    expect(r.err + r.out).not.toContain('shipped 0');
  });

  it('the fix fits each reason: a state directory problem is not fixed by syncing integrations', async () => {
    const root = await healthyHome();
    writeFileSync(
      join(root, 'state', 'hook-failures.json'),
      JSON.stringify({
        version: 1,
        failures: [{ ...unreachable(ago(1)), reason: 'state_unwritable', hook: 'claude-code:Stop' }],
      }),
    );
    const d = await failures(root);
    expect(d.f.ok).toBe(false);
    expect(d.f.fix).toContain('state directory writable');
    expect(d.f.fix).not.toContain('integrations sync');
  });
});
