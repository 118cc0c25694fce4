/**
 * One mapping from errors to HTTP answers (STYLE §6, DESIGN §4): every error is
 * `{"error":{"code","message","details"}}` with its status. Unknown errors become a 500 whose body says
 * nothing of the cause; the cause goes to the server's log.
 */
import type { Context } from 'hono';
import { HTTPException } from 'hono/http-exception';
import type { ContentfulStatusCode } from 'hono/utils/http-status';
import { AppError, type ErrorCode } from '../service/errors.js';

export interface ErrorBody {
  error: { code: string; message: string; details: Record<string, unknown> };
}

export function errorBody(code: string, message: string, details: Record<string, unknown> = {}): ErrorBody {
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
  if (err instanceof AppError) {
    return c.json(errorBody(err.code, err.message, err.details), err.status as ContentfulStatusCode);
  }
  if (err instanceof HTTPException) {
    const status = err.status;
    const code = HTTP_CODES[status] ?? (status >= 500 ? 'internal' : 'bad_request');
    const message =
      status === 413 ? 'the request body is too large' : err.message || 'the request is not valid';
    return c.json(errorBody(code, message), status as ContentfulStatusCode);
  }
  log('unhandled error', err);
  return c.json(errorBody('internal', 'the server failed to handle this request; it has been logged'), 500);
}
