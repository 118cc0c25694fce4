/** Status routes (seed 000, DESIGN §4). */
import { Hono } from 'hono';
import { getBoard } from '../../service/board.js';
import { getStatus, reportStatus } from '../../service/status.js';
import type { AppEnv } from '../auth.js';
import { jsonBody, pathParam, SessionId } from '../params.js';

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

/** `GET /v1/board`: mounted with cookie auth allowed. */
export function boardApiRoutes(): Hono<AppEnv> {
  const r = new Hono<AppEnv>();
  r.get('/board', async (c) => c.json(await getBoard({ ctx: c.get('ctx') })));
  return r;
}
