/**
 * Session routes (DESIGN §4): chunk ingest, the writer index, listings, replay and raw segments. They only
 * validate, call a verb of `lib/service`, and shape the answer.
 */
import { Hono } from 'hono';
import { bodyLimit } from 'hono/body-limit';
import { z } from 'zod';
import { AppError } from '../../service/errors.js';
import { ingestChunk, MAX_CHUNK_BYTES } from '../../service/ingest.js';
import {
  getSession,
  getWriter,
  listSessions,
  rawSegment,
  rawSession,
  replaySession,
} from '../../service/sessions.js';
import type { AppEnv } from '../auth.js';
import { pathParam, queryParam, SessionId, WriterId } from '../params.js';
import { toByteStream } from '../stream.js';

// Digits only: `z.coerce` would read '', ' 0', '0x0' and '1e3' as numbers.
const Offset = z
  .string()
  .regex(/^\d{1,16}$/, 'a byte offset is a non-negative decimal integer')
  .transform(Number)
  .pipe(z.number().int().max(Number.MAX_SAFE_INTEGER));
const Limit = z.coerce.number().int().min(1).max(200).default(50);
const Format = z.enum(['ndjson', 'text']).default('ndjson');
const Flag = z
  .enum(['0', '1', 'true', 'false'])
  .optional()
  .transform((v) => v === '1' || v === 'true');

export function sessionRoutes(): Hono<AppEnv> {
  const r = new Hono<AppEnv>();

  r.post(
    '/sessions/:sid/writers/:w/chunks',
    bodyLimit({
      maxSize: MAX_CHUNK_BYTES,
      onError: () => {
        throw new AppError('payload_too_large', `a chunk may hold at most ${MAX_CHUNK_BYTES} bytes`, {
          max_bytes: MAX_CHUNK_BYTES,
        });
      },
    }),
    async (c) => {
      const sid = pathParam(c, 'sid', SessionId);
      const w = pathParam(c, 'w', WriterId);
      if (c.req.query('offset') === undefined) {
        throw new AppError(
          'bad_request',
          'the query parameter offset is required: the byte offset of the chunk',
        );
      }
      const offset = queryParam(c, 'offset', Offset);
      const body = new Uint8Array(await c.req.arrayBuffer());
      const res = await ingestChunk({ ctx: c.get('ctx'), input: { sid, w, offset, body } });
      const { created, ...answer } = res;
      return c.json(answer, created ? 201 : 200);
    },
  );

  r.get('/sessions/:sid/writers/:w', async (c) => {
    const sid = pathParam(c, 'sid', SessionId);
    const w = pathParam(c, 'w', WriterId);
    return c.json(await getWriter({ ctx: c.get('ctx'), sid, w }));
  });

  r.get('/sessions/:sid/writers/:w/segment', async (c) => {
    const sid = pathParam(c, 'sid', SessionId);
    const w = pathParam(c, 'w', WriterId);
    const seg = await rawSegment({ ctx: c.get('ctx'), sid, w });
    return c.body(toByteStream(seg.body), 200, {
      'content-type': 'application/x-ndjson',
      'content-length': String(seg.length),
    });
  });

  r.get('/sessions', async (c) => {
    const limit = queryParam(c, 'limit', Limit);
    const cursor = c.req.query('cursor') ?? null;
    return c.json(await listSessions({ ctx: c.get('ctx'), limit, cursor }));
  });

  r.get('/sessions/:sid', async (c) => {
    const sid = pathParam(c, 'sid', SessionId);
    return c.json(await getSession({ ctx: c.get('ctx'), sid }));
  });

  r.get('/sessions/:sid/replay', async (c) => {
    const sid = pathParam(c, 'sid', SessionId);
    const format = queryParam(c, 'format', Format);
    const raw = queryParam(c, 'raw', Flag);
    const ctx = c.get('ctx');
    if (raw) {
      const body = await rawSession({ ctx, sid });
      return c.body(toByteStream(body), 200, { 'content-type': 'application/x-ndjson' });
    }
    const lines = await replaySession({ ctx, sid, format });
    const type = format === 'text' ? 'text/plain; charset=utf-8' : 'application/x-ndjson';
    return c.body(toByteStream(lines), 200, { 'content-type': type });
  });

  return r;
}
