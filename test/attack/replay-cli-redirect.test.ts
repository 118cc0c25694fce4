/**
 * Issue 17.2 attacks on the client side: `hansard replay SID` following a large session's 303/202
 * (lib/client/api/client.ts `stream`, lib/client/cli/cmd-replay.ts), against servers on loopback that lie.
 *
 * Held: the token is not sent to the host a 303 names (nor to a second host that host redirects to: the
 * download refuses any redirect, so no loop); a download cut short of its Content-Length is an exit 1
 * that says the replay is incomplete; a 202 whose Retry-After is huge fails at once (no wait of days), and
 * a server that answers 202 forever is given up after `maxWaitMs` (`replay_not_ready`); a 303 without a
 * Location is an error, not a loop.
 */
import { createServer, type IncomingHttpHeaders, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ApiClient, ServerError } from '../../lib/client/api/client.js';
import { runHansard } from '../support/cli.js';

const SID = 's_01KBXM0000000000000000000A';
const TOKEN = `hns_${'a'.repeat(43)}`;

interface Fake {
  server: Server;
  url: string;
  seen: Array<{ url: string; headers: IncomingHttpHeaders }>;
}

async function fake(
  handle: (req: { url: string }, res: import('node:http').ServerResponse) => void,
): Promise<Fake> {
  const seen: Fake['seen'] = [];
  const server = createServer((req, res) => {
    seen.push({ url: req.url ?? '', headers: req.headers });
    handle({ url: req.url ?? '' }, res);
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  return { server, url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`, seen };
}

let api: Fake;
let store: Fake;
/** what the api fake answers next, by test */
let apiMode: 'redirect' | 'cut' | 'bounce' | 'no-location' | 'huge-wait' | 'forever' = 'redirect';

beforeAll(async () => {
  store = await fake((req, res) => {
    if (req.url.startsWith('/cut')) {
      // declares 1000 bytes, sends 10, and drops the connection
      res.writeHead(200, { 'content-type': 'application/x-ndjson', 'content-length': '1000' });
      res.write('{"v":3}\n12');
      setTimeout(() => res.socket?.destroy(), 50);
      return;
    }
    if (req.url.startsWith('/bounce')) {
      // a stored copy's host that redirects back to the API with the token in mind
      res.writeHead(302, { location: `${api.url}/v1/sessions/${SID}/replay?again=1` });
      res.end();
      return;
    }
    res.writeHead(200, { 'content-type': 'application/x-ndjson' });
    res.end('{"ok":1}\n');
  });
  api = await fake((_req, res) => {
    const body = (o: unknown) => JSON.stringify(o);
    switch (apiMode) {
      case 'redirect':
      case 'cut':
      case 'bounce': {
        const path = apiMode === 'redirect' ? '/copy?X-Amz-Signature=x' : `/${apiMode}`;
        res.writeHead(303, { location: `${store.url}${path}`, 'content-type': 'application/json' });
        res.end(body({ status: 'ready', replay: { url: `${store.url}${path}`, bytes: 9 } }));
        return;
      }
      case 'no-location':
        res.writeHead(303, { 'content-type': 'application/json' });
        res.end('{}');
        return;
      case 'huge-wait':
        res.writeHead(202, { 'retry-after': '100000000', 'content-type': 'application/json' });
        res.end(body({ status: 'building' }));
        return;
      case 'forever':
        res.writeHead(202, { 'retry-after': '1', 'content-type': 'application/json' });
        res.end(body({ status: 'building' }));
        return;
    }
  });
});

afterAll(async () => {
  for (const f of [api, store]) await new Promise((r) => f?.server.close(r));
});

const replay = () =>
  runHansard(['replay', SID], { cwd: '/', env: { HANSARD_URL: api.url, HANSARD_TOKEN: TOKEN } });

describe('hansard replay following a stored copy', () => {
  it('fetches the 303 Location without the token', async () => {
    apiMode = 'redirect';
    store.seen.length = 0;
    const r = await replay();
    expect(r.code, r.err).toBe(0);
    expect(r.out).toBe('{"ok":1}\n');
    expect(api.seen.at(-1)!.headers.authorization).toBe(`Bearer ${TOKEN}`);
    expect(store.seen).toHaveLength(1);
    expect(store.seen[0]!.headers.authorization).toBeUndefined();
  });

  it('a copy host that redirects again is refused: no loop, the token never sent on', async () => {
    apiMode = 'bounce';
    const before = api.seen.length;
    const r = await replay();
    expect(r.code).not.toBe(0);
    // the API saw exactly the one request of the CLI, not a bounced one
    expect(api.seen.length - before).toBe(1);
    expect(api.seen.every((s) => !s.url.includes('again=1'))).toBe(true);
  });

  it('a download cut short of its Content-Length exits 1 saying the replay is incomplete', async () => {
    apiMode = 'cut';
    const r = await replay();
    expect(r.code).toBe(1);
    expect(r.err).toMatch(/incomplete|stopped sending/);
  });

  it('a 303 without Location is an error', async () => {
    apiMode = 'no-location';
    const r = await replay();
    expect(r.code).toBe(1);
    expect(r.err).toMatch(/Location/);
  });

  it('a 202 asking to wait for days fails at once; 202 forever is given up after maxWaitMs', async () => {
    apiMode = 'huge-wait';
    const started = Date.now();
    const client = new ApiClient({ url: api.url, token: TOKEN, retries: 0 });
    await expect(client.stream(`/v1/sessions/${SID}/replay`)).rejects.toMatchObject({
      code: 'replay_not_ready',
    });
    expect(Date.now() - started).toBeLessThan(5_000);
    apiMode = 'forever';
    const t0 = Date.now();
    const err = await client.stream(`/v1/sessions/${SID}/replay`, { maxWaitMs: 3_500 }).catch((e) => e);
    expect(err).toBeInstanceOf(ServerError);
    expect((err as ServerError).code).toBe('replay_not_ready');
    expect(Date.now() - t0).toBeLessThan(10_000);
  }, 30_000);
});
