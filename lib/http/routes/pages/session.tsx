/**
 * `GET /sessions/{sid}`: a session's timeline, its latest status and the merged replay as text (at most
 * `MAX_TIMELINE_LINES` lines), for a signed-in browser. A whole-session read like the API's replay: it
 * holds a replay slot of the token (one more than the cap gets a page saying so, 429), waits its turn in
 * the scan gate, and stops when the browser goes away.
 */
import { BusyPage, NotFoundPage, SessionPage } from '../../../board/pages.js';
import { AppError } from '../../../service/errors.js';
import { sessionTimeline, type Timeline } from '../../../service/sessions.js';
import { getStatus, type StatusView } from '../../../service/status.js';
import { pageAuth } from '../../auth.js';
import { SessionPath } from '../../params.js';
import { readWholeSession } from '../../replay-slots.js';
import { defineRoute, page, redirect } from '../../route.js';

const MAX_TIMELINE_LINES = 2000;

export const sessionPage = defineRoute({
  route: {
    method: 'get',
    path: '/sessions/{sid}',
    operationId: 'sessionPage',
    tags: ['board pages'],
    summary: "A session's timeline",
    middleware: [pageAuth],
    request: { params: SessionPath },
    responses: {
      200: page('its status and the merged replay as text'),
      302: redirect('not signed in: to the sign-in page', '/login'),
      404: page('no such session (or another tenant’s)'),
      429: page(
        'the token already runs as many whole-session reads as it may (`too_many_replays`): a page asking ' +
          'to reload later, `Retry-After` saying when',
      ),
    },
  },
  auth: 'cookie',
  scopes: ['board'],
  errors: ['invalid_id'],
  handler: async (c) => {
    const { sid } = c.req.valid('param');
    const ctx = c.get('ctx');
    let status: StatusView | null = null;
    try {
      status = await getStatus({ ctx, sid });
    } catch (err) {
      if (!(err instanceof AppError && err.code === 'not_found')) throw err;
    }
    let timeline: Timeline = { lines: [], more: false };
    try {
      timeline = await readWholeSession(c, sid, (read) =>
        sessionTimeline({ ...read, maxLines: MAX_TIMELINE_LINES }),
      );
    } catch (err) {
      if (err instanceof AppError && err.code === 'too_many_replays') {
        const { limit, retry_after_seconds } = err.details as { limit: number; retry_after_seconds: number };
        return c.html(<BusyPage limit={limit} retryAfterSeconds={retry_after_seconds} />, 429);
      }
      if (!(err instanceof AppError && err.code === 'not_found')) throw err;
      if (!status) return c.html(<NotFoundPage />, 404);
    }
    return c.html(
      <SessionPage
        sid={sid}
        state={status?.state ?? null}
        note={status?.note ?? null}
        lines={timeline.lines}
        more={timeline.more}
      />,
    );
  },
});
