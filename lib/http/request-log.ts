/**
 * One line per request for a local server's log: `GET /v1/board 200 3 ms`. The path only, never the
 * query (a board link carries its token there) nor any header (DESIGN §4: no token in logs).
 */
import type { MiddlewareHandler } from 'hono';

export function requestLog(print: (line: string) => void): MiddlewareHandler {
  return async (c, next) => {
    const start = performance.now();
    await next();
    print(`${c.req.method} ${c.req.path} ${c.res.status} ${Math.round(performance.now() - start)} ms`);
  };
}
