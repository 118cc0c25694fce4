/**
 * `GET /v1/sessions/{sid}/replay?format=&raw=`: the merged transcript, streamed while it holds a replay
 * slot of its token; its corrections pass waits for a place in the scan gate. The same bytes the CLI gives
 * for the same session directory.
 */
import { z } from 'zod';
import { rawSession, replaySession } from '../../../service/sessions.js';
import { Format, Raw, SessionPath } from '../../params.js';
import { clientSignal, slotBody } from '../../replay-slots.js';
import { defineRoute, raw, SESSION } from '../../route.js';

export const replay = defineRoute({
  route: {
    method: 'get',
    path: '/v1/sessions/{sid}/replay',
    operationId: 'replay',
    tags: ['sessions'],
    summary: 'The merged transcript, streamed',
    description: [
      "Every writer's segment merged into one order, corrections applied (each corrected event carries",
      'its `corrected` provenance); the same bytes the CLI gives for the same session directory.',
      'A signed-in board browser may download it too (its cookie, scope board). A token runs at most a few replays, segment downloads, verifies,',
      'inspects and attributions at once (`too_many_replays`, 429 with `Retry-After`); a replay stops and',
      'frees its place when its client goes away.',
    ].join(' '),
    request: { params: SessionPath, query: z.object({ format: Format, raw: Raw }) },
    responses: {
      200: {
        description: 'the transcript',
        content: {
          'application/x-ndjson': {
            schema: raw('format=ndjson (the default) or raw=1: one JSON event per line'),
          },
          'text/plain; charset=utf-8': { schema: raw('format=text: one readable line per event') },
        },
      },
    },
  },
  // The session page links the merged and raw replays: the board's cookie downloads them.
  auth: 'bearer_or_cookie',
  scopes: ['read', 'board'],
  errors: ['bad_request', ...SESSION, 'data_loss', 'storage_layout', 'too_many_replays'],
  streamed: true,
  handler: async (c) => {
    const { sid } = c.req.valid('param');
    const { format, raw: asStored } = c.req.valid('query');
    const ctx = c.get('ctx');
    const { reads } = c.get('services');
    const signal = clientSignal(c);
    if (asStored) {
      const body = await rawSession({ ctx, sid, signal });
      return slotBody(c, reads, body, { 'content-type': 'application/x-ndjson' });
    }
    const lines = await replaySession({ ctx, sid, format, signal, gate: reads.gate });
    const type = format === 'text' ? 'text/plain; charset=utf-8' : 'application/x-ndjson';
    return slotBody(c, reads, lines, { 'content-type': type });
  },
});
