/**
 * Token administration routes (DESIGN §4, scope `admin`), and session tokens minted for a harness
 * (`POST /v1/sessions/{sid}/tokens`: an admin, or an unbound token handing on scopes it has).
 */
import { Hono } from 'hono';
import {
  createSessionToken,
  createToken,
  listTokens,
  publicToken,
  revokeToken,
} from '../../service/tokens.js';
import type { AppEnv } from '../auth.js';
import { jsonBody, pathParam, SessionId, TokenId } from '../params.js';

export function tokenRoutes(): Hono<AppEnv> {
  const r = new Hono<AppEnv>();
  r.post('/tokens', async (c) => {
    const created = await createToken({ ctx: c.get('ctx'), input: await jsonBody(c) });
    return c.json({ token: created.token, ...publicToken(created.record) }, 201);
  });
  r.post('/sessions/:sid/tokens', async (c) => {
    const sid = pathParam(c, 'sid', SessionId);
    // Every field has a default: an empty body asks for an ingest + report token for 24 hours.
    const input = await jsonBody(c, { emptyAs: {} });
    const { token, record } = await createSessionToken({ ctx: c.get('ctx'), sid, input });
    const { id, scopes, session, expires_at } = record;
    return c.json({ token, id, scopes, session, expires_at }, 201);
  });
  r.get('/tokens', async (c) => c.json({ tokens: await listTokens({ ctx: c.get('ctx') }) }));
  r.delete('/tokens/:id', async (c) => {
    await revokeToken({ ctx: c.get('ctx'), id: pathParam(c, 'id', TokenId) });
    return c.body(null, 204);
  });
  return r;
}
