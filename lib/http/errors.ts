/**
 * One mapping from errors to HTTP answers (STYLE §6, DESIGN §4): every error is
 * `{"error":{"code","message","details"}}` with its status. Storage faults get their own codes (507, 503,
 * 500; docs/operations.md). Unknown errors become a 500 whose body says nothing of the cause; the cause of
 * every 5xx goes to the server's log.
 */
import type { Context } from 'hono';
import { HTTPException } from 'hono/http-exception';
import type { ContentfulStatusCode } from 'hono/utils/http-status';
import { AppError, type ErrorCode } from '../service/shared/errors.js';
import { storageAppError, storageFaultCode } from '../service/shared/storage-faults.js';

/** Every error answer's body; `code` is one of `ERROR_STATUS` (its zod schema: `ErrorBody`, ./schemas.ts). */
export interface ErrorBody {
  error: { code: ErrorCode; message: string; details: Record<string, unknown> };
}

export function errorBody(
  code: ErrorCode,
  message: string,
  details: Record<string, unknown> = {},
): ErrorBody {
  return { error: { code, message, details } };
}

const HTTP_CODES: Partial<Record<number, ErrorCode>> = {
  400: 'bad_request',
  401: 'unauthorized',
  403: 'forbidden',
  404: 'not_found',
  409: 'conflict',
  413: 'payload_too_large',
  422: 'unprocessable',
};

/** The JSON answer for any error thrown while handling a request. */
export function errorResponse(c: Context, err: unknown, log: (msg: string, err: unknown) => void): Response {
  // A disk that is full, read-only or not ours, or a segment shorter than its index: a clear answer
  // (lib/service/shared/storage-faults.ts), and the cause in the log for the operator (docs/operations.md).
  const answer = err instanceof AppError ? err : storageAppError(err);
  if (answer) {
    if (answer.status >= 500) {
      const cause = storageFaultCode(answer.cause);
      log(`answered ${answer.status} ${answer.code}${cause ? ` (${cause})` : ''}`, answer.cause ?? answer);
    }
    return c.json(
      errorBody(answer.code, answer.message, answer.details),
      answer.status as ContentfulStatusCode,
    );
  }
  if (err instanceof HTTPException) {
    const status = err.status;
    const code = HTTP_CODES[status] ?? (status >= 500 ? 'internal' : 'bad_request');
    const message =
      status === 413 ? 'the request body is too large' : err.message || 'the request is not valid';
    return c.json(errorBody(code, message), status as ContentfulStatusCode);
  }
  if (clientWentAway(err)) {
    // Node closed the connection (the client stalled past the request timeout, sent bytes that are not
    // HTTP, or hung up) while the body was read: no one is there to answer, and nothing failed here.
    return c.json(errorBody('bad_request', 'the request body was not received completely'), 400);
  }
  if (stoppedByClient(c, err)) {
    // The client went away and the read it asked for (verify, inspect) stopped on the request's signal:
    // nothing failed here, and no one reads this answer. 499 is how nginx logs a request its client closed.
    return c.body(null, 499 as ContentfulStatusCode);
  }
  log('unhandled error', err);
  return c.json(errorBody('internal', 'the server failed to handle this request; it has been logged'), 500);
}

/** Whether `err` is the request's own abort (its signal's reason, or an `AbortError` after it aborted). */
function stoppedByClient(c: Context, err: unknown): boolean {
  const signal = c.req.raw.signal;
  if (!signal.aborted) return false;
  return err === signal.reason || (err instanceof Error && err.name === 'AbortError');
}

/** The error Node gives a request body read whose connection closed before the body ended. */
function clientWentAway(err: unknown): boolean {
  return (
    err instanceof Error && err.message === 'aborted' && (err as { code?: unknown }).code === 'ECONNRESET'
  );
}
