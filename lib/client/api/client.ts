/**
 * The CLI's HTTP client for the hansard API (DESIGN §4, §6). Transient failures (network errors, 429,
 * 5xx) are retried with exponential backoff and jitter (p-retry), honouring `Retry-After`; anything else
 * is a `ServerError` carrying the server's error envelope. A storage fault of the server
 * (docs/operations.md) is not transient: `data_loss`, `storage_layout` and `storage_permission_denied`
 * are answered at once, `storage_read_only` and `insufficient_storage` after a couple of tries, each as
 * the server's own error (its code, message and details), never as a generic "unavailable".
 *
 * Every request has a timeout (issue 25 item 7): `timeoutMs` (default 2 min) plus a second per
 * `TIMEOUT_BYTES_PER_SECOND` it sends, for its answer's headers and, for a JSON answer, its whole body. A
 * server that accepts the connection and never answers held a caller (the capture shipper, and its lock)
 * for undici's own 300 s before. A request that times out is not retried: NetworkError at once.
 *
 * A token that cannot be sent as a header (a line break, a control character, a space, non-ASCII) is
 * refused before any request, without quoting it (`MalformedToken`, lib/client/api/token-form.ts; the trial
 * of issue 24, item 12), and no error of this client quotes a header or an `hns_` secret.
 */
import pRetry, { AbortError } from 'p-retry';
import { UsageError } from './errors.js';
import { networkCause, unsendable } from './network-cause.js';
import { headerProblem, MalformedToken } from './token-form.js';

/** An answer the server gave that was not a success; `body` is its `{"error":…}` envelope when it sent one. */
export class ServerError extends Error {
  override name = 'ServerError';
  /** the request's path (`/v1/sessions/s_…/status`), when `ApiClient.request` or `stream` threw it */
  path: string | null = null;
  constructor(
    readonly status: number,
    readonly code: string,
    message: string,
    readonly details: Record<string, unknown> = {},
  ) {
    super(message);
  }
}

/** The server could not be reached at all (after the retries, or at once when nothing listens on loopback). */
export class NetworkError extends Error {
  override name = 'NetworkError';
}

export interface ClientOptions {
  url: string;
  token: string | undefined;
  /** retries of a transient failure (default 5) */
  retries?: number;
  /** first backoff delay in ms (default 250); tests make it small */
  minTimeoutMs?: number;
  /**
   * the longest wait for one answer, in ms (default `DEFAULT_REQUEST_TIMEOUT_MS`), plus a second per
   * `TIMEOUT_BYTES_PER_SECOND` of request body; past it the request is abandoned (NetworkError)
   */
  timeoutMs?: number;
  /**
   * once one request timed out, every later request of this client fails at once with the same
   * NetworkError (a server that does not answer one request is not waited for again: the shipper)
   */
  giveUpAfterTimeout?: boolean;
  /** called before each retry, for progress output */
  onRetry?: (info: { attempt: number; reason: string; delayMs: number }) => void;
}

export interface ApiResponse {
  status: number;
  headers: Headers;
  body: unknown;
}

const TRANSIENT = new Set([408, 425, 429, 500, 502, 503, 504, 507]);

/** A request's answer is waited for this long by default (ms), plus the time to send its body. */
export const DEFAULT_REQUEST_TIMEOUT_MS = 120_000;
/** The slowest upload a request's timeout allows for: its body at this many bytes per second. */
export const TIMEOUT_BYTES_PER_SECOND = 256 * 1024;

/** The reason a request's timer aborts it with. */
class RequestTimeout extends Error {
  constructor(readonly ms: number) {
    super(`no answer within ${ms} ms`);
  }
}

/** A response whose timer still runs (until `done`), for a body the caller reads. */
interface Answer {
  res: Response;
  /** stops the request's timer (the body is read, or left to the caller to stream) */
  done(): void;
  /** whether the timer aborted the request (then reading the body threw) */
  timedOut(): boolean;
}

/**
 * Error codes of the server's storage that no retry changes: its operator must act (docs/operations.md).
 * Answered to the user at once, with their details (the writer, the byte range).
 */
export const STORAGE_FAULTS_FOR_OPERATOR: ReadonlySet<string> = new Set([
  'data_loss',
  'storage_layout',
  'storage_permission_denied',
]);

/**
 * A 5xx that a retry of the same request would only wait on: the tenant's OpenID provider failed the
 * server's check (issue 29; `hansard tenant oidc set`), or search is not set up or the query too slow
 * (issue 30). Answered at once with its message, which says why.
 */
const NOT_RETRIED: ReadonlySet<string> = new Set([
  'provider_unavailable',
  // A deployment without a search index does not grow one; a query the engine stopped at its time limit
  // would only take that time again (issue 30): the message says to narrow it.
  'search_unavailable',
  'search_timeout',
]);

/** Storage faults that may pass (a disk freed, a filesystem remounted): tried this many times more. */
const PASSING_FAULTS: ReadonlySet<string> = new Set(['storage_read_only', 'insufficient_storage']);
const PASSING_FAULT_RETRIES = 2;

export class ApiClient {
  readonly url: string;
  /** the timeout that made this client give up (`giveUpAfterTimeout`) */
  private gaveUp: NetworkError | null = null;
  constructor(private readonly options: ClientOptions) {
    this.url = options.url.replace(/\/+$/, '');
  }

  /**
   * Sends a request and parses its JSON answer. Retries transient failures; returns any 2xx, and 404 when
   * `allow404`. @throws ServerError for other answers, NetworkError when the server stays unreachable
   */
  async request(
    method: string,
    path: string,
    init: {
      body?: Uint8Array | string;
      contentType?: string;
      allow404?: boolean;
      /** more request headers, e.g. `Idempotency-Key` */
      headers?: Record<string, string>;
    } = {},
  ): Promise<ApiResponse> {
    const answer = await this.raw(method, path, init);
    const { res } = answer;
    try {
      if (res.ok || (init.allow404 && res.status === 404)) {
        const text = await res.text();
        return { status: res.status, headers: res.headers, body: text ? safeJson(text) : null };
      }
      const err = await toServerError(res);
      // The CLI's hints read it: a 404 on a session route may be a token bound to another session.
      err.path = path;
      throw err;
    } catch (err) {
      // The headers came in time, the body did not.
      if (answer.timedOut()) throw this.timeoutError(path, init.body);
      throw err;
    } finally {
      answer.done();
    }
  }

  /**
   * Like `request` but returns the response for streaming. A large session's replay on AWS (issue 17.2)
   * is answered 202 while its stored copy is merged: asked again after `Retry-After` (each wait reported
   * to `onWait`) for at most `maxWaitMs` (default 30 min); then 303 to a short-lived URL of that copy,
   * fetched WITHOUT the token (the URL carries its own signature; the token never leaves for another host).
   * @throws ServerError (`replay_not_ready`, 504, once `maxWaitMs` has passed), NetworkError
   */
  async stream(
    path: string,
    o: { onWait?: (info: { waitedMs: number; retryAfterMs: number }) => void; maxWaitMs?: number } = {},
  ): Promise<Response> {
    const started = Date.now();
    const maxWait = o.maxWaitMs ?? 30 * 60 * 1000;
    for (;;) {
      const answer = await this.raw('GET', path, { redirect: 'manual' });
      // The body is the caller's to stream, as long as it takes: the timeout covered the headers.
      answer.done();
      const { res } = answer;
      if (res.status === 202) {
        void res.body?.cancel().catch(() => {});
        const retryAfterMs = Math.max(1, Number(res.headers.get('retry-after')) || 5) * 1000;
        const waitedMs = Date.now() - started;
        if (waitedMs + retryAfterMs > maxWait) {
          const err = new ServerError(
            504,
            'replay_not_ready',
            `the server was still merging the replay after ${Math.round(waitedMs / 1000)} s: run the command again later`,
          );
          err.path = path;
          throw err;
        }
        o.onWait?.({ waitedMs, retryAfterMs });
        await new Promise((r) => setTimeout(r, retryAfterMs));
        continue;
      }
      if (res.status === 303 || res.status === 302 || res.status === 307) {
        const location = res.headers.get('location');
        void res.body?.cancel().catch(() => {});
        if (!location)
          throw new ServerError(502, 'bad_redirect', `the server answered ${res.status} without a Location`);
        return this.download(new URL(location, this.url).toString(), path);
      }
      if (!res.ok) {
        const err = await toServerError(res);
        err.path = path;
        throw err;
      }
      return res;
    }
  }

  /** GET of a URL the server handed out (a presigned one): no token, no redirect followed further. */
  private async download(url: string, path: string): Promise<Response> {
    let res: Response;
    // The timeout covers the headers; the body is the caller's to stream.
    const ms = this.timeoutFor();
    const abort = new AbortController();
    const timer = setTimeout(() => abort.abort(new RequestTimeout(ms)), ms);
    try {
      res = await fetch(url, { redirect: 'error', signal: abort.signal });
    } catch (err) {
      if (abort.signal.aborted)
        throw new NetworkError(
          `the stored replay at ${new URL(url).host} did not answer within ${ms / 1000} s`,
        );
      throw new NetworkError(`cannot fetch the stored replay at ${new URL(url).host}: ${networkCause(err)}`);
    } finally {
      clearTimeout(timer);
    }
    if (!res.ok) {
      void res.body?.cancel().catch(() => {});
      const err = new ServerError(
        res.status,
        'stored_replay_unavailable',
        `the stored copy of the replay answered ${res.status} (its link may have expired): run the command again`,
      );
      err.path = path;
      throw err;
    }
    return res;
  }

  /** What a request that timed out throws: the server did not answer (not retried). */
  private timeoutError(path: string, body?: Uint8Array | string): NetworkError {
    const s = Math.round(this.timeoutFor(body) / 100) / 10;
    const err = new NetworkError(`${this.url} did not answer ${path.split('?')[0]} within ${s} s`);
    if (this.options.giveUpAfterTimeout) this.gaveUp ??= err;
    return err;
  }

  /** The timeout of a request sending `body` (ms). */
  private timeoutFor(body?: Uint8Array | string): number {
    const bytes = typeof body === 'string' ? Buffer.byteLength(body) : (body?.byteLength ?? 0);
    return (
      (this.options.timeoutMs ?? DEFAULT_REQUEST_TIMEOUT_MS) +
      Math.ceil((bytes / TIMEOUT_BYTES_PER_SECOND) * 1000)
    );
  }

  private async raw(
    method: string,
    path: string,
    init: {
      body?: Uint8Array | string;
      contentType?: string;
      headers?: Record<string, string>;
      redirect?: 'follow' | 'manual' | 'error';
    },
  ): Promise<Answer> {
    if (this.gaveUp) throw this.gaveUp;
    const problem = this.options.token ? headerProblem(this.options.token) : null;
    if (problem) throw new MalformedToken('the token', problem);
    const headers: Record<string, string> = { ...init.headers, accept: 'application/json' };
    if (this.options.token) headers.authorization = `Bearer ${this.options.token}`;
    if (init.contentType) headers['content-type'] = init.contentType;
    let lastReason = '';
    /** the last transient answer's own error, when it sent one: what the user is told after the retries */
    const last: { answer: ServerError | null } = { answer: null };
    try {
      return await pRetry(
        async (attemptNumber) => {
          // Each attempt has its own timer; it runs on while the caller reads the body (`done`).
          const ms = this.timeoutFor(init.body);
          const abort = new AbortController();
          let timedOut = false;
          const timer = setTimeout(() => {
            timedOut = true;
            abort.abort(new RequestTimeout(ms));
          }, ms);
          const done = () => clearTimeout(timer);
          let res: Response;
          try {
            res = await fetch(`${this.url}${path}`, {
              method,
              headers,
              body: init.body as string | Uint8Array<ArrayBuffer> | undefined,
              signal: abort.signal,
              ...(init.redirect ? { redirect: init.redirect } : {}),
            });
          } catch (err) {
            done();
            // No answer in time: the server is there but does not answer; waiting more is the
            // caller's choice (the shipper tries again at the next hook), not a retry's.
            if (timedOut) throw new AbortError(this.timeoutError(path, init.body));
            // A request that could not be built (a header undici refuses): no retry changes it, and it
            // is not the server's fault.
            if (unsendable(err)) {
              throw new AbortError(
                new UsageError(`cannot send the request: ${networkCause(err)}`, 'bad_request'),
              );
            }
            lastReason = `cannot reach ${this.url}: ${networkCause(err)}`;
            // Nothing listens on this machine's port: no retry can change that, so say it at once.
            if (refusedOnLoopback(this.url, err)) throw new AbortError(new NetworkError(lastReason));
            throw new TransientError(lastReason, null);
          }
          if (TRANSIENT.has(res.status)) {
            const retryAfter = Number(res.headers.get('retry-after'));
            let answer: ServerError | null;
            try {
              answer = isJson(res) ? await toServerError(res) : null;
            } catch (err) {
              if (timedOut) throw new AbortError(this.timeoutError(path, init.body));
              throw err;
            } finally {
              done();
            }
            last.answer = answer;
            const code = answer?.code;
            if (answer && code && (STORAGE_FAULTS_FOR_OPERATOR.has(code) || NOT_RETRIED.has(code))) {
              throw new AbortError(answer);
            }
            if (answer && code && PASSING_FAULTS.has(code) && attemptNumber > PASSING_FAULT_RETRIES) {
              throw new AbortError(answer);
            }
            const what =
              res.status === 429
                ? ' (too many requests)'
                : code && code !== 'internal'
                  ? ` ${code}`
                  : res.status >= 500
                    ? ' (a server fault)'
                    : '';
            lastReason = `the server answered ${res.status}${what}`;
            // not awaited: a cancel that never settles (seen with msw-mocked bodies) must not stall the retry
            if (!answer) void res.body?.cancel().catch(() => {});
            throw new TransientError(
              lastReason,
              Number.isFinite(retryAfter) && retryAfter > 0 ? retryAfter * 1000 : null,
            );
          }
          return { res, done, timedOut: () => timedOut };
        },
        {
          retries: this.options.retries ?? 5,
          minTimeout: this.options.minTimeoutMs ?? 250,
          maxTimeout: 10_000,
          randomize: true,
          shouldRetry: ({ error }) => error instanceof TransientError,
          onFailedAttempt: async ({ error, attemptNumber, retriesLeft }) => {
            if (!(error instanceof TransientError) || retriesLeft === 0) return;
            const delayMs = error.retryAfterMs ?? 0;
            this.options.onRetry?.({ attempt: attemptNumber, reason: error.message, delayMs });
            if (delayMs > 0) await new Promise((r) => setTimeout(r, Math.min(delayMs, 30_000)));
          },
        },
      );
    } catch (err) {
      if (err instanceof TransientError) {
        if (err.message.startsWith('cannot reach')) throw new NetworkError(`${err.message} (after retries)`);
        // A storage fault that did not pass: the server's own answer says what failed, not "unavailable".
        if (last.answer && PASSING_FAULTS.has(last.answer.code)) throw last.answer;
        // A rate limit that did not pass: the server's 429 and its code and details (limit,
        // retry_after_seconds) go on to the command's message and --json, not a 503 of the client's own.
        if (last.answer?.status === 429) {
          const a = last.answer;
          throw new ServerError(
            a.status,
            a.code,
            `${a.message} (still so after ${this.options.retries ?? 5} retries)`,
            a.details,
          );
        }
        throw new ServerError(503, 'unavailable', `${err.message} after retries; try again later`);
      }
      if (err instanceof AbortError) throw err.cause ?? err;
      throw err;
    }
  }
}

class TransientError extends Error {
  constructor(
    message: string,
    readonly retryAfterMs: number | null,
  ) {
    super(message);
  }
}

/** Whether an answer says its body is JSON (the error envelope). */
function isJson(res: Response): boolean {
  return (res.headers.get('content-type') ?? '').includes('application/json');
}

function safeJson(text: string): unknown {
  try {
    return JSON.parse(text) as unknown;
  } catch {
    return text;
  }
}

async function toServerError(res: Response): Promise<ServerError> {
  const text = await res.text();
  const body = safeJson(text) as {
    error?: { code?: string; message?: string; details?: Record<string, unknown> };
  };
  const e = body && typeof body === 'object' ? body.error : undefined;
  return new ServerError(
    res.status,
    e?.code ?? `http_${res.status}`,
    e?.message ?? `the server answered ${res.status}`,
    e?.details ?? {},
  );
}

/**
 * True when `err` is a refused connection to a loopback address (127.0.0.0/8, ::1, localhost): a server
 * on this machine is not running, which retrying does not fix. A refused remote host may be restarting.
 */
export function refusedOnLoopback(url: string, err: unknown): boolean {
  const code = (err as { cause?: { code?: string } }).cause?.code;
  if (code !== 'ECONNREFUSED') return false;
  const host = new URL(url).hostname.replace(/^\[|\]$/g, '');
  return host === 'localhost' || host === '::1' || /^127\.\d+\.\d+\.\d+$/.test(host);
}
