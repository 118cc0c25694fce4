/**
 * The HTTP side of the API tests: one request helper (`request`, over fetch, never following a redirect),
 * a browser's navigation (`navigate`, over node:http, for the `Sec-Fetch-*` headers fetch will not send),
 * raw TCP exchanges for what no client sends (lying lengths, slow or oversized headers, unnormalized
 * paths), and the checks every answer must pass (the error envelope of DESIGN §4, no stack trace).
 */
import http from 'node:http';
import net from 'node:net';
import { expect } from 'vitest';

/** An HTTP answer, its body read fully. */
export interface Answer {
  status: number;
  headers: Headers;
  bytes: Buffer;
  text: string;
  // biome-ignore lint/suspicious/noExplicitAny: tests read JSON answers field by field
  json: any;
}

/** What a request carries besides its method and path. */
export interface RequestOptions {
  /** sent as `Authorization: Bearer …`; null or '' sends none */
  token?: string | null;
  /** raw body bytes or text (content type `application/x-ndjson` unless `headers` say otherwise) */
  body?: Uint8Array | string | null;
  /** a JSON value to send as the body (content type `application/json` unless `headers` say otherwise) */
  json?: unknown;
  headers?: Record<string, string>;
}

/** One request as data (the tables of the isolation and hostile suites). `path` is sent as given. */
export interface Req extends RequestOptions {
  method: string;
  path: string;
}

/**
 * One request over real HTTP, as `request(srv, 'GET', path, { token })` or `request(srv, { method, path,
 * token })`. `path` is sent as given (already encoded). Never follows a redirect: the board pages answer
 * 302/303, and a test asserts those.
 */
export function request(srv: { url: string }, req: Req): Promise<Answer>;
export function request(
  srv: { url: string },
  method: string,
  path: string,
  opts?: RequestOptions,
): Promise<Answer>;
export async function request(
  srv: { url: string },
  reqOrMethod: Req | string,
  path?: string,
  opts: RequestOptions = {},
): Promise<Answer> {
  const req: Req =
    typeof reqOrMethod === 'string' ? { ...opts, method: reqOrMethod, path: path! } : reqOrMethod;
  const headers: Record<string, string> = { ...req.headers };
  if (req.token) headers.authorization = `Bearer ${req.token}`;
  let body: Uint8Array | string | undefined;
  if (req.json !== undefined) {
    body = JSON.stringify(req.json);
    headers['content-type'] ??= 'application/json';
  } else if (req.body !== undefined && req.body !== null) {
    body = req.body;
    headers['content-type'] ??= 'application/x-ndjson';
  }
  const res = await fetch(`${srv.url}${req.path}`, { method: req.method, headers, body, redirect: 'manual' });
  const bytes = Buffer.from(await res.arrayBuffer());
  const text = bytes.toString('utf8');
  let json: unknown = null;
  if ((res.headers.get('content-type') ?? '').includes('application/json')) json = JSON.parse(text);
  return { status: res.status, headers: res.headers, bytes, text, json };
}

/** The `Sec-Fetch-*` headers a browser sends with a navigation it made itself (a typed URL, a bookmark). */
export const TYPED_NAVIGATION = {
  'sec-fetch-site': 'none',
  'sec-fetch-mode': 'navigate',
  'sec-fetch-dest': 'document',
} as const;

/**
 * A GET sent exactly as given, as a browser's navigation: `headers` default to `TYPED_NAVIGATION`, which
 * `fetch` cannot send (it always says `Sec-Fetch-Mode: cors`), hence node:http. Never follows a redirect.
 */
export function navigate(
  srv: { url: string },
  path: string,
  headers: Record<string, string> = TYPED_NAVIGATION,
): Promise<Answer> {
  return new Promise((resolve, reject) => {
    const req = http.get(`${srv.url}${path}`, { headers }, (res) => {
      const chunks: Buffer[] = [];
      res.on('data', (c: Buffer) => chunks.push(c));
      res.on('error', reject);
      res.on('end', () => {
        const bytes = Buffer.concat(chunks);
        const text = bytes.toString('utf8');
        const h = new Headers();
        for (const [k, v] of Object.entries(res.headers)) {
          for (const one of Array.isArray(v) ? v : v === undefined ? [] : [v]) h.append(k, one);
        }
        const json = (h.get('content-type') ?? '').includes('application/json') ? JSON.parse(text) : null;
        resolve({ status: res.statusCode ?? 0, headers: h, bytes, text, json });
      });
    });
    req.on('error', reject);
  });
}

/** What came back on a raw connection. */
export interface RawAnswer {
  /** the status of the first response, or null when the server closed without one */
  status: number | null;
  /** everything received, as latin1 */
  received: string;
  /** whether the server closed the connection before the test gave up */
  closed: boolean;
  /** ms from connecting to the close (or to giving up) */
  ms: number;
}

/**
 * Writes `parts` to a fresh TCP connection to 127.0.0.1:`port`, `gapMs` apart, then waits until the server
 * closes it or `waitMs` pass. The server closing the connection is what a slow or lying client must get.
 */
export function rawExchange(
  port: number,
  parts: (string | Uint8Array)[],
  opts: { gapMs?: number; waitMs?: number } = {},
): Promise<RawAnswer> {
  const { gapMs = 0, waitMs = 5000 } = opts;
  return new Promise((resolve) => {
    const t0 = Date.now();
    const socket = net.connect(port, '127.0.0.1');
    const received: Buffer[] = [];
    let done = false;
    let timer: NodeJS.Timeout | undefined;
    const finish = (closed: boolean) => {
      if (done) return;
      done = true;
      clearTimeout(timer);
      clearTimeout(giveUp);
      socket.destroy();
      const text = Buffer.concat(received).toString('latin1');
      const m = /^HTTP\/1\.[01] (\d{3})/.exec(text);
      resolve({ status: m ? Number(m[1]) : null, received: text, closed, ms: Date.now() - t0 });
    };
    const giveUp = setTimeout(() => finish(false), waitMs);
    socket.on('data', (d) => received.push(d));
    socket.on('close', () => finish(true));
    // A reset after the answer is still a close by the server.
    socket.on('error', () => finish(true));
    let i = 0;
    const next = () => {
      if (done || i >= parts.length) return;
      if (!socket.destroyed) socket.write(parts[i++]!);
      timer = setTimeout(next, gapMs);
    };
    socket.once('connect', next);
  });
}

/** The JSON body of a raw answer (after the blank line), or null. */
export function rawJson(a: RawAnswer): unknown {
  const at = a.received.indexOf('\r\n\r\n');
  if (at === -1) return null;
  const body = Buffer.from(a.received.slice(at + 4), 'latin1').toString('utf8');
  const start = body.indexOf('{');
  if (start === -1) return null;
  try {
    return JSON.parse(body.slice(start, body.lastIndexOf('}') + 1));
  } catch {
    return null;
  }
}

/** Matches a stack frame (`at fn (/path/file.ts:1:2)`) or a bare source path with a line number. */
const STACK = /\bat\s+\S*\s*\(?(?:file:\/\/)?\/[^\s)]+:\d+|\/[\w./-]+\.(?:ts|js|mjs|cjs):\d+/;

/** The body has no stack trace, no file path of the server, and does not echo the data directory. */
export function expectNoStackTrace(srv: { dataDir: string }, a: Answer): void {
  expect(a.text).not.toMatch(STACK);
  expect(a.text).not.toContain(srv.dataDir);
  expect(a.text).not.toContain('node_modules');
}

/** The `error` object of the envelope `{"error":{"code","message","details"}}`. */
export interface ErrorObject {
  code: string;
  message: string;
  details: Record<string, unknown>;
}

/**
 * Asserts an error answer: its status, a JSON body that is exactly
 * `{"error":{"code","message","details"}}` with a non-empty message and an object of details, the code
 * (when given), and no stack trace. Returns the `error` object.
 */
export function expectError(srv: { dataDir: string }, a: Answer, status: number, code?: string): ErrorObject {
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

/** `/healthz` answers 200: the server is still up. */
export async function expectAlive(srv: { url: string }): Promise<void> {
  const a = await request(srv, 'GET', '/healthz');
  expect(a.status).toBe(200);
  expect(a.json).toMatchObject({ ok: true });
}

/** Every string of `secrets` that occurs in `text`. */
export function leaked(text: string, secrets: Iterable<string>): string[] {
  return [...secrets].filter((s) => s.length > 0 && text.includes(s));
}

/** A reader that sent its request, took the status line and headers, then stopped reading. */
export interface StalledReader {
  status: number;
  /** goes away: the socket is destroyed mid-body */
  drop(): void;
}

/**
 * `GET path` with `token` on a raw socket to `srv` that takes the status line and headers, then stops
 * reading (the server's writes fill the socket's buffers and wait): a slow or stuck client.
 */
export function stalledReader(srv: { port: number }, path: string, token: string): Promise<StalledReader> {
  return new Promise((resolve, reject) => {
    const socket = net.connect(srv.port, '127.0.0.1', () => {
      socket.write(`GET ${path} HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer ${token}\r\n\r\n`);
    });
    let head = '';
    socket.on('data', (d: Buffer) => {
      head += d.toString('latin1');
      const m = /^HTTP\/1\.1 (\d{3})/.exec(head);
      if (!m || !head.includes('\r\n\r\n')) return;
      socket.pause();
      socket.removeAllListeners('data');
      resolve({ status: Number(m[1]), drop: () => socket.destroy() });
    });
    socket.on('error', reject);
  });
}
