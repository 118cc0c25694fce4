/** Token administration routes (DESIGN §4, scope `admin`). */
import { Hono } from 'hono';
import { createToken, listTokens, publicToken, revokeToken } from '../../service/tokens.js';
import type { AppEnv } from '../auth.js';
import { jsonBody, pathParam, TokenId } from '../params.js';

export function tokenRoutes(): Hono<AppEnv> {
  const r = new Hono<AppEnv>();
  r.post('/tokens', async (c) => {
    const created = await createToken({ ctx: c.get('ctx'), input: await jsonBody(c) });
    return c.json({ token: created.token, ...publicToken(created.record) }, 201);
  });
  r.get('/tokens', async (c) => c.json({ tokens: await listTokens({ ctx: c.get('ctx') }) }));
  r.delete('/tokens/:id', async (c) => {
    await revokeToken({ ctx: c.get('ctx'), id: pathParam(c, 'id', TokenId) });
    return c.body(null, 204);
  });
  return r;
}
