/**
 * A lease never outlives its TTL because a clock ran ahead (issue 25 item 5; lib/client/work/local.ts readLease,
 * lib/contract/work-lease.ts leaseDoubt, docs/work.md "Freshness, in words"). Before: a heartbeat written by
 * a process whose clock was 2 h ahead made `hansard work status` say "observed on this machine" for
 * 2 h 15 min, past the 15 min TTL; the server, likewise, kept a lease renewed by a clock ahead observed.
 * A renewal dated after now is no evidence of activity now: it reads unknown, and status says why.
 *
 * Through the real built command (`bin/hansard work …`, built from this checkout into .test-results) with
 * a real state directory; the process ahead is the same command with its clock moved 2 h forward by a
 * preloaded module (test/support/clock-ahead.mjs).
 */
import { execFile } from 'node:child_process';
import { mkdtempSync, readFileSync } from 'node:fs';
import type { AddressInfo } from 'node:net';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { newId } from '../../../lib/log/format/ids.js';
import { request } from '../../support/http.js';
import { useServer } from '../../support/server.js';
import { hookEnv, ROOT, useBuiltCli } from '../capture/helpers.js';

const TWO_HOURS = 2 * 3600_000;
/** How far ahead of the machine the server's clock runs now (ms): moved by a case, set back after. */
let serverAhead = 0;
const srv = useServer({
  tokens: { reporter: ['report', 'read'] },
  deps: { now: () => new Date(Date.now() + serverAhead) },
});
const cli = useBuiltCli('work-lease-ahead');

/** A loopback port nothing listens on (taken, then released). */
async function deadPort(): Promise<number> {
  const s = createServer();
  await new Promise<void>((resolve) => s.listen(0, '127.0.0.1', () => resolve()));
  const { port } = s.address() as AddressInfo;
  await new Promise<void>((resolve) => s.close(() => resolve()));
  return port;
}

interface Run {
  code: number;
  out: string;
  err: string;
}

/** `bin/hansard work ARGS` as a real process; `aheadMs`: its clock runs that far ahead. */
function work(args: string[], env: Record<string, string>, aheadMs = 0): Promise<Run> {
  const clock = aheadMs
    ? { NODE_OPTIONS: `--import=${join(ROOT, 'test/support/clock-ahead.mjs')}`, CLOCK_AHEAD_MS: `${aheadMs}` }
    : {};
  return new Promise((done) => {
    execFile(
      process.execPath,
      [cli.bin, 'work', ...args],
      { env: hookEnv({ USER: 'priya', HANSARD_TOKEN: srv.tokens.reporter, ...clock, ...env }) },
      (err, out, errOut) => done({ code: err ? Number(err.code ?? 1) : 0, out, err: errOut }),
    );
  });
}

interface Row {
  id: string;
  shown: string;
  freshness: string;
  local_lease: { state: string };
}

async function statusRow(env: Record<string, string>, id: string): Promise<Row | undefined> {
  const st = await work(['status', '--json'], env);
  expect(st.code, st.err).toBe(0);
  return (JSON.parse(st.out).items as Row[]).find((r) => r.id === id);
}

/** A state directory and a session, and an item started through the server with a 15 min TTL. */
async function started(): Promise<{
  env: { HANSARD_STATE_DIR: string; HANSARD_SESSION_ID: string };
  id: string;
}> {
  const env = {
    HANSARD_STATE_DIR: mkdtempSync(join(tmpdir(), 'hansard-ahead-')),
    HANSARD_SESSION_ID: newId('s'),
  };
  const s = await work(
    ['start', '--mode', 'implementing', '--summary', 'Parser error recovery', '--ttl', '15m'],
    {
      ...env,
      HANSARD_URL: srv.url,
    },
  );
  expect([s.code, s.err]).toEqual([0, '']);
  return { env, id: /started (wk_\w{26})/.exec(s.out)![1]! };
}

describe('a lease renewed by a clock that ran ahead', () => {
  it('a local heartbeat from a process 2 h ahead reads unknown, says why, and a right clock renews it', async () => {
    const { env, id } = await started();
    const away = { ...env, HANSARD_URL: `http://127.0.0.1:${await deadPort()}` };
    // The heartbeat of a process whose clock runs 2 h ahead, the server away: this machine's lease only.
    const hb = await work(['heartbeat', id], away, TWO_HOURS);
    expect(hb.code, hb.err).toBe(0);
    const lease = JSON.parse(readFileSync(join(env.HANSARD_STATE_DIR, 'work', `${id}.lease.json`), 'utf8'));
    expect(Date.parse(lease.renewed_at) - Date.now()).toBeGreaterThan(TWO_HOURS - 60_000);
    // Read now by a process with the right clock: no activity is claimed, and the reason is given.
    const row = await statusRow(away, id);
    expect(row?.shown).toBe('unknown');
    expect(row?.local_lease.state).toBe('ahead');
    expect(row?.freshness).toMatch(
      /^unknown \(the lease on this machine was renewed at \d\d:\d\d:\d\d UTC, 2 h after now: .*ran ahead/,
    );
    const text = await work(['status'], away);
    expect(text.out).toContain(
      `${id}  implementing  "Parser error recovery"  unknown (the lease on this machine`,
    );
    expect(text.out).not.toContain('observed');
    // The next heartbeat of a process whose clock is right is evidence again.
    expect((await work(['heartbeat', id], away)).code).toBe(0);
    expect((await statusRow(away, id))?.shown).toBe('observed_here');
  });

  it("the server's lease renewed by an instance 2 h ahead reads unknown, and status says why", async () => {
    const { env, id } = await started();
    const up = { ...env, HANSARD_URL: srv.url };
    serverAhead = TWO_HOURS;
    try {
      const hb = await work(['heartbeat', id], up);
      expect(hb.code, hb.err).toBe(0);
    } finally {
      serverAhead = 0;
    }
    const w = await request(srv, 'GET', `/v1/work/${id}`, { token: srv.tokens.reporter });
    expect(Date.parse(w.json.freshness.lease_expires_at) - Date.now()).toBeGreaterThan(TWO_HOURS);
    expect(w.json.freshness.shown).toBe('unknown');
    const row = await statusRow(up, id);
    expect(row?.shown).toBe('unknown');
    expect(row?.freshness).toMatch(
      /^unknown \(the server's lease was renewed at \d\d:\d\d:\d\d UTC, 2 h after the server's time: a clock ran ahead/,
    );
    // A heartbeat at the right time makes it observed again.
    expect((await work(['heartbeat', id], up)).code).toBe(0);
    expect((await statusRow(up, id))?.shown).toBe('observed');
  });
});
