/** verify and inspect routes (issue 3, DESIGN §4). */
import { Hono } from 'hono';
import { attributionStored, inspectStored, verifyStored } from '../../service/analysis.js';
import type { AppEnv } from '../auth.js';
import { pathParam, SessionId } from '../params.js';

export function analysisRoutes(): Hono<AppEnv> {
  const r = new Hono<AppEnv>();
  r.get('/sessions/:sid/verify', async (c) =>
    c.json(await verifyStored({ ctx: c.get('ctx'), sid: pathParam(c, 'sid', SessionId) })),
  );
  r.get('/sessions/:sid/inspect', async (c) =>
    c.json(await inspectStored({ ctx: c.get('ctx'), sid: pathParam(c, 'sid', SessionId) })),
  );
  r.get('/sessions/:sid/attribution', async (c) =>
    c.json(await attributionStored({ ctx: c.get('ctx'), sid: pathParam(c, 'sid', SessionId) })),
  );
  return r;
}
