/**
 * The servers of the HTTP tests, on 127.0.0.1 with an OS-chosen port and a fresh temp data directory:
 * `startServer` (`createApp` over the local stores in this process, or over stores the test builds) and
 * `startRealServer` (the server of `hansard serve`, lib/deploy/local-serve.ts, with its own stores and Node's own
 * limits). `useServer` is what a suite calls: it starts one of them in `beforeAll`, makes the tenants and
 * tokens the suite names, and in `afterAll` checks that the app logged no unhandled error, then closes it.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { serve } from '@hono/node-server';
import { afterAll, beforeAll, expect } from 'vitest';
import { openLocalStores } from '../../lib/deploy/local.js';
import { localSearch } from '../../lib/deploy/local-search.js';
import { startServer as startServe } from '../../lib/deploy/local-serve.js';
import { type AppDeps, createApp } from '../../lib/http/index.js';
import { ensureTenant, mintToken, type Scope } from '../../lib/service/index.js';
import { SearchDrain } from '../../lib/service/search/drain.js';
import type { Stores } from '../../lib/store/index.js';
import { request } from './http.js';

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
  /**
   * Indexes what the search queue holds now (issue 30; the server's drain, run by hand: no timer runs in
   * these servers), answering how many entries it indexed; 0 where the stores have no search.
   */
  indexNow(): Promise<number>;
  close(): Promise<void>;
}

/** `createApp`'s dependencies a test may give; the stores and the log are the server's own. */
export type ServerDeps = Omit<AppDeps, 'segments' | 'state' | 'log'>;

/**
 * Starts `createApp` on 127.0.0.1 with an OS-chosen port, over `openLocalStores(<temp>/data)`.
 * @param deps more of `createApp`'s dependencies (limits, a rate limiter, a clock)
 * @param openStores other stores to serve (e.g. ones that inject faults), given the data directory
 * @param node.overrideGlobalObjects false keeps node-server from swapping the global Request/Response for
 *   its own (needed where msw wraps them in the same process)
 */
export async function startServer(
  deps: ServerDeps = {},
  openStores: (dataDir: string) => Stores = openLocalStores,
  node: { overrideGlobalObjects?: boolean } = {},
): Promise<TestServer> {
  const root = mkdtempSync(join(tmpdir(), 'hansard-http-'));
  const dataDir = join(root, 'data');
  const workDir = join(root, 'work');
  const stores = openStores(dataDir);
  const logged: string[] = [];
  const log = (m: string, e?: unknown) => logged.push(`${m} ${String(e ?? '')}`);
  // Search over the state store's SQLite (as `hansard serve`), unless the test gives its own or none.
  const search = deps.search !== undefined ? deps.search : localSearch(stores.state);
  const app = createApp({ ...deps, ...stores, search, log });
  const drain = search?.queue
    ? new SearchDrain({
        deps: {
          segments: stores.segments,
          state: stores.state,
          index: search.index,
          now: deps.now ?? (() => new Date()),
        },
        queue: search.queue,
        log,
      })
    : null;
  const server = await new Promise<ReturnType<typeof serve>>((resolve) => {
    const s = serve({ fetch: app.fetch, hostname: '127.0.0.1', port: 0, ...node }, () => resolve(s));
  });
  const port = (server.address() as AddressInfo).port;
  return {
    url: `http://127.0.0.1:${port}`,
    port,
    dataDir,
    workDir,
    stores,
    logged,
    indexNow: async () => (drain ? drain.runOnce() : 0),
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

/** The client timeouts of the real server, shortened so a test can watch them fire. */
export interface ServeTimeouts {
  headersTimeout: number;
  requestTimeout: number;
}

/** The real server of `hansard serve` on 127.0.0.1, port 0, a fresh data dir, and a known admin token. */
export interface RealServer extends TestServer {
  /** tenant `local`'s bootstrap admin token (all scopes) */
  admin: string;
  /** what the server printed (the banner: it carries tokens by design) */
  printed: string[];
}

/**
 * Starts `startServer` of lib/deploy/local-serve.ts, as `hansard serve` does, with short client timeouts (1 s for
 * headers, 1.5 s for a request) and no rate limit. Its stores stay inside it: `stores` throws.
 */
export async function startRealServer(
  timeouts: ServeTimeouts = { headersTimeout: 1000, requestTimeout: 1500 },
  o: { digester?: boolean; allowPrivateAlertTargets?: boolean } = {},
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
    ...(o.digester === false ? { digester: false } : {}),
    ...(o.allowPrivateAlertTargets ? { allowPrivateAlertTargets: true } : {}),
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
    indexNow: () => running.indexNow(),
    async close() {
      await running.close();
      rmSync(root, { recursive: true, force: true });
    },
  };
}

/** A tenant with its bootstrap admin token (all scopes). */
export interface TestTenant {
  name: string;
  admin: string;
}

/** Creates a tenant through `ensureTenant`, as first start does. @throws Error when it exists */
export async function makeTenant(srv: TestServer, name: string): Promise<TestTenant> {
  const created = await ensureTenant(srv.stores.state, name, new Date());
  if (!created) throw new Error(`tenant ${name} already exists`);
  return { name, admin: created.token };
}

/** A token of `tenant` with exactly these scopes, optionally bound to one session (through the store). */
export async function mint(
  srv: TestServer,
  tenant: string,
  scopes: Scope[],
  session: string | null = null,
): Promise<string> {
  const created = await mintToken(srv.stores.state, tenant, { scopes, session, label: 'test' }, new Date());
  return created.token;
}

/** A token a suite wants: its scopes, of which tenant (default the first), bound to a session or not. */
export type TokenSpec<T extends string> = Scope[] | { scopes: Scope[]; tenant?: T; session?: string | null };

/** What `useServer` starts and makes. */
export interface UseServerOptions<T extends string, K extends string> {
  /**
   * Serve with the real server of `hansard serve` (`startRealServer`; `true` for its default timeouts)
   * instead of `createApp` in this process. It holds tenant `local` only, and mints tokens through the API.
   */
  real?: boolean | ServeTimeouts;
  /**
   * false: the real server runs no digester. Its scheduled digests are files under `<data>/tenants`
   * written on their own clock (300 s), so a suite comparing those files before and after a request
   * must not run one: a slow run crosses a digest and sees a change no request made.
   */
  digester?: boolean;
  /** the real server lets alert targets be loopback or private addresses (`--allow-private-alert-targets`) */
  allowPrivateAlertTargets?: boolean;
  /** more of `createApp`'s dependencies (limits, a rate limiter, a clock) */
  deps?: ServerDeps;
  /** the stores `createApp` serves, given the data directory (default the local stores) */
  stores?: (dataDir: string) => Stores;
  /** the tenants to create, in order; the first is `srv.tenant` (default `['local']`) */
  tenants?: readonly T[];
  /** tokens to mint once the tenants exist, by the name the suite reads them as: `srv.tokens.<name>` */
  tokens?: Record<K, TokenSpec<T>>;
  /**
   * What the server may log while the suite runs; the default is nothing (every line it logs is an
   * unhandled error). A suite whose cases make it log on purpose says what that looks like.
   */
  mayLog?: RegExp;
}

/** The server of a suite: a `RealServer` (readable from `beforeAll` on) with its tenants and tokens. */
export interface SuiteServer<T extends string, K extends string> extends RealServer {
  /** the first tenant (`admin` is its admin token) */
  tenant: TestTenant;
  tenants: Record<T, TestTenant>;
  tokens: Record<K, string>;
}

/**
 * The server of one suite (a test file or a `describe`): registers a `beforeAll` that starts it, creates
 * `tenants` and mints `tokens`, and an `afterAll` that expects nothing logged (but what `mayLog` allows)
 * and closes it. The object returned can be passed to `request`, `expectError`… right away; its fields are
 * read once the server runs (reading one earlier throws).
 * @example
 *   const srv = useServer({ tenants: ['acme', 'globex'], tokens: { reader: ['read'], other: { tenant: 'globex', scopes: ['read'] } } });
 *   it('lists', async () => expect((await request(srv, 'GET', '/v1/sessions', { token: srv.tokens.reader })).status).toBe(200));
 */
export function useServer<T extends string = 'local', K extends string = never>(
  opts: UseServerOptions<T, K> = {},
): SuiteServer<T, K> {
  let running: TestServer | RealServer | undefined;
  const tenants = {} as Record<T, TestTenant>;
  const tokens = {} as Record<K, string>;
  const names = opts.tenants ?? (['local'] as unknown as readonly T[]);
  const live = () => {
    if (!running) throw new Error('useServer: the server starts in beforeAll; read it in a test or a hook');
    return running;
  };
  const first = () => tenants[names[0]!];

  beforeAll(async () => {
    if (opts.real) {
      const real = await startRealServer(opts.real === true ? undefined : opts.real, {
        ...(opts.digester === false ? { digester: false } : {}),
        ...(opts.allowPrivateAlertTargets ? { allowPrivateAlertTargets: true } : {}),
      });
      running = real;
      for (const name of names) {
        if (name !== 'local')
          throw new Error(`useServer: the real server holds tenant local only, not ${name}`);
        tenants[name] = { name, admin: real.admin };
      }
    } else {
      const srv = await startServer(opts.deps, opts.stores);
      running = srv;
      for (const name of names) tenants[name] = await makeTenant(srv, name);
    }
    for (const [key, spec] of Object.entries(opts.tokens ?? {}) as [K, TokenSpec<T>][]) {
      const { scopes, tenant = names[0]!, session = null } = Array.isArray(spec) ? { scopes: spec } : spec;
      tokens[key] = await mintFor(live(), tenants[tenant], scopes, session, !!opts.real);
    }
  });

  afterAll(async () => {
    if (!running) return;
    try {
      const allowed = opts.mayLog;
      expect(allowed ? running.logged.filter((l) => !allowed.test(l)) : running.logged).toEqual([]);
    } finally {
      await running.close();
    }
  });

  return {
    get url() {
      return live().url;
    },
    get port() {
      return live().port;
    },
    get dataDir() {
      return live().dataDir;
    },
    get workDir() {
      return live().workDir;
    },
    get stores() {
      return live().stores;
    },
    get logged() {
      return live().logged;
    },
    indexNow: () => live().indexNow(),
    get printed() {
      const srv = live();
      return 'printed' in srv ? srv.printed : [];
    },
    get admin() {
      return first().admin;
    },
    get tenant() {
      return first();
    },
    tenants,
    tokens,
    close: () => live().close(),
  };
}

/** Mints a token: through the store in this process, or as the tenant's admin through `POST /v1/tokens`. */
async function mintFor(
  srv: TestServer,
  tenant: TestTenant,
  scopes: Scope[],
  session: string | null,
  overApi: boolean,
): Promise<string> {
  if (!overApi) return mint(srv, tenant.name, scopes, session);
  const a = await request(srv, 'POST', '/v1/tokens', {
    token: tenant.admin,
    json: session === null ? { scopes } : { scopes, session },
  });
  if (a.status !== 201) throw new Error(`minting a token answered ${a.status}: ${a.text}`);
  return a.json.token as string;
}
