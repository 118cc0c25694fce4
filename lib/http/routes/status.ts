/** Status routes (seed 000, DESIGN §4). */
import { Hono } from 'hono';
import { getBoard } from '../../service/board.js';
import { getStatus, reportStatus } from '../../service/status.js';
import type { AppEnv } from '../auth.js';
import { BoardLimit, Cursor, jsonBody, pathParam, queryParam, SessionId } from '../params.js';

export function statusRoutes(): Hono<AppEnv> {
  const r = new Hono<AppEnv>();
  r.post('/sessions/:sid/status', async (c) => {
    const sid = pathParam(c, 'sid', SessionId);
    const input = await jsonBody(c);
    return c.json(await reportStatus({ ctx: c.get('ctx'), sid, input }), 201);
  });
  r.get('/sessions/:sid/status', async (c) => {
    const sid = pathParam(c, 'sid', SessionId);
    return c.json(await getStatus({ ctx: c.get('ctx'), sid }));
  });
  return r;
}

/** `GET /v1/board?limit=&cursor=`: mounted with cookie auth allowed; paged as `GET /v1/sessions` is. */
export function boardApiRoutes(): Hono<AppEnv> {
  const r = new Hono<AppEnv>();
  r.get('/board', async (c) => {
    const limit = queryParam(c, 'limit', BoardLimit);
    const cursor = queryParam(c, 'cursor', Cursor) ?? null;
    return c.json(await getBoard({ ctx: c.get('ctx'), limit, cursor }));
  });
  return r;
}
