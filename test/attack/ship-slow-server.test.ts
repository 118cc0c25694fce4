/**
 * Attack (issue 25 item 7, lib/client/capture/ship.ts, lib/client/api/client.ts; issue 25 item 1 for SessionStart):
 * a server that answers, but a byte at a time. Loopback node:net servers that read the request and then
 * drip the status line and headers one byte every 100 ms without end, or send headers at once and drip
 * the JSON body; the real `bin/hansard hook ship` process and the real SessionStart hook (which asks the
 * server for a session token) against them. Each must give up within its timeout, release the shipper's
 * lock, record the failure, and the hook must answer within its budget. And SessionStart against a
 * healthy `hansard serve` with less of its budget left than the token request may take.
 */
import { createServer, type Socket } from 'node:net';
import { describe, expect, it } from 'vitest';
import { shipperRunning } from '../../lib/client/capture/spawn.js';
import {
  configPath,
  readHookFailures,
  spoolBacklog,
  writeJsonAtomic,
} from '../../lib/client/capture/state-dir.js';
import { fixture, runHook, useBuiltCli } from '../client/capture/helpers.js';
import { useServer } from '../support/server.js';
import { tmpDirs } from '../support/tmp.js';

const cli = useBuiltCli('attack-slow-server');
const tmp = tmpDirs('hansard-attack-slow-');
const TIMEOUT = 1_000;
const KILL_AFTER = 30_000;

/** A server that answers every request by dripping `text` (then nothing more) one byte per `everyMs`. */
async function drippingServer(text: string, everyMs = 100) {
  const sockets = new Set<Socket>();
  const timers = new Set<NodeJS.Timeout>();
  let requests = 0;
  const server = createServer((socket) => {
    sockets.add(socket);
    socket.on('error', () => {});
    socket.once('data', () => {
      requests++;
      let i = 0;
      const t = setInterval(() => {
        if (i < text.length && !socket.destroyed) socket.write(text[i++]!);
      }, everyMs);
      timers.add(t);
      socket.on('close', () => {
        clearInterval(t);
        sockets.delete(socket);
      });
    });
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  return {
    url: `http://127.0.0.1:${(server.address() as { port: number }).port}`,
    requests: () => requests,
    async close() {
      for (const t of timers) clearInterval(t);
      for (const s of sockets) s.destroy();
      await new Promise((r) => server.close(r));
    },
  };
}

/** Headers without end: a header line whose value never stops. */
const ENDLESS_HEADERS = `HTTP/1.1 201 Created\r\nx-slow: ${'a'.repeat(100_000)}`;
/** Headers complete, then a JSON body of 10,000 bytes dripped. */
const DRIPPED_BODY = `HTTP/1.1 201 Created\r\ncontent-type: application/json\r\ncontent-length: 10000\r\n\r\n{"a":"${'b'.repeat(9_990)}"}`;

describe('the shipper against a server that drips its answer', () => {
  for (const [what, text] of [
    ['headers that never end', ENDLESS_HEADERS],
    ['a JSON body dripped for far longer than the timeout', DRIPPED_BODY],
  ] as const) {
    it(`${what}: gives up within its timeout, records it, releases its lock, keeps the spool`, async () => {
      const state = tmp.make();
      for (const f of ['real/hook-SessionStart.json', 'real/hook-UserPromptSubmit.json']) {
        expect((await runHook(cli.bin, ['claude-code'], fixture(f), { HANSARD_STATE_DIR: state })).code).toBe(
          0,
        );
      }
      const spooled = spoolBacklog(state).reduce((n, b) => n + b.events, 0);
      const slow = await drippingServer(text);
      try {
        writeJsonAtomic(configPath(state), { url: slow.url, token: `hns_${'S10w'.repeat(10)}abc` });
        const ship = await runHook(
          cli.bin,
          ['ship'],
          '',
          { HANSARD_STATE_DIR: state, HANSARD_SHIP_TIMEOUT_MS: String(TIMEOUT) },
          KILL_AFTER,
        );
        expect(ship).toMatchObject({ code: 0, signal: null });
        // Node's start and the local work, one timeout (plus a second per 256 KiB of body): not the drip.
        expect(ship.ms).toBeLessThan(TIMEOUT + 8_000);
        expect(shipperRunning(state)).toBe(false);
        expect(readHookFailures(state)).toContainEqual(
          expect.objectContaining({ hook: 'shipper', reason: 'server_unreachable' }),
        );
        expect(spoolBacklog(state).reduce((n, b) => n + b.events, 0)).toBe(spooled);
        expect(slow.requests()).toBeGreaterThanOrEqual(1);
      } finally {
        await slow.close();
      }
    }, 60_000);
  }
});

describe('SessionStart asking a dripping server for a session token', () => {
  it('answers its context within the budget, without a session token', async () => {
    for (const text of [ENDLESS_HEADERS, DRIPPED_BODY]) {
      const state = tmp.make();
      const slow = await drippingServer(text);
      try {
        writeJsonAtomic(configPath(state), { url: slow.url, token: `hns_${'S10w'.repeat(10)}abc` });
        const r = await runHook(
          cli.bin,
          ['claude-code'],
          fixture('real/hook-SessionStart.json'),
          { HANSARD_STATE_DIR: state, HANSARD_HOOK_BUDGET_MS: '2000' },
          KILL_AFTER,
        );
        expect(r.code).toBe(0);
        expect(r.ms).toBeLessThan(2_000 + 2_500);
        const ctx = JSON.parse(r.stdout).hookSpecificOutput.additionalContext as string;
        expect(ctx).toContain('hansard is recording this session as s_');
        expect(ctx).toContain('No session token');
      } finally {
        await slow.close();
      }
    }
  }, 60_000);
});

describe('SessionStart with less than 2 s of its budget left, against a healthy server', () => {
  const srv = useServer({ real: true });
  // Was a FAULT (fixed): SessionStart asked for a session token with Math.min(1_500, left) ms, a fraction
  // whenever less than 1.5 s of the budget was left; AbortSignal.timeout threw a RangeError before any
  // request was sent, reported as "the server at … is unreachable". The timeout is now a whole number of
  // ms (wholeMs), and a timeout is told by the signal's own state, not the error's name.
  it('a session token is minted when 1.2 s of the budget is left', async () => {
    const state = tmp.make();
    writeJsonAtomic(configPath(state), { url: srv.url, token: srv.admin });
    const r = await runHook(
      cli.bin,
      ['claude-code'],
      fixture('real/hook-SessionStart.json'),
      { HANSARD_STATE_DIR: state, HANSARD_HOOK_BUDGET_MS: '2000' },
      KILL_AFTER,
    );
    const ctx = JSON.parse(r.stdout).hookSpecificOutput.additionalContext as string;
    expect(ctx).not.toContain('unreachable');
    expect(ctx).toContain('--session-token hns_');
  }, 60_000);
});
