/**
 * A token that cannot be a hansard token is refused before any request, and no error quotes a token or a
 * header (the trial of issue 24, item 12; lib/client/api/token-form.ts, network-cause.ts, client.ts,
 * lib/client/mcp/errors.ts). Over a real loopback HTTP server that counts the requests it gets, and the CLI.
 */
import { createServer, type Server } from 'node:http';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ApiClient, NetworkError } from '../../../lib/client/api/client.js';
import { UsageError } from '../../../lib/client/api/errors.js';
import { networkCause } from '../../../lib/client/api/network-cause.js';
import { MalformedToken, tokenFormProblem } from '../../../lib/client/api/token-form.js';
import { runCli } from '../../../lib/client/cli/main.js';
import { describe as describeError } from '../../../lib/client/mcp/errors.js';
import { tmpDirs } from '../../support/tmp.js';

const dirs = tmpDirs('hansard-token-form-');

/** A well-formed token no server minted, split so no scanner takes it for a real one. */
const TOKEN = `hns_${'Ab3dEf6hIj9lMn2pQr5t'}${'Uv8xYz1bCd4fGh7jKl0nPq'}${'R'}`;

let server: Server;
let url = '';
let requests = 0;
beforeAll(async () => {
  server = createServer((_req, res) => {
    requests++;
    res.writeHead(401, { 'content-type': 'application/json' });
    res.end(JSON.stringify({ error: { code: 'unauthorized', message: 'no such token', details: {} } }));
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  url = `http://127.0.0.1:${(server.address() as { port: number }).port}`;
});
afterAll(() => new Promise<void>((r) => server.close(() => r())));

describe('tokenFormProblem', () => {
  it('says what keeps a token from being a hansard token, never quoting it', () => {
    expect(TOKEN).toHaveLength(47);
    expect(tokenFormProblem(TOKEN)).toBeNull();
    const cases: [string, string][] = [
      ['', 'is empty'],
      [`${TOKEN}\r\nX-Evil: 1`, 'holds a line break'],
      [`${TOKEN}\n`, 'holds a line break'],
      [`${TOKEN}\u0000`, 'holds a control character'],
      [`${TOKEN}\u007f`, 'holds a control character'],
      [`${TOKEN} x`, 'holds a space'],
      ['hns_\u00e9\u00e9\u00e9', 'holds a character outside ASCII'],
      [`Bearer${TOKEN}`, 'does not start with hns_'],
      [`${TOKEN}/../x`, 'is 52 characters long, not 47'],
      [`hns_${'a'.repeat(42)}-`, 'holds a character other than letters and digits after hns_'],
    ];
    for (const [token, problem] of cases) {
      expect(tokenFormProblem(token), JSON.stringify(token)).toBe(problem);
      expect(problem).not.toContain(TOKEN.slice(4));
    }
  });
});

describe('ApiClient and a token that cannot be sent', () => {
  it('refuses a token with a line break, a control character, a space or non-ASCII before any request', async () => {
    const before = requests;
    for (const token of [`${TOKEN}\r\nX-Evil: 1`, `${TOKEN}\u0000`, `${TOKEN} `, 'hns_\u00e9']) {
      const retries: string[] = [];
      const client = new ApiClient({ url, token, minTimeoutMs: 1, onRetry: (i) => retries.push(i.reason) });
      const err = await client.request('GET', '/v1/tokens/self').catch((e: unknown) => e);
      expect(err, JSON.stringify(token)).toBeInstanceOf(MalformedToken);
      expect(err).toBeInstanceOf(UsageError);
      expect((err as UsageError).code).toBe('malformed_token');
      expect((err as Error).message).toMatch(/^the token is not a hansard token: it holds /);
      expect((err as Error).message).not.toContain(TOKEN.slice(4));
      expect(retries).toEqual([]);
    }
    expect(requests).toBe(before);
  });

  it('still sends a token of another form that can be a header (the server says no)', async () => {
    const before = requests;
    const client = new ApiClient({ url, token: 'hns_short', minTimeoutMs: 1 });
    const err = await client.request('GET', '/v1/tokens/self').catch((e: unknown) => e);
    expect((err as { status?: number }).status).toBe(401);
    expect(requests).toBe(before + 1);
  });

  it('sends no request with another header undici refuses, retries nothing and quotes no header', async () => {
    const before = requests;
    const retries: string[] = [];
    const client = new ApiClient({
      url,
      token: TOKEN,
      minTimeoutMs: 1,
      onRetry: (i) => retries.push(i.reason),
    });
    const err = await client
      .request('POST', '/v1/work', { body: '{}', headers: { 'idempotency-key': `k\r\n${TOKEN}` } })
      .catch((e: unknown) => e);
    expect(err).toBeInstanceOf(UsageError);
    expect(err).not.toBeInstanceOf(NetworkError);
    expect((err as Error).message).toBe('cannot send the request: a request header is not valid');
    expect(retries).toEqual([]);
    expect(requests).toBe(before);
  });

  it("says a fetch error's words with no header quoted and no hns_ secret", () => {
    const header = new TypeError(`Headers.append: "Bearer ${TOKEN}\r\nX: 1" is an invalid header value.`);
    expect(networkCause(header)).toBe('a request header is not valid');
    const quoted = Object.assign(new TypeError('fetch failed'), { cause: { message: `bad ${TOKEN}` } });
    expect(networkCause(quoted)).toBe('bad hns_***');
  });
});

describe('the CLI and an MCP tool error with such a token', () => {
  it('hansard says the token is malformed (exit 2) and sends nothing', async () => {
    const before = requests;
    let err = '';
    const code = await runCli(['token', 'list'], {
      stdout: { write: () => true },
      stderr: { write: (s: string) => (err += s) },
      env: {
        HANSARD_URL: url,
        HANSARD_TOKEN: `${TOKEN}\nX: 1`,
        HANSARD_STATE_DIR: dirs.make(),
      },
      cwd: dirs.make(),
    });
    expect(code).toBe(2);
    expect(err).toContain('hansard: the token is not a hansard token: it holds a line break');
    expect(err).not.toContain(TOKEN.slice(4));
    expect(requests).toBe(before);
  });

  it('masks every hns_ secret in what an MCP tool answers', () => {
    expect(describeError(new NetworkError(`cannot reach x: ${TOKEN}`), null)).not.toContain(TOKEN.slice(4));
    expect(describeError(new Error(`boom ${TOKEN}`), null)).toBe('hansard: unexpected error: boom hns_***');
    expect(describeError(new MalformedToken('the token', 'holds a line break'), null)).toMatch(
      /^the token is not a hansard token: it holds a line break/,
    );
  });
});
