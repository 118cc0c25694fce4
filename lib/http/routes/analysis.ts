/**
 * verify, inspect and attribution routes (issue 3, DESIGN §4). Each reads the whole session, so each holds
 * a replay slot of its token (429 `too_many_replays`) and a place in the scan gate while it runs, and
 * stops when the client goes away.
 */
import { Hono } from 'hono';
import { attributionStored, inspectStored, verifyStored } from '../../service/analysis.js';
import type { AppEnv } from '../auth.js';
import { pathParam, SessionId } from '../params.js';
import { type WholeSessionReads, withReplaySlot } from '../replay-slots.js';

/** @param reads the app's guards of whole-session reads: a slot of the token and a place in the scan gate */
export function analysisRoutes(reads: WholeSessionReads): Hono<AppEnv> {
  const r = new Hono<AppEnv>();
  r.get('/sessions/:sid/verify', async (c) => {
    const sid = pathParam(c, 'sid', SessionId);
    return c.json(
      await withReplaySlot(c, reads, (signal) => verifyStored({ ctx: c.get('ctx'), sid, signal })),
    );
  });
  r.get('/sessions/:sid/inspect', async (c) => {
    const sid = pathParam(c, 'sid', SessionId);
    return c.json(
      await withReplaySlot(c, reads, (signal) => inspectStored({ ctx: c.get('ctx'), sid, signal })),
    );
  });
  r.get('/sessions/:sid/attribution', async (c) => {
    const sid = pathParam(c, 'sid', SessionId);
    return c.json(
      await withReplaySlot(c, reads, (signal) => attributionStored({ ctx: c.get('ctx'), sid, signal })),
    );
  });
  return r;
}
