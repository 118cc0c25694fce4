/**
 * `GET /v1/sessions/{sid}/writers/{w}/segment`: a writer's raw segment as stored, streamed while it holds
 * a replay slot of its token (429 `too_many_replays`); the client going away stops the read.
 */
import { rawSegment } from '../../../service/sessions/replay.js';
import { WriterPath } from '../../params.js';
import { clientSignal, slotBody } from '../../replay-slots.js';
import { defineRoute, raw, SESSION } from '../../route.js';

export const getSegment = defineRoute({
  route: {
    method: 'get',
    path: '/v1/sessions/{sid}/writers/{w}/segment',
    operationId: 'getSegment',
    tags: ['sessions'],
    summary: "A writer's raw segment, as stored",
    request: { params: WriterPath },
    responses: {
      200: {
        description: 'the segment up to its indexed length, streamed',
        headers: { 'content-length': { description: 'the indexed length', schema: { type: 'string' } } },
        content: {
          'application/x-ndjson': { schema: raw('the segment bytes as stored, torn lines included') },
        },
      },
    },
  },
  // The session page links each writer's segment: the board's cookie downloads it.
  auth: 'bearer_or_cookie',
  scopes: ['read', 'board'],
  errors: [...SESSION, 'data_loss', 'storage_layout', 'too_many_replays'],
  streamed: true,
  handler: async (c) => {
    const { sid, w } = c.req.valid('param');
    // The request's signal: a client that goes away stops the read and closes the segment.
    const seg = await rawSegment({ ctx: c.get('ctx'), sid, w, signal: clientSignal(c) });
    return slotBody(c, c.get('services').reads, seg.body, {
      'content-type': 'application/x-ndjson',
      'content-length': String(seg.length),
    });
  },
});
