/** The CLI's HTTP client: when to retry and when to say at once that nothing is there (issue 9.7). */
import { createServer } from 'node:net';
import { describe, expect, it } from 'vitest';
import { ApiClient, NetworkError, refusedOnLoopback } from '../../../lib/client/api/client.js';
import { runCli } from '../../../lib/client/cli/main.js';

/** A loopback port that was free a moment ago: nothing listens there. */
async function freePort(): Promise<number> {
  const srv = createServer();
  await new Promise<void>((r) => srv.listen(0, '127.0.0.1', r));
  const { port } = srv.address() as { port: number };
  await new Promise<void>((r) => srv.close(() => r()));
  return port;
}

const refused = Object.assign(new TypeError('fetch failed'), { cause: { code: 'ECONNREFUSED' } });

describe('refusedOnLoopback', () => {
  it.each(['http://127.0.0.1:8787', 'http://127.3.2.1:1', 'http://localhost:8787/', 'http://[::1]:8787'])(
    'is true for a refused connection to %s',
    (url) => {
      expect(refusedOnLoopback(url, refused)).toBe(true);
    },
  );

  it.each(['https://hansard.example.com', 'http://10.0.0.5:8787', 'http://128.0.0.1'])(
    'is false for a remote host %s (it may be restarting: retry)',
    (url) => {
      expect(refusedOnLoopback(url, refused)).toBe(false);
    },
  );

  it('is false for other network errors on loopback', () => {
    const reset = Object.assign(new TypeError('fetch failed'), { cause: { code: 'ECONNRESET' } });
    expect(refusedOnLoopback('http://127.0.0.1:8787', reset)).toBe(false);
  });
});

describe('a request to a local port where nothing listens', () => {
  it('fails at once with a NetworkError, without retrying', async () => {
    const port = await freePort();
    const retries: string[] = [];
    const client = new ApiClient({
      url: `http://127.0.0.1:${port}`,
      token: undefined,
      minTimeoutMs: 1,
      onRetry: (i) => retries.push(i.reason),
    });
    const err = await client.request('GET', '/healthz').catch((e: unknown) => e);
    expect(err).toBeInstanceOf(NetworkError);
    expect((err as Error).message).toBe(`cannot reach http://127.0.0.1:${port}: connection refused`);
    expect(retries).toEqual([]);
  });

  it('makes `hansard replay SID` say so and how to start a server, exit 1', async () => {
    const port = await freePort();
    let out = '';
    let err = '';
    const code = await runCli(['replay', 's_01KZVVGRNR3D5V708Z4NPGG11H'], {
      stdout: { write: (s: string | Uint8Array) => (out += String(s)) },
      stderr: { write: (s: string) => (err += s) },
      env: { HANSARD_URL: `http://127.0.0.1:${port}`, HANSARD_TOKEN: `hns_${'a'.repeat(43)}` },
      cwd: process.cwd(),
    });
    expect(code).toBe(1);
    expect(out).toBe('');
    expect(err).toContain('connection refused');
    expect(err).toContain('hansard serve');
    expect(err).not.toMatch(/retry|retrying/i);
  });
});
