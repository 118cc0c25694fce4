/**
 * Timeouts given as a fraction of a millisecond (issue 25 attack item 17): `AbortSignal.timeout` throws a
 * RangeError on a non-integer, so a request given the budget left on `performance.now()`'s clock was never
 * sent and its failure read as "unreachable". The capture code's requests (`mintSessionToken`, doctor's
 * server calls) take a whole number of ms, and tell a timeout by their signal. Real loopback servers: the
 * harness's (useServer) and one that accepts and never answers.
 */
import { createServer, type Socket } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { checkHealth } from '../../../lib/client/capture/doctor-server.js';
import { mintSessionToken, wholeMs } from '../../../lib/client/capture/session-start.js';
import { useServer } from '../../support/server.js';

const srv = useServer();

/** A server that accepts connections and never answers them. */
const silent = createServer((s) => sockets.push(s));
const sockets: Socket[] = [];
let silentUrl = '';
beforeAll(async () => {
  await new Promise<void>((r) => silent.listen(0, '127.0.0.1', r));
  silentUrl = `http://127.0.0.1:${(silent.address() as { port: number }).port}`;
});
afterAll(async () => {
  for (const s of sockets) s.destroy();
  await new Promise((r) => silent.close(r));
});

describe('a timeout of a fraction of a millisecond', () => {
  it('wholeMs rounds down to a whole number of ms, at least 1, at most 2^31 - 1', () => {
    expect([1199.7, 0.4, -5, Number.NaN, 2 ** 40].map(wholeMs)).toEqual([1199, 1, 1, 1, 2 ** 31 - 1]);
  });

  it('a session token is asked for and minted with 1199.73 ms', async () => {
    const sid = 's_01JD0000000000000000000001';
    const t = await mintSessionToken(
      { url: srv.url, token: srv.admin, source: { url: 'env', token: 'env' } },
      sid,
      1199.73,
    );
    expect(t).toMatchObject({ token: expect.stringMatching(/^hns_/) });
  });

  it('a server that never answers within 300.5 ms is "did not answer in time", not "unreachable"', async () => {
    const t = await mintSessionToken(
      { url: silentUrl, token: 'hns_x', source: { url: 'env', token: 'env' } },
      's_01JD0000000000000000000002',
      300.5,
    );
    expect(t).toBe(`the server at ${silentUrl} did not answer in time`);
  });

  it("doctor's health check with 1500.5 ms asks the server (up), and says a silent one did not answer", async () => {
    expect(await checkHealth(srv.url, 1500.5)).toMatchObject({ up: true });
    expect(await checkHealth(silentUrl, 300.5)).toEqual({ up: false, reason: 'no answer within 0.3005 s' });
  });
});
