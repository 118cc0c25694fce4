/**
 * The shipper never waits for ever (issue 25 item 7). A server that accepts connections and never answers
 * held the shipper (and its lock: no hook could start another) for undici's 300 s. Now every request has
 * a timeout, the run gives up at the first one, records it and releases the lock; once the server
 * recovers, the next hook's shipper ships. A real loopback server that accepts and never answers (a
 * node:net server, which later forwards to a real `hansard serve` process: the same URL recovers), the
 * real `bin/hansard hook ship` process and the detached shipper a real hook starts; the timeout is made
 * short (HANSARD_SHIP_TIMEOUT_MS) rather than waited out.
 */
import { createServer as createHttpServer } from 'node:http';
import { connect, createServer, type Socket } from 'node:net';
import { describe, expect, it } from 'vitest';
import { startServeProcess } from '../../../harness/serve-process.js';
import { ApiClient, NetworkError } from '../../../lib/client/api/client.js';
import { shipperRunning } from '../../../lib/client/capture/spawn.js';
import {
  configPath,
  readHookFailures,
  spoolBacklog,
  writeJsonAtomic,
} from '../../../lib/client/capture/state-dir.js';
import { tmpDirs } from '../../support/tmp.js';
import { fixture, runHook, sessionEvents, spoolSessions, useBuiltCli } from './helpers.js';

const cli = useBuiltCli('ship-timeout');
const tmp = tmpDirs('hansard-ship-timeout-');
/** The shipper's request timeout in these tests (ms); its default is 10 s. */
const TIMEOUT = 1_000;
/** A shipper that waits for ever is killed by the test here, so that a failure ends. */
const KILL_AFTER = 30_000;

/**
 * A loopback server that accepts every connection and never answers, until `recover(port)`: from then
 * on it forwards new connections to that port. `held`: requests it left unanswered.
 */
async function hangingServer(): Promise<{
  url: string;
  held(): number;
  recover(port: number): void;
  close(): Promise<void>;
}> {
  const sockets = new Set<Socket>();
  let held = 0;
  let upstream: number | null = null;
  const server = createServer((socket) => {
    sockets.add(socket);
    socket.on('close', () => sockets.delete(socket));
    socket.on('error', () => {});
    if (upstream === null) {
      // Read the request, answer nothing. (undici may open a spare connection it never uses: only
      // connections that carry a request count.)
      socket.once('data', () => held++);
      socket.resume();
      return;
    }
    const up = connect(upstream, '127.0.0.1');
    up.on('error', () => socket.destroy());
    socket.pipe(up).pipe(socket);
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  const port = (server.address() as { port: number }).port;
  return {
    url: `http://127.0.0.1:${port}`,
    held: () => held,
    recover: (p) => {
      upstream = p;
    },
    close: async () => {
      for (const s of sockets) s.destroy();
      await new Promise((r) => server.close(r));
    },
  };
}

async function waitFor(check: () => boolean, ms: number): Promise<void> {
  const until = Date.now() + ms;
  while (!check()) {
    if (Date.now() > until) throw new Error(`not within ${ms} ms`);
    await new Promise((r) => setTimeout(r, 100));
  }
}

describe('the client: every request has a timeout', () => {
  it('a server that accepts and never answers: NetworkError within the timeout, asked once, and the client then gives up at once', async () => {
    const hung = await hangingServer();
    try {
      const client = new ApiClient({
        url: hung.url,
        token: 't',
        retries: 3,
        timeoutMs: 300,
        giveUpAfterTimeout: true,
      });
      const t = performance.now();
      const err = await client.request('GET', '/healthz').catch((e: unknown) => e);
      expect(err).toBeInstanceOf(NetworkError);
      expect((err as Error).message).toBe(`${hung.url} did not answer /healthz within 0.3 s`);
      expect(performance.now() - t).toBeGreaterThanOrEqual(290);
      expect(performance.now() - t).toBeLessThan(3_000);
      // The server counts the request when its bytes are read, which a loaded machine may do after the
      // client's timeout fired (a fresh clone's run at load 7 read it late): wait for that, then it is one.
      await waitFor(() => hung.held() >= 1, 2_000);
      expect(hung.held()).toBe(1); // not retried
      const again = performance.now();
      await expect(client.request('GET', '/v1/sessions')).rejects.toBe(err);
      expect(performance.now() - again).toBeLessThan(50);
      expect(hung.held()).toBe(1);
    } finally {
      await hung.close();
    }
  });

  it('headers in time but a JSON body that never ends: NetworkError; a streamed body may take longer than the timeout', async () => {
    const server = createHttpServer((req, res) => {
      if (req.url === '/json') {
        res.writeHead(200, { 'content-type': 'application/json' });
        res.write('{"a":'); // and nothing more
        return;
      }
      // The replay's way: headers at once, then the body over 900 ms, three times the timeout.
      res.writeHead(200, { 'content-type': 'application/x-ndjson' });
      res.flushHeaders();
      let n = 0;
      const tick = setInterval(() => {
        res.write(`{"n":${n}}\n`);
        if (++n === 3) {
          clearInterval(tick);
          res.end();
        }
      }, 300);
    });
    await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
    const url = `http://127.0.0.1:${(server.address() as { port: number }).port}`;
    try {
      const client = new ApiClient({ url, token: 't', retries: 0, timeoutMs: 300 });
      await expect(client.request('GET', '/json')).rejects.toThrow(
        `${url} did not answer /json within 0.3 s`,
      );
      const res = await client.stream('/replay');
      expect(await res.text()).toBe('{"n":0}\n{"n":1}\n{"n":2}\n');
    } finally {
      server.closeAllConnections();
      await new Promise((r) => server.close(r));
    }
  });
});

describe('the shipper against a server that accepts and never answers', () => {
  it('gives up at its timeout, records it and releases its lock; once the server recovers, the next hook ships everything', async () => {
    const state = tmp.make();
    // Events in the spool, no server configured yet (so no shipper starts).
    for (const f of ['real/hook-SessionStart.json', 'real/hook-UserPromptSubmit.json']) {
      const r = await runHook(cli.bin, ['claude-code'], fixture(f), { HANSARD_STATE_DIR: state });
      expect(r.code).toBe(0);
    }
    const spooled = spoolBacklog(state).reduce((n, b) => n + b.events, 0);
    expect(spooled).toBeGreaterThan(0);

    const server = await startServeProcess();
    const hung = await hangingServer();
    try {
      writeJsonAtomic(configPath(state), { url: hung.url, token: server.admin });
      const env = { HANSARD_STATE_DIR: state, HANSARD_SHIP_TIMEOUT_MS: String(TIMEOUT) };
      const ship = await runHook(cli.bin, ['ship'], '', env, KILL_AFTER);
      expect(ship).toMatchObject({ code: 0, signal: null });
      // Node's start, the local work, one request's timeout; not the server's silence (300 s).
      expect(ship.ms).toBeLessThan(TIMEOUT + 8_000);
      expect(ship.stderr).toContain('left for later');
      expect(hung.held()).toBe(1);
      expect(shipperRunning(state)).toBe(false);
      expect(readHookFailures(state)).toContainEqual(
        expect.objectContaining({
          hook: 'shipper',
          reason: 'server_unreachable',
          message: expect.stringContaining(`did not answer`),
        }),
      );
      expect(spoolBacklog(state).reduce((n, b) => n + b.events, 0)).toBe(spooled);

      // The server recovers (the same URL answers now); the session's next hook starts a shipper.
      hung.recover(server.port);
      const recovered = Date.now();
      const stop = await runHook(cli.bin, ['claude-code'], fixture('real/hook-Stop.json'), env);
      expect(stop.code).toBe(0);
      await waitFor(() => spoolBacklog(state).length === 0 && !shipperRunning(state), 30_000);
      expect(Date.now() - recovered).toBeLessThan(30_000);
      const sid = spoolSessions(state)[0]!.split('/').at(-1)!;
      const res = await fetch(`${server.url}/v1/sessions/${sid}/replay?format=ndjson`, {
        headers: { authorization: `Bearer ${server.admin}` },
      });
      const onServer = (await res.text()).split('\n').filter(Boolean);
      expect(onServer).toHaveLength(sessionEvents(spoolSessions(state)[0]!).length);
    } finally {
      await hung.close();
      await server.close();
    }
  }, 120_000);
});
