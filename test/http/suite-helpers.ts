/**
 * Helpers of the isolation and hostile-input suites: the real `hansard serve` server (lib/cli/serve.ts) in
 * this process, requests that do not follow redirects, raw TCP exchanges for what `fetch` will not send
 * (lying lengths, slow or oversized headers, unnormalized paths), and a snapshot of what a tenant stores.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import http from 'node:http';
import net from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { expect } from 'vitest';
import { startServer as startServe } from '../../lib/cli/serve.js';
import type { Stores } from '../../lib/store/index.js';
import { type Answer, type TestServer, tenantsDigest } from './helpers.js';

/** The real server of `hansard serve` on 127.0.0.1, port 0, a fresh data dir, and a known admin token. */
export interface RealServer extends TestServer {
  /** tenant `local`'s bootstrap admin token (all scopes) */
  admin: string;
  /** what the server printed (the banner: it carries tokens by design) */
  printed: string[];
}

/**
 * Starts `startServer` of lib/cli/serve.ts, as `hansard serve` does, with short client timeouts so a test
 * can watch them fire. Its stores stay inside it: `stores` throws.
 */
export async function startRealServer(
  timeouts: { headersTimeout: number; requestTimeout: number } = {
    headersTimeout: 1000,
    requestTimeout: 1500,
  },
): Promise<RealServer> {
  const root = mkdtempSync(join(tmpdir(), 'hansard-real-'));
  const dataDir = join(root, 'data');
  const workDir = join(root, 'work');
  const admin = `hns_${'H0st1le'.repeat(6)}A`;
  const logged: string[] = [];
  const printed: string[] = [];
  const running = await startServe({
    port: 0,
    host: '127.0.0.1',
    data: dataDir,
    bootstrapToken: admin,
    print: (l) => printed.push(l),
    log: (l) => logged.push(l),
    rateLimit: 0,
    ...timeouts,
  });
  return {
    url: running.url,
    port: running.port,
    dataDir,
    workDir,
    get stores(): Stores {
      throw new Error('the real server keeps its stores to itself: use the API');
    },
    logged,
    admin,
    printed,
    async close() {
      await running.close();
      rmSync(root, { recursive: true, force: true });
    },
  };
}

/** One request as the suites describe it. `path` is sent as given (already encoded). */
export interface Req {
  method: string;
  path: string;
  token?: string | null;
  /** a JSON value to send */
  json?: unknown;
  /** raw body bytes or text */
  body?: Uint8Array | string;
  headers?: Record<string, string>;
}

/** Sends `req` with fetch, never following a redirect (the board pages answer 302/303). */
export async function send(srv: { url: string }, req: Req): Promise<Answer> {
  const headers: Record<string, string> = { ...req.headers };
  if (req.token) headers.authorization = `Bearer ${req.token}`;
  let body: Uint8Array | string | undefined;
  if (req.json !== undefined) {
    body = JSON.stringify(req.json);
    headers['content-type'] ??= 'application/json';
  } else if (req.body !== undefined) {
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
 * Writes `parts` to a fresh TCP connection, `gapMs` apart, then waits until the server closes it or
 * `waitMs` pass. The server closing the connection is what a slow or lying client must get.
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

/** `/healthz` answers 200: the server is still up. */
export async function expectAlive(srv: { url: string }): Promise<void> {
  const a = await send(srv, { method: 'GET', path: '/healthz' });
  expect(a.status).toBe(200);
  expect(a.json).toMatchObject({ ok: true });
}

/**
 * What a tenant stores, as far as the API and the disk show it: the segment files' digest, and the
 * answers (status and body) of a few reads of one session and writer through `token`.
 */
export async function snapshot(
  srv: RealServer | TestServer,
  token: string,
  probe: { sid: string; w: string },
): Promise<string[]> {
  const reads = [
    `/v1/sessions/${probe.sid}/writers/${probe.w}`,
    `/v1/sessions/${probe.sid}/status`,
    '/v1/sessions?limit=200',
  ];
  const out = [tenantsDigest(srv)];
  for (const path of reads) {
    const a = await send(srv, { method: 'GET', path, token });
    out.push(`${a.status} ${a.text}`);
  }
  const tokens = await send(srv, { method: 'GET', path: '/v1/tokens', token });
  const ids = (tokens.json?.tokens ?? []).map((t: { id: string; revoked_at: unknown }) => [
    t.id,
    t.revoked_at,
  ]);
  out.push(JSON.stringify(ids));
  return out;
}

/** Every string of `secrets` that occurs in `text`. */
export function leaked(text: string, secrets: Iterable<string>): string[] {
  return [...secrets].filter((s) => s.length > 0 && text.includes(s));
}
