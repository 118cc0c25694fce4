/**
 * One line per request for a local server's log: `GET /v1/board 200 3 ms`. The path only, never the
 * query (a board link carries its token there) nor any header (DESIGN §4: no token in logs). A token
 * pasted into the path (`DELETE /v1/tokens/hns_…`, `GET /sessions/hns_…`) is masked (issue 24 item 6),
 * and so is any token in what the app logs (`maskingLog`): a path in an error line, an error's message.
 */
import type { MiddlewareHandler } from 'hono';

import { maskError, maskTokens } from '../log/redact/mask-tokens.js';

export { MASKED_TOKEN, maskError, maskTokens } from '../log/redact/mask-tokens.js';

/**
 * A log function that masks tokens (`maskTokens`, `maskError`) before it hands a line and its error to
 * `log`: the app's one `log` (lib/http/app.ts) goes through it, so an error line naming a request's path
 * cannot leak a token pasted there.
 */
export function maskingLog(
  log: (message: string, err?: unknown) => void,
): (message: string, err?: unknown) => void {
  return (message, err) =>
    err === undefined ? log(maskTokens(message)) : log(maskTokens(message), maskError(err));
}

/** The request line middleware: `print` gets `METHOD PATH STATUS N ms`, tokens in the path masked. */
export function requestLog(print: (line: string) => void): MiddlewareHandler {
  return async (c, next) => {
    const start = performance.now();
    await next();
    print(
      `${c.req.method} ${maskTokens(c.req.path)} ${c.res.status} ${Math.round(performance.now() - start)} ms`,
    );
  };
}
