/**
 * Helpers for the HTTP API tests: a real server on loopback over the local stores (a SQLite file and a
 * data directory in a fresh temp dir), tenants and tokens, sessions written by the real writer, a small
 * HTTP client, and the checks every error answer must pass (DESIGN §4).
 */
import { createHash } from 'node:crypto';
import { mkdtempSync, readdirSync, readFileSync, rmSync, statSync } from 'node:fs';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join, relative } from 'node:path';
import { serve } from '@hono/node-server';
import { expect } from 'vitest';
import { type AppDeps, createApp } from '../../lib/http/index.js';
import { newId, openSession, replayLines, sessionDirSegments } from '../../lib/log/index.js';
import { ensureTenant, mintToken } from '../../lib/service/index.js';
import { openLocalStores, type Scope, type Stores } from '../../lib/store/index.js';

/** A running server and what it stores into. */
export interface TestServer {
  url: string;
  port: number;
  /** the data directory (`<data>/tenants/…`, `<data>/state.sqlite`) */
  dataDir: string;
  /** scratch space for local session directories */
  workDir: string;
  stores: Stores;
  /** what the app logged as unhandled errors */
  logged: string[];
  close(): Promise<void>;
}

/**
 * Starts `createApp` over the local stores on 127.0.0.1 with an OS-chosen port.
 * @param deps more of `createApp`'s dependencies (limits, a rate limiter, a clock)
 */
export async function startServer(
  deps: Omit<AppDeps, 'segments' | 'state' | 'log'> = {},
): Promise<TestServer> {
  const root = mkdtempSync(join(tmpdir(), 'hansard-http-'));
  const dataDir = join(root, 'data');
  const workDir = join(root, 'work');
  const stores = openLocalStores(dataDir);
  const logged: string[] = [];
  const app = createApp({ ...deps, ...stores, log: (m, e) => logged.push(`${m} ${String(e ?? '')}`) });
  const server = await new Promise<ReturnType<typeof serve>>((resolve) => {
    const s = serve({ fetch: app.fetch, hostname: '127.0.0.1', port: 0 }, () => resolve(s));
  });
  const port = (server.address() as AddressInfo).port;
  return {
    url: `http://127.0.0.1:${port}`,
    port,
    dataDir,
    workDir,
    stores,
    logged,
    async close() {
      await new Promise<void>((resolve) => {
        if ('closeAllConnections' in server) server.closeAllConnections();
        server.close(() => resolve());
      });
      await stores.state.close();
      rmSync(root, { recursive: true, force: true });
    },
  };
}

/** A tenant with its bootstrap admin token (all scopes). */
export interface TestTenant {
  name: string;
  admin: string;
}

/** Creates a tenant through `ensureTenant`, as first start does. */
export async function makeTenant(srv: TestServer, name: string): Promise<TestTenant> {
  const created = await ensureTenant(srv.stores.state, name, new Date());
  if (!created) throw new Error(`tenant ${name} already exists`);
  return { name, admin: created.token };
}

/** A token of `tenant` with exactly these scopes, optionally bound to one session. */
export async function mint(
  srv: TestServer,
  tenant: string,
  scopes: Scope[],
  session: string | null = null,
): Promise<string> {
  const created = await mintToken(srv.stores.state, tenant, { scopes, session, label: 'test' }, new Date());
  return created.token;
}

/** An HTTP answer, its body read fully. */
export interface Answer {
  status: number;
  headers: Headers;
  bytes: Buffer;
  text: string;
  // biome-ignore lint/suspicious/noExplicitAny: tests read JSON answers field by field
  json: any;
}

export interface RequestOptions {
  token?: string | null;
  body?: Uint8Array | string | null;
  /** a JSON value to send as the body */
  json?: unknown;
  headers?: Record<string, string>;
}

/** One request over real HTTP. `path` is sent as given (already encoded). */
export async function request(
  srv: TestServer,
  method: string,
  path: string,
  opts: RequestOptions = {},
): Promise<Answer> {
  const headers: Record<string, string> = { ...opts.headers };
  if (opts.token) headers.authorization = `Bearer ${opts.token}`;
  let body: Uint8Array | string | undefined;
  if (opts.json !== undefined) {
    body = JSON.stringify(opts.json);
    headers['content-type'] ??= 'application/json';
  } else if (opts.body !== undefined && opts.body !== null) {
    body = opts.body;
    headers['content-type'] ??= 'application/x-ndjson';
  }
  const res = await fetch(`${srv.url}${path}`, { method, headers, body });
  const bytes = Buffer.from(await res.arrayBuffer());
  const text = bytes.toString('utf8');
  let json: unknown = null;
  if ((res.headers.get('content-type') ?? '').includes('application/json')) json = JSON.parse(text);
  return { status: res.status, headers: res.headers, bytes, text, json };
}

/** `POST …/chunks?offset=N` with `body`. */
export function postChunk(
  srv: TestServer,
  token: string | null,
  sid: string,
  w: string,
  offset: number | null,
  body: Uint8Array | string,
): Promise<Answer> {
  const q = offset === null ? '' : `?offset=${offset}`;
  return request(srv, 'POST', `/v1/sessions/${sid}/writers/${w}/chunks${q}`, { token, body });
}

/** Matches a stack frame (`at fn (/path/file.ts:1:2)`) or a bare source path with a line number. */
const STACK = /\bat\s+\S*\s*\(?(?:file:\/\/)?\/[^\s)]+:\d+|\/[\w./-]+\.(?:ts|js|mjs|cjs):\d+/;

/** The body has no stack trace, no file path of the server, and does not echo the data directory. */
export function expectNoStackTrace(srv: TestServer, a: Answer): void {
  expect(a.text).not.toMatch(STACK);
  expect(a.text).not.toContain(srv.dataDir);
  expect(a.text).not.toContain('node_modules');
}

/**
 * Asserts an error answer: its status, a JSON body that is exactly
 * `{"error":{"code","message","details"}}` with a non-empty message and an object of details, the code
 * (when given), and no stack trace. Returns the `error` object.
 */
export function expectError(
  srv: TestServer,
  a: Answer,
  status: number,
  code?: string,
): { code: string; message: string; details: Record<string, unknown> } {
  expect(a.status, a.text).toBe(status);
  expect(a.headers.get('content-type') ?? '').toContain('application/json');
  expect(Object.keys(a.json as object)).toEqual(['error']);
  const err = a.json.error;
  expect(Object.keys(err).sort()).toEqual(['code', 'details', 'message']);
  expect(typeof err.code).toBe('string');
  expect(err.code).toMatch(/^[a-z][a-z0-9_]*$/);
  expect(typeof err.message).toBe('string');
  expect(err.message.length).toBeGreaterThan(0);
  expect(typeof err.details).toBe('object');
  expect(err.details).not.toBeNull();
  expect(Array.isArray(err.details)).toBe(false);
  if (code !== undefined) expect(err.code).toBe(code);
  expectNoStackTrace(srv, a);
  return err;
}

/** sha256 over every file under `<data>/tenants` (sorted relative paths, each path then its bytes). */
export function tenantsDigest(srv: TestServer): string {
  const root = join(srv.dataDir, 'tenants');
  const files: string[] = [];
  const walk = (dir: string) => {
    let entries: string[];
    try {
      entries = readdirSync(dir);
    } catch {
      return;
    }
    for (const name of entries) {
      const p = join(dir, name);
      if (statSync(p).isDirectory()) walk(p);
      else files.push(p);
    }
  };
  walk(root);
  files.sort();
  const h = createHash('sha256');
  for (const f of files) {
    h.update(`${relative(root, f)}\0`);
    h.update(readFileSync(f));
    h.update('\0');
  }
  return h.digest('hex');
}

/** The on-disk file of a stored segment. */
export function storedSegmentPath(srv: TestServer, tenant: string, sid: string, w: string): string {
  return join(srv.dataDir, 'tenants', tenant, 'sessions', sid, `${w}.jsonl`);
}

/**
 * Runs a request that must be refused and checks that nothing changed: the bytes under `<data>/tenants`
 * and the writer's index entry (`GET …/writers/{w}`: status and body) are the same before and after.
 */
export async function expectRefusedUnchanged(
  srv: TestServer,
  probe: { token: string; sid: string; w: string },
  send: () => Promise<Answer>,
  status: number,
  code?: string,
): Promise<{ code: string; message: string; details: Record<string, unknown> }> {
  const writerPath = `/v1/sessions/${probe.sid}/writers/${probe.w}`;
  const digestBefore = tenantsDigest(srv);
  const writerBefore = await request(srv, 'GET', writerPath, { token: probe.token });
  const err = expectError(srv, await send(), status, code);
  expect(tenantsDigest(srv)).toBe(digestBefore);
  const writerAfter = await request(srv, 'GET', writerPath, { token: probe.token });
  expect(writerAfter.status).toBe(writerBefore.status);
  expect(writerAfter.text).toBe(writerBefore.text);
  return err;
}

/** A session segment written by the real writer, and its bytes. */
export interface LocalSegment {
  sid: string;
  w: string;
  /** the session directory */
  dir: string;
  /** the segment file */
  path: string;
  bytes: Buffer;
  /** each line with its `\n` */
  lines: Buffer[];
}

/** Reads a segment file back. */
export function readLocal(seg: Omit<LocalSegment, 'bytes' | 'lines'>): LocalSegment {
  const bytes = readFileSync(seg.path);
  return { ...seg, bytes, lines: splitLines(bytes) };
}

/**
 * Writes a session segment with the library writer under `root`: writer.start, a join, a message, a turn
 * with an action, its result, an output, the turn's end, and (unless `open`) writer.end.
 * @param opts.sid write into this session (a second writer); default a new session
 */
export function writeSession(
  root: string,
  opts: { sid?: string; agent?: string; text?: string; open?: boolean } = {},
): LocalSegment {
  const s = openSession(root, {
    sid: opts.sid ?? newId('s'),
    agent: opts.agent ?? 'test-agent',
    host: 'test-host',
    pid: 4242,
  });
  s.participantJoin({ user_id: 'priya', display_name: 'Priya' });
  const m = s.message({ user_id: 'priya', text: opts.text ?? 'restart the payments worker' });
  const t = s.turnStart({ context_message_ids: [m.id] });
  const a = s.action({ turn_id: t.id, tool: 'bash', input: { cmd: 'systemctl restart payments' } });
  s.actionResult({ action_id: a.id, status: 'ok', output: 'restarted', exit_code: 0 });
  s.output({ turn_id: t.id, text: 'The payments worker is restarted.' });
  s.turnEnd({ turn_id: t.id, status: 'completed' });
  if (opts.open) s.close();
  else s.end({ reason: 'done' });
  return readLocal({ sid: s.sid, w: s.w, dir: s.dir, path: s.path });
}

/** Splits bytes into lines, each keeping its `\n` (a last line without one is kept as it is). */
export function splitLines(bytes: Buffer): Buffer[] {
  const out: Buffer[] = [];
  let start = 0;
  while (start < bytes.length) {
    const nl = bytes.indexOf(0x0a, start);
    const end = nl === -1 ? bytes.length : nl + 1;
    out.push(bytes.subarray(start, end));
    start = end;
  }
  return out;
}

/** The merged NDJSON replay the library gives for a local session directory. */
export async function localReplay(dir: string, format: 'ndjson' | 'text' = 'ndjson'): Promise<string> {
  let out = '';
  for await (const line of replayLines(sessionDirSegments(dir), format)) out += line;
  return out;
}

/** Uploads a whole local segment as one chunk at offset 0 and expects 201. */
export async function upload(srv: TestServer, token: string, seg: LocalSegment): Promise<Answer> {
  const a = await postChunk(srv, token, seg.sid, seg.w, 0, seg.bytes);
  expect(a.status, a.text).toBe(201);
  return a;
}

/** Waits `ms` milliseconds (so index timestamps differ). */
export function sleep(ms: number): Promise<void> {
  return new Promise((r) => setTimeout(r, ms));
}
