/**
 * `GET /v1/sessions/{sid}/replay?format=&raw=`: the merged transcript, streamed while it holds a replay
 * slot of its token; its corrections pass waits for a place in the scan gate. The same bytes the CLI gives
 * for the same session directory. Where the deployment stores large replays (issue 17.2, on AWS), a
 * session over its inline size is answered 303 with a short-lived URL of the stored copy, or 202 while
 * that copy is being built.
 */
import { z } from 'zod';
import { planReplay } from '../../../service/sessions/large-replay.js';
import { rawSession, replaySession } from '../../../service/sessions/replay.js';
import { StoredReplayAnswer } from '../../../service/sessions/schemas.js';
import { Format, Raw, SessionPath } from '../../params.js';
import { clientSignal, slotBody } from '../../replay-slots.js';
import { defineRoute, json, raw, SESSION } from '../../route.js';

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
      'frees its place when its client goes away. On a deployment that stores large replays (AWS), a',
      'session over its inline size is answered `303` with `Location`: a short-lived URL of the same bytes',
      '(no token needed: a client drops its `Authorization` on the way), or `202` with `Retry-After` while',
      'the copy is being merged; ask again then.',
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
      202: json(
        'a large session: its stored replay is being merged; ask again after Retry-After',
        StoredReplayAnswer,
      ),
      303: json('a large session: its stored replay is at `Location` (and `replay.url`)', StoredReplayAnswer),
    },
  },
  // The session page links the merged and raw replays: the board's cookie downloads them.
  auth: 'bearer_or_cookie',
  scopes: ['read', 'board'],
  errors: [
    'bad_request',
    ...SESSION,
    'data_loss',
    'storage_layout',
    'too_many_replays',
    'replay_build_failed',
  ],
  streamed: true,
  handler: async (c) => {
    const { sid } = c.req.valid('param');
    const { format, raw: asStored } = c.req.valid('query');
    const ctx = c.get('ctx');
    const { reads } = c.get('services');
    const signal = clientSignal(c);
    const plan = await planReplay({ ctx, sid, format, raw: asStored, signal });
    if (plan.kind === 'archived') {
      c.header('Location', plan.replay.url);
      c.header('Cache-Control', 'no-store');
      return c.json({ status: 'ready' as const, session_bytes: plan.bytes, replay: plan.replay }, 303);
    }
    if (plan.kind === 'building') {
      c.header('Retry-After', String(plan.retry_after));
      return c.json(
        { status: 'building' as const, session_bytes: plan.bytes, retry_after: plan.retry_after },
        202,
      );
    }
    if (asStored) {
      const body = await rawSession({ ctx, sid, signal });
      return slotBody(c, reads, body, { 'content-type': 'application/x-ndjson' });
    }
    const lines = await replaySession({ ctx, sid, format, signal, gate: reads.gate });
    const type = format === 'text' ? 'text/plain; charset=utf-8' : 'application/x-ndjson';
    return slotBody(c, reads, lines, { 'content-type': type });
  },
});
