/**
 * `hansard serve`: the local service, the embedded default (DESIGN §1). The deployment itself (the
 * filesystem and SQLite stores in a data directory, the app on `@hono/node-server`) is wired in
 * lib/deploy/local.ts; this is what the command adds. On first start it creates tenant `local` and an
 * admin token, printed once (or installs `HANSARD_BOOTSTRAP_TOKEN`); at every start it prints a board
 * link carrying a fresh board-scoped token, as Jupyter does. One server per data directory: it locks the
 * directory first (data-lock.ts) and refuses to start on one another server holds.
 */
import { createLocalApp, listenLocal, openLocalStores } from '../deploy/local.js';
import { ensureTenant } from '../service/bootstrap.js';
import { mintToken } from '../service/tokens.js';
import type { Stores } from '../store/index.js';
import { HANSARD_VERSION } from '../version.js';
import { type DataDirLock, lockDataDir } from './data-lock.js';

export const LOCAL_TENANT = 'local';
/** The label of the token a board link carries. */
const BOARD_LINK_LABEL = 'board link';
/** Lifetime of the board link's token. */
const BOARD_LINK_TTL_SECONDS = 30 * 86400;

export interface ServeOptions {
  port: number;
  host: string;
  data: string;
  bootstrapToken?: string | undefined;
  /** where the banner goes (stdout) */
  print: (line: string) => void;
  /** error log (stderr) */
  log: (line: string) => void;
  /** one line per request: method, path (never the query), status, duration; `hansard serve` prints it */
  requestLog?: (line: string) => void;
  /** ms a client may take to send a request's headers before it is disconnected (default 30 s) */
  headersTimeout?: number;
  /** ms a client may take to send a whole request, body included (default 60 s) */
  requestTimeout?: number;
  /** each tenant's storage quota in bytes (default `DEFAULT_LIMITS`: 10 GiB) */
  quotaBytes?: number | undefined;
  /** requests per minute per token, in bursts of as many (default 600); 0 turns the limit off */
  rateLimit?: number | undefined;
  /** whole-session reads (replay, segment, verify, inspect) one token may run at once (default 4) */
  maxConcurrentReplays?: number | undefined;
  /** ms a client may take none of a streamed answer before it is aborted (default 60 s) */
  streamIdleMs?: number | undefined;
  /**
   * Called after the data-directory lock was lost while serving (another process may now write the
   * directory) and the loss was logged; `hansard serve` exits. Without it the server closes itself.
   */
  onLockLost?: () => void;
}

export interface RunningServer {
  url: string;
  port: number;
  boardUrl: string;
  close(): Promise<void>;
}

/**
 * Starts the local server; resolves once it listens. `close()` stops it and releases the data directory.
 * @throws DataDirLockedError when another process serves `o.data` (DataDirUnusableError when it cannot be
 *   locked at all); the listen errors of `net.Server` (EADDRINUSE, EACCES) after releasing the lock
 */
export async function startServer(o: ServeOptions): Promise<RunningServer> {
  let close: (() => Promise<void>) | null = null;
  const lock = await lockDataDir(o.data, (err) => {
    o.log(
      `hansard: lost the lock on the data directory ${o.data} (${err.message}); another process may ` +
        'write it now, so this server stops',
    );
    if (o.onLockLost) o.onLockLost();
    else void close?.();
  });
  let stores: Stores | null = null;
  try {
    stores = openLocalStores(o.data);
    const running = await listen(o, lock, stores);
    close = running.close;
    return running;
  } catch (err) {
    await stores?.state.close();
    await lock.release();
    throw err;
  }
}

async function listen(o: ServeOptions, lock: DataDirLock, stores: Stores): Promise<RunningServer> {
  const now = new Date();
  const admin = await ensureTenant(stores.state, LOCAL_TENANT, now, o.bootstrapToken);
  // Like Jupyter, each start's link replaces the last one: earlier board links stop working, so they do
  // not pile up in `token list` (a browser signed in with one is sent to sign in again).
  for (const t of await stores.state.listTokens(LOCAL_TENANT)) {
    if (t.label === BOARD_LINK_LABEL && t.revoked_at === null) {
      await stores.state.revokeToken(LOCAL_TENANT, t.id, now.toISOString());
    }
  }
  const board = await mintToken(
    stores.state,
    LOCAL_TENANT,
    { scopes: ['board'], label: BOARD_LINK_LABEL, ttl_seconds: BOARD_LINK_TTL_SECONDS },
    now,
  );
  const app = createLocalApp(stores, {
    log: (m, e) =>
      o.log(e === undefined ? m : `${m}: ${e instanceof Error ? (e.stack ?? e.message) : String(e)}`),
    requestLog: o.requestLog,
    rateLimit: o.rateLimit,
    limits: {
      ...(o.quotaBytes !== undefined ? { tenantQuotaBytes: o.quotaBytes } : {}),
      ...(o.maxConcurrentReplays !== undefined ? { maxConcurrentReplays: o.maxConcurrentReplays } : {}),
      ...(o.streamIdleMs !== undefined ? { streamIdleMs: o.streamIdleMs } : {}),
    },
  });
  const server = await listenLocal(app, {
    host: o.host,
    port: o.port,
    headersTimeout: o.headersTimeout,
    requestTimeout: o.requestTimeout,
  });
  const { url, port } = server;
  const boardUrl = `${url}/?token=${board.token}`;
  lock.setUrl(url);
  o.print(`hansard ${HANSARD_VERSION} serving ${url} (data in ${o.data})`);
  if (admin && o.bootstrapToken) {
    o.print('');
    o.print(`Tenant "${LOCAL_TENANT}" created with the admin token from HANSARD_BOOTSTRAP_TOKEN.`);
  } else if (admin) {
    o.print('');
    o.print(`Tenant "${LOCAL_TENANT}" created. Its admin token (shown once, keep it safe):`);
    o.print(`  ${admin.token}`);
    o.print('Use it with: export HANSARD_TOKEN=<token>   (then: hansard token create --scopes ingest,read)');
  }
  o.print('');
  // Each start revokes the previous link (above): say so, not only its 30-day lifetime.
  o.print(
    'Open the board (this link signs you in until the next start of hansard serve, which prints a new one):',
  );
  o.print(`  ${boardUrl}`);
  return {
    url,
    port,
    boardUrl,
    // The lock goes last: a server started next opens the stores only after these are closed.
    close: () =>
      server
        .close()
        .then(() => stores.state.close())
        .then(() => lock.release()),
  };
}
