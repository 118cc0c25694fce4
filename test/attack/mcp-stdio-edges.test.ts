/**
 * Attack (issue 24 item 5, lib/client/mcp/line-limit.ts, lib/client/mcp/session.ts): the real `bin/hansard mcp serve`
 * process driven with raw JSON-RPC bytes on its stdin, against the real `hansard serve` server. Lines of
 * exactly 10 MiB and one byte either side, many lines in one write, a line dripped a few bytes at a time,
 * invalid UTF-8, an over-limit line whose id is an escaped string and whose newline comes in a write of
 * its own; and `session_token`s that are not tokens (header injection, non-ASCII, another tenant's form,
 * revoked), each answered with a tool error while the server goes on.
 */
import { type ChildProcessWithoutNullStreams, spawn } from 'node:child_process';
import { afterEach, describe, expect, it } from 'vitest';
import { useBuiltCli } from '../client/capture/helpers.js';
import { seedSession, sessionToken } from '../client/mcp/helpers.js';
import { request } from '../support/http.js';
import { useServer } from '../support/server.js';
import { tmpDirs } from '../support/tmp.js';

const cli = useBuiltCli('attack-mcp-edges');
const srv = useServer({ real: true });
const dirs = tmpDirs('hansard-attack-mcp-');

/** The MCP SDK's stdio read buffer, newline included. */
const LIMIT = 10 * 1024 * 1024;

type Msg = { id?: unknown; result?: Record<string, unknown>; error?: { code: number; message: string } };

/** A running `mcp serve` with its answers by id. */
interface Driver {
  child: ChildProcessWithoutNullStreams;
  write(bytes: Buffer | string): Promise<void>;
  answer(id: unknown): Promise<Msg>;
  stderr(): string;
  exited(): boolean;
}

const running: ChildProcessWithoutNullStreams[] = [];
afterEach(() => {
  for (const c of running.splice(0)) if (c.exitCode === null && c.signalCode === null) c.kill('SIGKILL');
});

async function serve(env: Record<string, string> = {}): Promise<Driver> {
  const child = spawn(process.execPath, [cli.bin, 'mcp', 'serve', '--status'], {
    env: {
      PATH: process.env.PATH ?? '',
      HOME: dirs.make(),
      HANSARD_URL: srv.url,
      HANSARD_STATE_DIR: dirs.make(),
      ...env,
    },
    cwd: dirs.make(),
  });
  running.push(child);
  child.stdin.on('error', () => {});
  let out = '';
  let err = '';
  const got: Msg[] = [];
  const waiters: (() => void)[] = [];
  child.stdout.setEncoding('utf8').on('data', (s: string) => {
    out += s;
    let nl = out.indexOf('\n');
    while (nl >= 0) {
      got.push(JSON.parse(out.slice(0, nl)) as Msg);
      out = out.slice(nl + 1);
      nl = out.indexOf('\n');
    }
    for (const w of waiters.splice(0)) w();
  });
  child.stderr.setEncoding('utf8').on('data', (s: string) => (err += s));
  child.on('exit', () => {
    for (const w of waiters.splice(0)) w();
  });
  const d: Driver = {
    child,
    write: (bytes) => new Promise((r) => child.stdin.write(bytes, () => r())),
    async answer(id) {
      for (;;) {
        const m = got.find((g) => g.id === id);
        if (m) return m;
        if (child.exitCode !== null || child.signalCode !== null)
          throw new Error(`mcp serve exited (${child.exitCode}) before answering ${String(id)}: ${err}`);
        await new Promise<void>((r) => waiters.push(r));
      }
    },
    stderr: () => err,
    exited: () => child.exitCode !== null || child.signalCode !== null,
  };
  await d.write(
    `${JSON.stringify({ jsonrpc: '2.0', id: 'init', method: 'initialize', params: { protocolVersion: '2025-06-18', capabilities: {}, clientInfo: { name: 'attack', version: '1' } } })}\n`,
  );
  expect((await d.answer('init')).result).toBeDefined();
  await d.write(`${JSON.stringify({ jsonrpc: '2.0', method: 'notifications/initialized' })}\n`);
  return d;
}

/** A `ping` request line of exactly `bytes` bytes, newline excluded (padding in params._meta). */
function pingOf(id: number | string, bytes: number): Buffer {
  const head = `{"jsonrpc":"2.0","id":${JSON.stringify(id)},"method":"ping","params":{"_meta":{"pad":"`;
  const tail = '"}}}';
  const pad = bytes - Buffer.byteLength(head) - Buffer.byteLength(tail);
  expect(pad).toBeGreaterThan(0);
  return Buffer.concat([Buffer.from(head), Buffer.alloc(pad, 0x78), Buffer.from(tail)]);
}
const NL = Buffer.from('\n');

describe('the stdio limit at its edge', () => {
  it('a message of exactly 10 MiB with its newline is answered; one and two bytes more get -32600; the server goes on', async () => {
    const d = await serve();
    await d.write(Buffer.concat([pingOf(1, LIMIT - 1), NL]));
    expect((await d.answer(1)).result).toEqual({});
    await d.write(Buffer.concat([pingOf(2, LIMIT), NL]));
    expect((await d.answer(2)).error?.code).toBe(-32600);
    await d.write(Buffer.concat([pingOf(3, LIMIT + 1), NL]));
    expect((await d.answer(3)).error?.code).toBe(-32600);
    // with CR LF: the CR is part of the 10 MiB
    await d.write(Buffer.concat([pingOf(4, LIMIT - 2), Buffer.from('\r\n')]));
    expect((await d.answer(4)).result).toEqual({});
    await d.write(Buffer.concat([pingOf(5, 100), NL]));
    expect((await d.answer(5)).result).toEqual({});
    expect(d.exited()).toBe(false);
  }, 120_000);

  it('an over-limit line whose id is an escaped string, its newline sent alone, is answered with that id', async () => {
    const d = await serve();
    const id = 'a"b\\c\u00e9\ud83d\ude00';
    const line = pingOf(id, LIMIT + 5000);
    // in pieces that split the multi-byte characters of the id and the escapes
    for (let at = 0; at < line.length; at += 7_777)
      await d.write(line.subarray(at, Math.min(line.length, at + 7_777)));
    await d.write(NL);
    const a = await d.answer(id);
    expect(a.error?.code).toBe(-32600);
    await d.write(Buffer.concat([pingOf(6, 200), NL]));
    expect((await d.answer(6)).result).toEqual({});
  }, 120_000);

  it('500 requests in one write are each answered', async () => {
    const d = await serve();
    const lines = Array.from({ length: 500 }, (_, i) => Buffer.concat([pingOf(1000 + i, 120), NL]));
    await d.write(Buffer.concat(lines));
    for (let i = 0; i < 500; i++) expect((await d.answer(1000 + i)).result).toEqual({});
  }, 60_000);

  it('a request dripped three bytes at a time is answered once whole', async () => {
    const d = await serve();
    const line = Buffer.concat([pingOf(7, 150), NL]);
    for (let at = 0; at < line.length; at += 3) {
      await d.write(line.subarray(at, at + 3));
      await new Promise((r) => setTimeout(r, 2));
    }
    expect((await d.answer(7)).result).toEqual({});
  }, 60_000);

  it('invalid UTF-8 inside a request, in a small line and an over-limit one, leaves the server answering', async () => {
    const d = await serve();
    const bad = Buffer.from([0xff, 0xfe, 0xc3, 0x28, 0xe2, 0x82]);
    const small = pingOf(8, 200);
    small.set(bad, 80);
    await d.write(Buffer.concat([small, NL]));
    const big = pingOf(9, LIMIT + 10);
    big.set(bad, 80);
    await d.write(Buffer.concat([big, NL]));
    expect((await d.answer(9)).error?.code).toBe(-32600);
    // garbage that is not JSON at all, then a request
    await d.write(Buffer.concat([Buffer.from([0xc0, 0xaf, 0x7b, 0x0a]), pingOf(10, 100), NL]));
    expect((await d.answer(10)).result).toEqual({});
    expect(d.exited()).toBe(false);
  }, 120_000);
});

describe('session_token values that are not tokens', () => {
  it('each is a tool error (no crash, no other session): CR LF, NUL, non-ASCII, an unknown token, a revoked one, one with a path', async () => {
    const sid = await seedSession(srv.url, srv.admin, srv.workDir);
    const good = await sessionToken(srv.url, srv.admin, sid, ['report', 'read']);
    const revoked = await sessionToken(srv.url, srv.admin, newSid(), ['report', 'read']);
    const self = await request(srv, 'GET', '/v1/tokens/self', { token: revoked });
    expect(
      (await request(srv, 'DELETE', `/v1/tokens/${self.json.id}`, { token: srv.admin })).status,
    ).toBeLessThan(300);
    const d = await serve();
    const odd = [
      `${good}\r\nX-Evil: 1`,
      `${good}\u0000`,
      'hns_\u00e9\u00e9\u00e9',
      `hns_${'Z'.repeat(43)}`,
      revoked,
      `${good}/../../v1/tokens`,
      ' ',
    ];
    for (const [i, token] of odd.entries()) {
      await d.write(
        `${JSON.stringify({ jsonrpc: '2.0', id: `ctx-${i}`, method: 'tools/call', params: { name: 'session_context', arguments: { session_token: token } } })}\n`,
      );
      const a = await d.answer(`ctx-${i}`);
      expect(a.result?.isError, `${JSON.stringify(token)}: ${JSON.stringify(a)}`).toBe(true);
      expect(JSON.stringify(a)).not.toContain(good.slice(4));
    }
    // and the good one still finds its session
    await d.write(
      `${JSON.stringify({ jsonrpc: '2.0', id: 'ctx-good', method: 'tools/call', params: { name: 'session_context', arguments: { session_token: good } } })}\n`,
    );
    const ok = await d.answer('ctx-good');
    expect(ok.result?.isError).toBeFalsy();
    expect(JSON.stringify(ok)).toContain(sid);
    expect(d.stderr()).not.toContain(good.slice(4));
  }, 60_000);
});

describe('what a refused session_token answers', () => {
  // Was a FAULT: a session_token with a line break was answered "cannot reach …: Headers.append: "Bearer
  // hns_…"" after retries, the token quoted whole. Now its form is checked first (lib/client/api/token-form.ts).
  it('a malformed session_token is named malformed, not quoted, and not blamed on the server', async () => {
    const sid = await seedSession(srv.url, srv.admin, srv.workDir);
    const good = await sessionToken(srv.url, srv.admin, sid, ['report', 'read']);
    const d = await serve();
    await d.write(
      `${JSON.stringify({ jsonrpc: '2.0', id: 'crlf', method: 'tools/call', params: { name: 'session_context', arguments: { session_token: `${good}\r\nX-Evil: 1` } } })}\n`,
    );
    const answer = await d.answer('crlf');
    const a = JSON.stringify(answer);
    expect(answer.result?.isError).toBe(true);
    expect(a).not.toContain(good.slice(4));
    expect(a).not.toContain('cannot reach');
    expect(a).toContain('the session_token given is not a hansard token: it holds a line break');
    // the same for the environment's token, and for a token of another form: named, not quoted
    const e = await serve({ HANSARD_SESSION_TOKEN: `${good}/../x` });
    await e.write(
      `${JSON.stringify({ jsonrpc: '2.0', id: 'env', method: 'tools/call', params: { name: 'report_status', arguments: { state: 'working', note: 'x' } } })}\n`,
    );
    const b = JSON.stringify(await e.answer('env'));
    expect(b).toContain('HANSARD_SESSION_TOKEN is not a hansard token: it is 52 characters long, not 47');
    expect(b).not.toContain(good.slice(4));
  }, 60_000);
});

function newSid(): string {
  return `s_01M8QD${'0'.repeat(19)}${Math.floor(Math.random() * 10)}`;
}
