/**
 * `hansard serve [--port 8787] [--host 127.0.0.1] [--data DIR] [--quota-bytes 10GiB] [--rate-limit 600]
 * [--max-concurrent-replays 4] [--stream-idle-seconds 60] [--allow-private-alert-targets]
 * [--public-url https://hansard.example.com]`
 */
import { resolve } from 'node:path';
import { type Command, Option } from 'commander';
import { parseByteSize } from '../../contract/limits.js';
import { UsageError } from '../api/errors.js';
import type { Io } from '../api/io.js';

export function registerServe(program: Command, io: Io): void {
  program
    .command('serve')
    .description('run the local hansard service and status board (the embedded default: files + SQLite)')
    .addOption(new Option('-p, --port <port>', 'port to listen on (0 picks a free one)').default('8787'))
    .addOption(new Option('--host <host>', 'address to bind').default('127.0.0.1'))
    .addOption(new Option('--data <dir>', 'data directory').env('HANSARD_DATA_DIR').default('./.hansard'))
    .addOption(
      new Option('--quota-bytes <size>', "each tenant's storage quota, in bytes or e.g. 500MiB, 10GiB")
        .env('HANSARD_TENANT_QUOTA_BYTES')
        .default('10GiB'),
    )
    .addOption(
      new Option('--rate-limit <n>', 'requests per minute per token (0 turns the limit off)')
        .env('HANSARD_RATE_LIMIT')
        .default('600'),
    )
    .addOption(
      new Option(
        '--max-concurrent-replays <n>',
        'whole-session reads (replays, segment downloads, verifies, inspects, board session pages) one ' +
          'token may run at once',
      )
        .env('HANSARD_MAX_CONCURRENT_REPLAYS')
        .default('4'),
    )
    .addOption(
      new Option(
        '--stream-idle-seconds <s>',
        'seconds a client may take none of a replay or segment download before it is aborted and its ' +
          'replay slot given back',
      )
        .env('HANSARD_STREAM_IDLE_SECONDS')
        .default('60'),
    )
    .addOption(
      new Option(
        '--digest-interval <s>',
        "seconds between a session's signed digests while it changes (doubling while it does not, up to a day)",
      )
        .env('HANSARD_DIGEST_INTERVAL_SECONDS')
        .default('300'),
    )
    .addOption(
      new Option(
        '--allow-private-alert-targets',
        'for tests and private networks: lets alert targets be loopback, link-local or private addresses ' +
          '(refused by default: docs/alerts.md)',
      ),
    )
    .addOption(
      new Option(
        '--public-url <url>',
        'the origin the board is reached at when not the address it listens on (a proxy, a host name): ' +
          'OIDC sign-in redirects to URL/login/oidc/callback and alert links point there (docs/deploy.md)',
      ).env('HANSARD_PUBLIC_URL'),
    )
    .addOption(
      // For benchmarks (bench/digests.ts): what the digester costs ingest. Exports still sign their digest.
      new Option('--digester <on|off>', 'run the digester (off: no scheduled digests)')
        .choices(['on', 'off'])
        .env('HANSARD_DIGESTER')
        .default('on')
        .hideHelp(),
    )
    .addHelpText(
      'after',
      `
On first start it creates tenant "local" and prints its admin token once (or installs the one in
HANSARD_BOOTSTRAP_TOKEN), and the Ed25519 key that signs each session's digests (DIR/keys/; the
digests are written every few minutes and when a writer ends: hansard keys --help, docs/audit.md).
Every start prints a board link that signs your browser in.
One server per data directory: a second serve on the same --data is refused (exit 2) with the pid of
the one that holds it (DIR/serve.lock). \`hansard tenant create --data DIR\` works beside a running server.
It sends the tenants' alerts (hansard alerts --help, docs/alerts.md) to public addresses only, unless
--allow-private-alert-targets lets targets on this machine or a private network in; the events' links
point at the address it serves (or --public-url).
Team sign-in (OIDC, docs/sign-in.md) needs nothing more on this machine: register the redirect URI
http://127.0.0.1:PORT/login/oidc/callback at the provider (the address it serves). Behind a proxy or
on another host name, give --public-url https://hansard.example.com and register
https://hansard.example.com/login/oidc/callback instead. Its secrets are sealed under
DIR/sign-in-secrets.key (made on first use; back it up with the data).
A chunk that would take a tenant past its quota is refused (413 quota_exceeded); a token that sends
more requests a minute than --rate-limit is answered 429 with Retry-After, and so is one more
whole-session read than --max-concurrent-replays (429 too_many_replays). A client that takes none of
a replay or segment download for --stream-idle-seconds is cut off, and its slot comes back.
SIGTERM or Ctrl-C stops it: open requests get 5 s to finish, then their connections are closed. A
second signal more than a second later stops it at once (one within a second, as npm start passes on
the Ctrl-C the terminal already sent, is the same stop).`,
    )
    .action((opts: ServeOptions) => serve(opts, io));
}

/** A second SIGINT/SIGTERM this soon after the first is the same one again (npm's forwarding). */
const SAME_SIGNAL_MS = 1_000;

/**
 * Why `HANSARD_BOOTSTRAP_TOKEN` is refused and what to set instead. Never repeats the value: it may be a
 * secret of something else.
 */
function badBootstrapToken(value: string): string {
  const rest = value.slice(4);
  const what = !value.startsWith('hns_')
    ? 'does not start with hns_'
    : /[^0-9A-Za-z]/.test(rest)
      ? 'has characters other than letters and digits after hns_'
      : `has ${rest.length} characters after hns_`;
  return (
    `HANSARD_BOOTSTRAP_TOKEN must be hns_ followed by 43 letters and digits (A-Z, a-z, 0-9); the one set ${what}. ` +
    'Nothing was created. Set one such as ' +
    'hns_$(openssl rand -base64 48 | tr -dc A-Za-z0-9 | head -c 43), or unset it to have one made and printed'
  );
}

/** The options of `hansard serve`, as commander parses them. */
export interface ServeOptions {
  port: string;
  host: string;
  data: string;
  quotaBytes: string;
  rateLimit: string;
  maxConcurrentReplays: string;
  streamIdleSeconds: string;
  digestInterval: string;
  digester: 'on' | 'off';
  allowPrivateAlertTargets?: boolean;
  publicUrl?: string;
}

/**
 * `--public-url`'s origin (`https://hansard.example.com`, a trailing `/` allowed).
 * @throws UsageError for anything but an http(s) origin alone (a path, query, fragment or credentials)
 */
export function publicOrigin(v: string): string {
  let url: URL | null = null;
  try {
    url = new URL(v);
  } catch {}
  if (
    !url ||
    !/^https?:$/.test(url.protocol) ||
    url.username !== '' ||
    url.password !== '' ||
    url.pathname !== '/' ||
    /[?#]/.test(v)
  ) {
    throw new UsageError(
      `--public-url ${v} is not an origin: give the scheme and host the board is reached at, such as ` +
        'https://hansard.example.com (no path: the board is served from the root)',
    );
  }
  return url.origin;
}

/**
 * `hansard serve`: checks the flags before the data directory is touched, starts the local server
 * (lib/deploy/local-serve.ts, loaded only here), and stops it on SIGINT or SIGTERM with a grace period (a
 * second signal, a second or more later, at once).
 * @throws UsageError for a flag that is not a port, size, rate or duration, a bad
 * `HANSARD_BOOTSTRAP_TOKEN`, a data directory held or unusable, or a port in use or not ours
 */
export async function serve(opts: ServeOptions, io: Io): Promise<void> {
  const port = Number(opts.port);
  if (!Number.isInteger(port) || port < 0 || port > 65535)
    throw new UsageError(`--port ${opts.port} is not a port number`);
  const quotaBytes = parseByteSize(opts.quotaBytes);
  if (quotaBytes === null || quotaBytes < 1) {
    throw new UsageError(
      `--quota-bytes ${opts.quotaBytes} is not a size: give bytes (10737418240) or a size such as 10GiB`,
    );
  }
  if (!/^\d{1,7}$/.test(opts.rateLimit)) {
    throw new UsageError(
      `--rate-limit ${opts.rateLimit} is not a number of requests per minute (0 turns the limit off)`,
    );
  }
  const rateLimit = Number(opts.rateLimit);
  if (!/^\d{1,5}$/.test(opts.maxConcurrentReplays) || Number(opts.maxConcurrentReplays) < 1) {
    throw new UsageError(
      `--max-concurrent-replays ${opts.maxConcurrentReplays} is not a number of replays a token may run at once (1 or more)`,
    );
  }
  const maxConcurrentReplays = Number(opts.maxConcurrentReplays);
  const streamIdleSeconds = Number(opts.streamIdleSeconds);
  if (!/^\d{1,6}(\.\d{1,3})?$/.test(opts.streamIdleSeconds) || streamIdleSeconds <= 0) {
    throw new UsageError(
      `--stream-idle-seconds ${opts.streamIdleSeconds} is not a number of seconds (more than 0, e.g. 60 or 0.5)`,
    );
  }
  if (!/^\d{1,6}$/.test(opts.digestInterval) || Number(opts.digestInterval) < 1) {
    throw new UsageError(
      `--digest-interval ${opts.digestInterval} is not a number of seconds (1 or more, e.g. 300)`,
    );
  }
  const origin = opts.publicUrl ? publicOrigin(opts.publicUrl) : undefined;
  const bootstrapToken = io.env.HANSARD_BOOTSTRAP_TOKEN || undefined;
  // Checked before the data directory is touched: a bad one used to leave tenant "local" with no token.
  if (bootstrapToken !== undefined) {
    const { TOKEN_PATTERN } = await import('../../contract/tokens.js');
    if (!TOKEN_PATTERN.test(bootstrapToken)) throw new UsageError(badBootstrapToken(bootstrapToken));
  }
  // The server stack (Hono, the board, SQLite) loads only for `serve`: other commands start faster.
  const { startServer } = await import('../../deploy/local-serve.js');
  const { DataDirLockedError, DataDirUnusableError } = await import('../../deploy/data-lock.js');
  const { StartRefusedError } = await import('../../deploy/local-start.js');
  // The server's stderr is its log: no token in it, whatever a line holds (issue 24 item 6).
  const { maskTokens } = await import('../../log/redact/mask-tokens.js');
  let server: Awaited<ReturnType<typeof startServer>>;
  try {
    server = await startServer({
      port,
      host: opts.host,
      data: resolve(io.cwd, opts.data),
      bootstrapToken,
      quotaBytes,
      rateLimit,
      maxConcurrentReplays,
      streamIdleMs: Math.round(streamIdleSeconds * 1000),
      audit: { intervalSeconds: Number(opts.digestInterval) },
      digester: opts.digester === 'on',
      allowPrivateAlertTargets: opts.allowPrivateAlertTargets === true,
      publicOrigin: origin,
      print: (l) => io.stdout.write(`${l}\n`),
      log: (l) => io.stderr.write(`${maskTokens(l)}\n`),
      requestLog: (l) => io.stderr.write(`${maskTokens(l)}\n`),
      // Another process may be writing the directory now: stop at once, not after open requests end.
      onLockLost: () => process.exit(1),
    });
  } catch (err) {
    // One server per data directory (docs/operations.md): refused with exit 2, naming the holder;
    // and a data directory that cannot hold the first start's state (a full disk) the same way.
    if (
      err instanceof DataDirLockedError ||
      err instanceof DataDirUnusableError ||
      err instanceof StartRefusedError
    )
      throw new UsageError(err.message);
    const code = (err as NodeJS.ErrnoException).code;
    if (code === 'EADDRINUSE') {
      throw new UsageError(
        `port ${port} on ${opts.host} is in use: is hansard already running? Pick another with --port`,
      );
    }
    if (code === 'EACCES')
      throw new UsageError(
        `cannot listen on ${opts.host}:${port} (permission denied): pick a port above 1024`,
      );
    throw err;
  }
  if (server.port !== 8787) {
    io.stdout.write(`\nCommands reach this server with: export HANSARD_URL=${server.url}\n`);
  }
  io.keepAlive = true;
  // A graceful stop with a deadline (server.close): a client that stopped reading cannot keep the
  // server, and its data directory's lock, alive. A second signal ends the process at once, unless
  // it comes within SAME_SIGNAL_MS of the first: that is the same signal again, as `npm start`
  // forwards what the process group already got (a terminal's Ctrl-C signals every process of the
  // group, npm included, and npm passes it on to its child), and it must not cut the grace short.
  let stoppingAt: number | null = null;
  const stop = () => {
    if (stoppingAt !== null) {
      if (performance.now() - stoppingAt < SAME_SIGNAL_MS) return;
      io.stderr.write('hansard: stopping now, without waiting for open requests\n');
      process.exit(1);
    }
    stoppingAt = performance.now();
    server.close().then(
      () => process.exit(0),
      (err: unknown) => {
        io.stderr.write(`hansard: stopping failed: ${err instanceof Error ? err.message : String(err)}\n`);
        process.exit(1);
      },
    );
  };
  process.on('SIGINT', stop);
  process.on('SIGTERM', stop);
}
