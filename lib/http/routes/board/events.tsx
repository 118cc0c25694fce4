/**
 * `GET /board/events?<filters>`: the overview's live updates as server-sent events (issue 14.2), for a
 * signed-in page (lib/board/overview.tsx subscribes `<main id="overview">` to it with htmx's SSE
 * extension). `event: overview` carries the re-rendered region whenever what it shows changed, at once on
 * connect; a comment line keeps it open (../../live.ts). Only where the deployment streams
 * (`AppDeps.live` 'sse'); elsewhere the page polls ./fragment.tsx and this answers 404.
 */
import { streamSSE } from 'hono/streaming';
import { OverviewRegion } from '../../../board/overview.js';
import { AppError } from '../../../service/shared/errors.js';
import { LIVE_RETRY_AFTER_SECONDS, pumpOverview } from '../../live.js';
import { clientSignal } from '../../replay-slots.js';
import { defineRoute, raw } from '../../route.js';
import { LiveQuery, liveAuth, liveView, overviewFor } from '../pages/overview-common.js';

export const boardEvents = defineRoute({
  route: {
    method: 'get',
    path: '/board/events',
    operationId: 'boardEvents',
    tags: ['board pages'],
    summary: "The overview's live updates (server-sent events)",
    description:
      'A stream of `event: overview`, whose data is the HTML of the overview region for the query’s ' +
      'filters and page, sent on connect and whenever it changes (checked about every second), and a ' +
      'comment line every 15 s. A token holds at most 8 streams at once.',
    middleware: [liveAuth],
    request: { query: LiveQuery },
    responses: {
      200: {
        description: 'the stream, until the client goes away',
        content: { 'text/event-stream': { schema: raw('server-sent events') } },
      },
    },
  },
  auth: 'bearer_or_cookie',
  scopes: ['board'],
  errors: ['bad_request', 'unauthorized', 'forbidden', 'not_found', 'too_many_streams'],
  handler: (c) => {
    const services = c.get('services');
    if (services.live !== 'sse') {
      throw new AppError('not_found', 'this deployment does not stream: the board polls GET /board/fragment');
    }
    const q = c.req.valid('query');
    const view = liveView(q);
    const ctx = c.get('ctx');
    const timing = services.liveTiming;
    const release = services.liveStreams.tryTake(ctx.caller.root, timing.maxStreams);
    if (!release) {
      c.header('Retry-After', String(LIVE_RETRY_AFTER_SECONDS));
      throw new AppError(
        'too_many_streams',
        `this token already holds ${timing.maxStreams} live board pages open, the most it may: close one, ` +
          `or try again in ${LIVE_RETRY_AFTER_SECONDS} s`,
        { limit: timing.maxStreams, retry_after_seconds: LIVE_RETRY_AFTER_SECONDS },
      );
    }
    const signal = clientSignal(c);
    return streamSSE(c, async (stream) => {
      const ac = new AbortController();
      const stop = () => ac.abort();
      stream.onAbort(stop);
      signal.addEventListener('abort', stop, { once: true });
      services.stopping.addEventListener('abort', stop, { once: true });
      if (services.stopping.aborted) stop();
      try {
        await pumpOverview(
          stream,
          async () => {
            const overview = await overviewFor(c, q, view);
            return {
              etag: overview.etag,
              html: async () =>
                String(await (<OverviewRegion overview={overview} view={view} limit={q.limit} />).toString()),
            };
          },
          timing,
          ac.signal,
          (err) => services.log(`GET /board/events: a check failed`, err),
        );
      } finally {
        signal.removeEventListener('abort', stop);
        services.stopping.removeEventListener('abort', stop);
        release();
      }
    });
  },
});
