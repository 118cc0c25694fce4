/**
 * Server connection settings for commands that talk to a server: flags first, then `HANSARD_URL` /
 * `HANSARD_TOKEN` (DESIGN §6), then the local default.
 */
import { ApiClient, type ClientOptions } from './client.js';
import { UsageError } from './errors.js';

export const DEFAULT_URL = 'http://127.0.0.1:8787';

export interface ServerFlags {
  url?: string;
  token?: string;
  /** the flag that gave `url`, as errors name it (default `--url`; `hansard alerts` says `--server`) */
  urlFlag?: string;
}

/**
 * A client for the configured server. @throws UsageError when no token is configured (every API route but
 * /healthz needs one)
 */
export function clientFrom(
  flags: ServerFlags,
  env: NodeJS.ProcessEnv,
  onRetry?: ClientOptions['onRetry'],
): ApiClient {
  const url = flags.url ?? env.HANSARD_URL ?? DEFAULT_URL;
  const token = flags.token ?? env.HANSARD_TOKEN;
  if (!token) {
    throw new UsageError(
      'no token: pass --token or set HANSARD_TOKEN (hansard serve prints an admin token on first start; hansard token create makes more)',
    );
  }
  let parsed: URL | null = null;
  try {
    parsed = new URL(url);
  } catch {
    // reported below
  }
  if (!parsed || (parsed.protocol !== 'http:' && parsed.protocol !== 'https:')) {
    const from = flags.url !== undefined ? (flags.urlFlag ?? '--url') : 'HANSARD_URL';
    throw new UsageError(`${from} ${JSON.stringify(url)} is not an http(s) URL (example: ${DEFAULT_URL})`);
  }
  return new ApiClient({ url, token, ...(onRetry ? { onRetry } : {}) });
}

/** What a command prints on stderr while the client retries a transient failure (429, 5xx, network). */
export function retryNotice(io: {
  stderr: { write(s: string): unknown };
}): NonNullable<ClientOptions['onRetry']> {
  return ({ reason, delayMs }) => {
    const wait = delayMs > 0 ? `waiting ${Math.ceil(delayMs / 1000)} s as the server asked, then ` : '';
    io.stderr.write(`hansard: ${reason}; ${wait}retrying\n`);
  };
}
