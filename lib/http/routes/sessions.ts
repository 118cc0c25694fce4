/**
 * Session routes (DESIGN §4): chunk ingest, the writer index, listings, replay and raw segments. They only
 * validate, call a verb of `lib/service`, and shape the answer.
 */
import { Hono } from 'hono';
import { AppError } from '../../service/errors.js';
import { ingestChunk } from '../../service/ingest.js';
import { resolveLimits } from '../../service/limits.js';
import {
  getSession,
  getWriter,
  listSessions,
  rawSegment,
  rawSession,
  replaySession,
} from '../../service/sessions.js';
import type { AppEnv } from '../auth.js';
import {
  boundedBody,
  Cursor,
  Format,
  Limit,
  Offset,
  pathParam,
  queryParam,
  Raw,
  SessionId,
  WriterId,
} from '../params.js';
import { clientSignal, slotBody, type WholeSessionReads } from '../replay-slots.js';

/**
 * @param reads the app's guards of whole-session reads: replay and segment download each hold a slot of
 *   their token while they stream (429 `too_many_replays` over `limits.maxConcurrentReplays`), and a
 *   replay's corrections pass waits for a place in the scan gate
 */
export function sessionRoutes(reads: WholeSessionReads): Hono<AppEnv> {
  const r = new Hono<AppEnv>();

  r.post('/sessions/:sid/writers/:w/chunks', async (c) => {
    const sid = pathParam(c, 'sid', SessionId);
    const w = pathParam(c, 'w', WriterId);
    if (c.req.query('offset') === undefined) {
      throw new AppError(
        'bad_request',
        'the query parameter offset is required: the byte offset of the chunk',
      );
    }
    const offset = queryParam(c, 'offset', Offset);
    // At most one byte past the limit is read: enough for `ingestChunk` to refuse it and name the line.
    // The deployment's chunk limit (5 MiB at most; 4 MiB behind API Gateway): `GET /healthz` tells clients.
    const body = await boundedBody(c, resolveLimits(c.get('ctx').limits).maxChunkBytes);
    const res = await ingestChunk({ ctx: c.get('ctx'), input: { sid, w, offset, body } });
    const { created, ...answer } = res;
    return c.json(answer, created ? 201 : 200);
  });

  r.get('/sessions/:sid/writers/:w', async (c) => {
    const sid = pathParam(c, 'sid', SessionId);
    const w = pathParam(c, 'w', WriterId);
    return c.json(await getWriter({ ctx: c.get('ctx'), sid, w }));
  });

  r.get('/sessions/:sid/writers/:w/segment', async (c) => {
    const sid = pathParam(c, 'sid', SessionId);
    const w = pathParam(c, 'w', WriterId);
    // The request's signal: a client that goes away stops the read and closes the segment.
    const seg = await rawSegment({ ctx: c.get('ctx'), sid, w, signal: clientSignal(c) });
    return slotBody(c, reads, seg.body, {
      'content-type': 'application/x-ndjson',
      'content-length': String(seg.length),
    });
  });

  r.get('/sessions', async (c) => {
    const limit = queryParam(c, 'limit', Limit);
    const cursor = queryParam(c, 'cursor', Cursor) ?? null;
    return c.json(await listSessions({ ctx: c.get('ctx'), limit, cursor }));
  });

  r.get('/sessions/:sid', async (c) => {
    const sid = pathParam(c, 'sid', SessionId);
    return c.json(await getSession({ ctx: c.get('ctx'), sid }));
  });

  r.get('/sessions/:sid/replay', async (c) => {
    const sid = pathParam(c, 'sid', SessionId);
    const format = queryParam(c, 'format', Format);
    const raw = queryParam(c, 'raw', Raw);
    const ctx = c.get('ctx');
    const signal = clientSignal(c);
    if (raw) {
      const body = await rawSession({ ctx, sid, signal });
      return slotBody(c, reads, body, { 'content-type': 'application/x-ndjson' });
    }
    const lines = await replaySession({ ctx, sid, format, signal, gate: reads.gate });
    const type = format === 'text' ? 'text/plain; charset=utf-8' : 'application/x-ndjson';
    return slotBody(c, reads, lines, { 'content-type': type });
  });

  return r;
}
