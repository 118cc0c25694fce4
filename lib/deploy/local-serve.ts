/**
 * The local server's start and stop behind `hansard serve` (lib/client/cli/cmd-serve.ts parses the command
 * line): the local service, the embedded default (DESIGN §1). The deployment itself (the filesystem and
 * SQLite stores in a data directory, the app on `@hono/node-server`) is wired in ./local.ts; this is
 * what a start adds. On first start it creates tenant `local` and an
 * admin token, printed once (or installs `HANSARD_BOOTSTRAP_TOKEN`); at every start it prints a board
 * link carrying a fresh board-scoped token, as Jupyter does. One server per data directory: it locks the
 * directory first (data-lock.ts) and refuses to start on one another server holds. Beside the server run
 * the digester (signed digests) and the alert worker (issue 28: the outbox's events sent to their
 * targets, secrets sealed by ./local-sealer.ts), both stopped before the stores close. Team sign-in
 * (issue 29) seals its secrets under a key file of its own (`localSignIn`).
 */
import { KeyringError, LocalKeyring } from '../audit/local-keyring.js';
import { AlertWorker, DEFAULT_ALERT_CONFIG } from '../service/alerts/index.js';
import { startDigester } from '../service/digests/digester.js';
import type { AuditConfig } from '../service/shared/audit-config.js';
import { DEFAULT_SIGN_IN_CONFIG, type SignInServiceDeps } from '../service/sign-in/deps.js';
import type { Stores } from '../store/index.js';
import { HANSARD_VERSION } from '../version.js';
import { type DataDirLock, lockDataDir } from './data-lock.js';
import { createLocalApp, listenLocal, openLocalStores, STOP_GRACE_MS } from './local.js';
import { LocalSecretSealer, SIGN_IN_SEALING } from './local-sealer.js';
import { localSearch, startSearchDrain } from './local-search.js';
import {
  ensureLocalTenant,
  exclusiveStateWarning,
  newBoardLink,
  refusedStart,
  StartRefusedError,
} from './local-start.js';

export const LOCAL_TENANT = 'local';

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
  /** the digest cadence (default `DEFAULT_AUDIT`: 300 s, doubling to a day); tests shorten it */
  audit?: Partial<AuditConfig> | undefined;
  /** ms between the digester's passes (default `DIGESTER_TICK_MS`, 5 s) */
  digestTickMs?: number | undefined;
  /** false: no digester runs (a benchmark's baseline); exports still write and sign their digest */
  digester?: boolean | undefined;
  /**
   * alert targets may be loopback, link-local or private addresses (`--allow-private-alert-targets`: tests
   * and private networks; issue 28 item 2). Off: such a target is refused when added and when sent to.
   */
  allowPrivateAlertTargets?: boolean | undefined;
  /** ms between the alert worker's passes (default 1,000); tests shorten it */
  alertPollMs?: number | undefined;
  /**
   * the board's public origin (`hansard serve --public-url`, `https://hansard.example.com`), when it is
   * reached through a proxy or another name than it listens on: the redirect URI of OIDC sign-in is
   * `{origin}/login/oidc/callback` (issue 29) and alert events link there. None: sign-in uses the origin
   * each request arrived at, alerts the address served.
   */
  publicOrigin?: string | undefined;
}

export interface RunningServer {
  url: string;
  port: number;
  /**
   * the board link (it signs a browser in), or the board's address alone when this start could not
   * store a new link (a full or read-only data directory: see serve-start.ts)
   */
  boardUrl: string;
  /**
   * Indexes what the search queue holds now, beside the drain's own timer (tests, and a command that
   * wants its search current), answering how many entries it indexed.
   */
  indexNow(): Promise<number>;
  /**
   * Stops the server: stops accepting, gives open requests `graceMs` (default 5 s) to finish, closes the
   * connections still open then (a client that stopped reading), closes the stores and releases the data
   * directory. Prints a line when it starts stopping and one when it has stopped.
   */
  close(graceMs?: number): Promise<void>;
}

/**
 * Starts the local server; resolves once it listens. `close()` stops it and releases the data directory.
 * @throws DataDirLockedError when another process serves `o.data` (DataDirUnusableError when it cannot be
 *   locked at all); StartRefusedError when its stores cannot be opened, or tenant `local` cannot be
 *   created on a first start, because the data directory refuses (full, read-only, not writable); the
 *   listen errors of `net.Server` (EADDRINUSE, EACCES) after releasing the lock
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
    try {
      stores = openLocalStores(o.data);
    } catch (err) {
      throw refusedStart(err, o.data, 'open its state database') ?? err;
    }
    // The signing key: made on the first start, under the lock, so two first starts cannot make two. A
    // data directory from before signed digests on a full or read-only disk still serves what it holds,
    // without signing (a warning says so), like its board link (serve-start.ts).
    let keyring: LocalKeyring | null = null;
    let keyWarning: string | null = null;
    let keyMade: string | null = null;
    try {
      const opened = LocalKeyring.open(o.data);
      keyring = opened.keyring;
      keyMade = opened.created?.key_id ?? null;
    } catch (err) {
      if (err instanceof KeyringError) {
        throw new StartRefusedError(
          `hansard serve cannot sign digests: ${err.message}. Restore that file from a backup (or move it aside if it is not one of yours), then start again`,
        );
      }
      const refused = refusedStart(err, o.data, 'create its signing key');
      if (!refused) throw err;
      keyWarning =
        `${refused.message.split(': hansard serve cannot')[0]}: no signing key could be made, so no session ` +
        'digest is signed and exports answer 503 until hansard serve starts again with room (docs/operations.md)';
    }
    const running = await listen(o, lock, stores, keyring, keyWarning, keyMade);
    close = running.close;
    return running;
  } catch (err) {
    await stores?.state.close();
    await lock.release();
    throw err;
  }
}

async function listen(
  o: ServeOptions,
  lock: DataDirLock,
  stores: Stores,
  keyring: LocalKeyring | null,
  keyWarning: string | null,
  keyMade: string | null,
): Promise<RunningServer> {
  // Aborted on stop: open board pages' live streams end at once rather than hold the stop for its grace.
  const stopping = new AbortController();
  // Alert targets' secrets are sealed under a key file of the data directory, made on first use (issue 28).
  const alerts = {
    sealer: new LocalSecretSealer(o.data),
    config: { ...DEFAULT_ALERT_CONFIG, allowPrivateTargets: o.allowPrivateAlertTargets === true },
  };
  const signIn = localSignIn(o.data, o.publicOrigin ?? null);
  // Search over the state store's database (issue 30): FTS5, and the queue the drain below indexes.
  const search = localSearch(stores.state);
  const app = createLocalApp(stores, {
    search,
    stopping: stopping.signal,
    log: (m, e) =>
      o.log(e === undefined ? m : `${m}: ${e instanceof Error ? (e.stack ?? e.message) : String(e)}`),
    requestLog: o.requestLog,
    rateLimit: o.rateLimit,
    signer: keyring ?? undefined,
    audit: o.audit,
    alerts,
    signIn,
    limits: {
      ...(o.quotaBytes !== undefined ? { tenantQuotaBytes: o.quotaBytes } : {}),
      ...(o.maxConcurrentReplays !== undefined ? { maxConcurrentReplays: o.maxConcurrentReplays } : {}),
      ...(o.streamIdleMs !== undefined ? { streamIdleMs: o.streamIdleMs } : {}),
    },
  });
  // The port first, the tenant and its tokens after: a start that cannot listen (the port is taken)
  // must not leave a tenant whose admin token it never showed (the next start would not show it either).
  const server = await listenLocal(app, {
    host: o.host,
    port: o.port,
    headersTimeout: o.headersTimeout,
    requestTimeout: o.requestTimeout,
  });
  let admin: Awaited<ReturnType<typeof ensureLocalTenant>>;
  let board: Awaited<ReturnType<typeof newBoardLink>>;
  try {
    const now = new Date();
    admin = await ensureLocalTenant(stores.state, LOCAL_TENANT, o.data, now, o.bootstrapToken);
    // Like Jupyter, each start's link replaces the last one: earlier board links stop working, so they do
    // not pile up in `token list` (a browser signed in with one is sent to sign in again). On a full or
    // read-only disk there is no new link, and the server serves anyway (its reads work).
    board = await newBoardLink(stores.state, LOCAL_TENANT, o.data, now);
  } catch (err) {
    await server.close(0);
    throw err;
  }
  const { url, port } = server;
  const boardUrl = board.token ? `${url}/?token=${board.token.token}` : `${url}/`;
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
  // Said once, on the start that made it (later starts say nothing): the operator backs up its .pem.
  if (keyring && keyMade) {
    o.print('');
    o.print(`Made the key that signs session digests: ${keyMade} (${keyring.dir}/; hansard keys --help)`);
  }
  o.print('');
  for (const warning of [exclusiveStateWarning(stores.state, o.data), board.warning, keyWarning]) {
    if (warning) o.log(`hansard: warning: ${warning}`);
  }
  if (board.token) {
    // Each start revokes the previous link (above): say so, not only its 30-day lifetime.
    o.print(
      'Open the board (this link signs you in until the next start of hansard serve, which prints a new one):',
    );
  } else {
    o.print('The board (no new sign-in link this start: the data directory refused to store it):');
  }
  o.print(`  ${boardUrl}`);
  // Signed digests of the sessions due one (issue 15.2); a failure is a line on stderr, never a client's.
  const digester =
    keyring && o.digester !== false
      ? startDigester(
          { ...stores, signer: keyring, now: () => new Date(), audit: o.audit, log: o.log },
          o.digestTickMs,
        )
      : null;
  // The alert worker sends what the outbox holds (a restart sends what the last run left), its events'
  // links pointing at this server's board (its public origin when one is given).
  const alertWorker = new AlertWorker(
    {
      state: stores.state,
      segments: stores.segments,
      sealer: alerts.sealer,
      now: () => new Date(),
      config: { ...alerts.config, boardOrigin: o.publicOrigin ?? url },
    },
    { log: o.log, ...(o.alertPollMs !== undefined ? { pollMs: o.alertPollMs } : {}) },
  );
  alertWorker.start();
  // Indexing follows ingest off its path: what the last run left queued is indexed first.
  const searchDrain = startSearchDrain(stores, search, (m, e) => o.log(`${m}: ${errorText(e)}`));
  return {
    url,
    port,
    boardUrl,
    indexNow: async () => (searchDrain ? searchDrain.runOnce() : 0),
    close: async (graceMs = STOP_GRACE_MS) => {
      stopping.abort();
      // The live streams end within a tick of it: only the other requests are waited for.
      await new Promise((resolve) => setTimeout(resolve, 10));
      const open = server.openRequests();
      o.print(
        open === 0
          ? 'hansard serve stopping'
          : `hansard serve stopping: waiting up to ${graceMs / 1000} s for ${requests(open)}`,
      );
      const cut = await server.close(graceMs);
      if (cut > 0) {
        o.print(
          `hansard serve: ${requests(cut)} still running after ${graceMs / 1000} s: closed their connections`,
        );
      }
      // The digester's pass and the alert attempts under way end before the stores close (an attempt
      // takes at most its time limit; one cut short by a kill is sent again by the next start).
      await digester?.stop();
      await alertWorker.stop();
      await searchDrain?.stop();
      // The lock goes last: a server started next opens the stores only after these are closed.
      await stores.state.close();
      await lock.release();
      o.print('hansard serve stopped');
    },
  };
}

/**
 * Team sign-in's deps of a local server (issue 29): the tenants' OIDC client secrets and the board's cookie
 * keys sealed under `{data}/sign-in-secrets.key` (made on first use, apart from the alerts' key), and
 * `DEFAULT_SIGN_IN_CONFIG` with `publicOrigin` (null: the origin each request arrived at, loopback
 * included, where cookies need not be `Secure`).
 */
export function localSignIn(data: string, publicOrigin: string | null): SignInServiceDeps {
  return {
    sealer: new LocalSecretSealer(data, SIGN_IN_SEALING),
    config: { ...DEFAULT_SIGN_IN_CONFIG, publicOrigin },
  };
}

/** An error as one line of the server's log. */
const errorText = (e: unknown) => (e instanceof Error ? e.message : String(e));

/** `1 open request`, `3 open requests`. */
const requests = (n: number) => `${n} open request${n === 1 ? '' : 's'}`;
