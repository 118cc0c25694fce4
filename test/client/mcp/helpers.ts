/**
 * Shared by the MCP suites (issue 12 item 3): `bin/hansard mcp serve --status` of the current source as a
 * real child process, driven by the MCP SDK's own client (`StdioClientTransport`) or by raw JSON-RPC
 * lines, against a real server; and the session the tools act on, seeded through the API.
 */
import { spawn } from 'node:child_process';
import { mkdirSync, utimesSync, writeFileSync } from 'node:fs';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { join } from 'node:path';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import { ApiClient } from '../../../lib/client/api/client.js';
import { uploadSession } from '../../../lib/client/api/upload.js';
import { openSession } from '../../../lib/log/write/writer.js';

/** A connected SDK client and what the server process wrote to stderr. */
export interface McpRun {
  client: Client;
  stderr(): string;
  close(): Promise<void>;
}

/** Spawns `node BIN mcp serve --status` with exactly `env` (and PATH, HOME…) in `cwd`; connects a client. */
export async function connectMcp(bin: string, env: Record<string, string>, cwd: string): Promise<McpRun> {
  const transport = new StdioClientTransport({
    command: process.execPath,
    args: [bin, 'mcp', 'serve', '--status'],
    env,
    cwd,
    stderr: 'pipe',
  });
  let err = '';
  transport.stderr?.on('data', (b: Buffer) => (err += b.toString('utf8')));
  const client = new Client({ name: 'hansard-test', version: '1.0.0' });
  await client.connect(transport);
  return { client, stderr: () => err, close: () => client.close() };
}

/** How a raw run of the server ended: every stdout line, stderr, and when the first answer came. */
export interface RawRun {
  lines: string[];
  stderr: string;
  code: number | null;
  /** ms from spawn to the `initialize` answer */
  initializeMs: number;
}

/**
 * Runs the server with `messages` written as JSON-RPC lines, one after each answer to the one before it
 * (notifications and raw string lines answer nothing: the next follows at once), then closes stdin and
 * waits for the exit.
 */
export function rawMcp(
  bin: string,
  env: Record<string, string>,
  cwd: string,
  messages: (Record<string, unknown> | string)[],
): Promise<RawRun> {
  const started = performance.now();
  const child = spawn(process.execPath, [bin, 'mcp', 'serve', '--status'], { env, cwd });
  // A server that exited early (the failure under test) makes the next write EPIPE: its lines tell.
  child.stdin.on('error', () => {});
  let out = '';
  let err = '';
  let initializeMs = -1;
  let next = 0;
  const send = () => {
    while (next < messages.length) {
      const m = messages[next++]!;
      // A string is written as it is (a line that is not JSON-RPC): no answer is awaited.
      if (typeof m === 'string') {
        child.stdin.write(`${m}\n`);
        continue;
      }
      child.stdin.write(`${JSON.stringify({ jsonrpc: '2.0', ...m })}\n`);
      if ('id' in m) return;
    }
    child.stdin.end();
  };
  child.stdout.setEncoding('utf8').on('data', (s: string) => {
    const before = out.split('\n').length;
    out += s;
    if (initializeMs < 0) initializeMs = performance.now() - started;
    for (let i = before; i < out.split('\n').length; i++) send();
  });
  child.stderr.setEncoding('utf8').on('data', (s: string) => (err += s));
  send();
  return new Promise((done) => {
    child.on('close', (code) =>
      done({ lines: out.split('\n').filter((l) => l !== ''), stderr: err, code, initializeMs }),
    );
  });
}

/** A session the server holds one segment of (a `message`), uploaded with `token`; returns its id. */
export async function seedSession(url: string, token: string, workDir: string): Promise<string> {
  mkdirSync(workDir, { recursive: true });
  const w = openSession(workDir, { agent: 'claude-code' });
  w.message({ user_id: 'priya', text: 'fix the parser' });
  w.end();
  await uploadSession(w.dir, { client: new ApiClient({ url, token }) });
  return w.sid;
}

/** Mints a session-bound token for `sid` through the API. */
export async function sessionToken(
  url: string,
  admin: string,
  sid: string,
  scopes: string[],
): Promise<string> {
  const res = await new ApiClient({ url, token: admin }).request('POST', `/v1/sessions/${sid}/tokens`, {
    body: JSON.stringify({ scopes }),
    contentType: 'application/json',
  });
  return (res.body as { token: string }).token;
}

/** Writes a Claude Code mapping state as the hook keeps it (`<state>/claude-code/<id>.json`). */
export function writeHookState(
  state: string,
  claudeSessionId: string,
  f: { sid: string; cwd: string; ended?: boolean; token?: string | null; mtime?: Date },
): void {
  mkdirSync(join(state, 'claude-code'), { recursive: true });
  const path = join(state, 'claude-code', `${claudeSessionId}.json`);
  const expires = new Date(Date.now() + 3_600_000 * 24).toISOString();
  writeFileSync(
    path,
    JSON.stringify({
      version: 1,
      sid: f.sid,
      main: { w: 'w_01KZVVGRNTBMSD610TK2GA9BFS', turnId: null, pending: [], ended: f.ended ?? false },
      subagents: {},
      tasks: [],
      fifo: {},
      counter: 0,
      token: f.token ? { token: f.token, id: 'tok_x', expires_at: expires } : null,
      cwd: f.cwd,
      clock: { origin: Date.now(), last: 0 },
    }),
  );
  if (f.mtime) utimesSync(path, f.mtime, f.mtime);
}

/** A loopback proxy to a real server that forwards every request as it is and notes `METHOD path` of each. */
export interface CountingProxy {
  url: string;
  /** `GET /v1/tokens/self`, … in the order they came */
  seen: string[];
  close(): Promise<void>;
}

/** Starts a `CountingProxy` in front of `target` (a base URL). */
export async function countingProxy(target: string): Promise<CountingProxy> {
  const seen: string[] = [];
  const server = createServer(async (req, res) => {
    seen.push(`${req.method} ${req.url}`);
    const chunks: Buffer[] = [];
    for await (const c of req) chunks.push(c as Buffer);
    const headers = Object.fromEntries(
      Object.entries(req.headers).filter(([k]) => !['host', 'connection', 'content-length'].includes(k)),
    ) as Record<string, string>;
    const up = await fetch(`${target}${req.url}`, {
      method: req.method,
      headers,
      ...(chunks.length ? { body: Buffer.concat(chunks) } : {}),
    });
    res.writeHead(up.status, { 'content-type': up.headers.get('content-type') ?? 'application/json' });
    res.end(Buffer.from(await up.arrayBuffer()));
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  const port = (server.address() as AddressInfo).port;
  return {
    url: `http://127.0.0.1:${port}`,
    seen,
    close: () =>
      new Promise((r) => {
        server.closeAllConnections();
        server.close(() => r());
      }),
  };
}
