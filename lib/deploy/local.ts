/**
 * The local deployment's wiring (DESIGN §1, §2 `lib/deploy`), in one place: the filesystem segment store
 * and the SQLite state store in a data directory (./local-stores.ts, re-exported here), the in-process
 * rate limiter, `createApp`, and the app on `@hono/node-server`. `hansard serve`'s start (./local-serve.ts)
 * adds the data directory's lock, tenant `local` and its tokens, the banner.
 *
 * Only ./local-serve.ts, bench/ and test code import this module (test/architecture/import-graph.test.ts): the Lambda
 * bundles never hold SQLite or better-sqlite3 (test/infra/bundle-contents.test.ts).
 */
import type { Server, ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { type HttpBindings, serve } from '@hono/node-server';
import type { Hono } from 'hono';
import type { DigestSigner } from '../audit/signer.js';
import type { Limits } from '../contract/limits.js';
import { createApp } from '../http/app.js';
import type { AppEnv } from '../http/auth.js';
import { MemoryRateLimiter } from '../ratelimit/memory.js';
import { NoopRateLimiter } from '../ratelimit/noop.js';
import type { SearchDeps } from '../service/search/deps.js';
import type { AuditConfig } from '../service/shared/audit-config.js';
import type { AlertServiceDeps } from '../service/shared/context.js';
import type { SignInServiceDeps } from '../service/sign-in/deps.js';
import type { Stores } from '../store/index.js';

/** The default per-token limit of a local server: 600 requests a minute. */
export const DEFAULT_RATE_LIMIT_PER_MINUTE = 600;

/** The stores alone, for a command that needs no app (`hansard tenant create`). */
export { openLocalStores } from './local-stores.js';

export interface LocalAppOptions {
  /** where unhandled errors go (with the error), never given a token or an event's text */
  log: (message: string, err?: unknown) => void;
  /** one line per request: method, path (never the query), status, duration */
  requestLog?: ((line: string) => void) | undefined;
  /** requests per minute per token, in bursts of as many (default 600); 0 turns the limit off */
  rateLimit?: number | undefined;
  /** what the deployment changes of `DEFAULT_LIMITS` (quota, chunk size, concurrent replays) */
  limits?: Partial<Limits> | undefined;
  /** the clock; tests fix it */
  now?: (() => Date) | undefined;
  /** aborted when the server stops: the board's live streams end at once (`AppDeps.stopping`) */
  stopping?: AbortSignal | undefined;
  /** the signing keys of the digests (`hansard serve`: the data directory's LocalKeyring) */
  signer?: DigestSigner | undefined;
  /** the digest cadence (default `DEFAULT_AUDIT`) */
  audit?: Partial<AuditConfig> | undefined;
  /** alert targets' sealer and rules (issue 28); none: `/v1/alerts` answers 503 `alerts_unavailable` */
  alerts?: AlertServiceDeps | undefined;
  /** team sign-in's sealer and settings (issue 29); none: OIDC sign-in answers 503, link tokens still work */
  signIn?: SignInServiceDeps | undefined;
  /** search's engine and queue (issue 30; lib/deploy/local-search.ts `localSearch`); none: 503 */
  search?: SearchDeps | null | undefined;
}

/**
 * The app of a local server over `stores`: `createApp` with a `MemoryRateLimiter` of `o.rateLimit`
 * requests a minute per token (a `NoopRateLimiter` for 0).
 */
export function createLocalApp(stores: Stores, o: LocalAppOptions): Hono<AppEnv> {
  const perMinute = o.rateLimit ?? DEFAULT_RATE_LIMIT_PER_MINUTE;
  return createApp({
    ...stores,
    log: o.log,
    ...(o.requestLog ? { requestLog: o.requestLog } : {}),
    ...(o.limits ? { limits: o.limits } : {}),
    ...(o.now ? { now: o.now } : {}),
    ...(o.stopping ? { stopping: o.stopping } : {}),
    ...(o.signer ? { signer: o.signer } : {}),
    ...(o.audit ? { audit: o.audit } : {}),
    ...(o.alerts ? { alerts: o.alerts } : {}),
    ...(o.signIn ? { signIn: o.signIn } : {}),
    ...(o.search ? { search: o.search } : {}),
    // A stalled client's answer is aborted; node-server waits for the socket to drain and would never see
    // it, so its response (and socket) is destroyed here, which cancels the body.
    dropConnection: (env) => {
      const outgoing = (env as Partial<HttpBindings> | undefined)?.outgoing;
      outgoing?.destroy();
      return outgoing !== undefined;
    },
    rateLimiter:
      perMinute === 0
        ? new NoopRateLimiter()
        : new MemoryRateLimiter({ limit: perMinute, window_seconds: 60 }),
  });
}

export interface ListenOptions {
  /** the address to bind, e.g. `127.0.0.1` or `::1` */
  host: string;
  /** 0 picks a free port */
  port: number;
  /** ms a client may take to send a request's headers before it is disconnected (default 30 s) */
  headersTimeout?: number | undefined;
  /** ms a client may take to send a whole request, body included (default 60 s) */
  requestTimeout?: number | undefined;
}

/** How long `LocalListener.close` lets open requests run before it closes their connections: 5 s. */
export const STOP_GRACE_MS = 5_000;

export interface LocalListener {
  /** `http://host:port` (an IPv6 host in brackets) */
  url: string;
  port: number;
  /** requests received and not yet answered in full (a stalled reader's replay counts until it ends) */
  openRequests(): number;
  /**
   * Stops accepting connections and closes the idle ones at once; gives the open requests `graceMs`
   * (default `STOP_GRACE_MS`) to finish, then closes every connection left (a client that stopped
   * reading would otherwise hold the server forever). Resolves once every connection is closed, with
   * how many requests were still open at the deadline (0 when all finished in time). The stores stay open.
   */
  close(graceMs?: number): Promise<number>;
}

/**
 * Serves `app` on `@hono/node-server`; resolves once it listens.
 * @throws the listen errors of `net.Server` (EADDRINUSE, EACCES)
 */
export async function listenLocal(
  app: Pick<Hono<AppEnv>, 'fetch'>,
  o: ListenOptions,
): Promise<LocalListener> {
  // A slow client may not hold a connection open forever: Node answers 408 and closes it once the headers
  // or the whole request take longer than these (checked every `connectionsCheckingInterval` ms).
  const requestTimeout = o.requestTimeout ?? 60_000;
  const headersTimeout = Math.min(o.headersTimeout ?? 30_000, requestTimeout);
  const serverOptions = {
    requestTimeout,
    headersTimeout,
    connectionsCheckingInterval: Math.max(100, Math.min(30_000, Math.floor(headersTimeout / 4))),
  };
  const server = await new Promise<ReturnType<typeof serve>>((resolve, reject) => {
    const s = serve({ fetch: app.fetch, hostname: o.host, port: o.port, serverOptions }, () => resolve(s));
    s.once('error', reject);
  });
  let open = 0;
  server.on('request', (_req, res: ServerResponse) => {
    open++;
    res.once('close', () => open--);
  });
  const port = (server.address() as AddressInfo).port;
  const host = o.host.includes(':') ? `[${o.host}]` : o.host;
  // node-server's `serve` returns its http.Server (or an http2 one when asked, which we never do).
  const http = server as Server;
  return {
    url: `http://${host}:${port}`,
    port,
    openRequests: () => open,
    close: (graceMs = STOP_GRACE_MS) =>
      new Promise<number>((resolve) => {
        let cut = 0;
        const deadline = setTimeout(() => {
          cut = open;
          http.closeAllConnections();
        }, graceMs);
        http.close(() => {
          clearTimeout(deadline);
          resolve(cut);
        });
        // Keep-alive connections with no request would otherwise hold close() until they time out.
        http.closeIdleConnections();
      }),
  };
}
