/**
 * `GET /sessions/{sid}`: a session's timeline, its latest status and the merged replay as text (at most
 * `MAX_TIMELINE_LINES` lines), for a signed-in browser.
 */
import { NotFoundPage, SessionPage } from '../../../board/pages.js';
import { AppError } from '../../../service/errors.js';
import { replaySession } from '../../../service/sessions.js';
import { getStatus, type StatusView } from '../../../service/status.js';
import { pageAuth } from '../../auth.js';
import { SessionPath } from '../../params.js';
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
    const lines: string[] = [];
    let more = false;
    try {
      chunks: for await (const chunk of await replaySession({ ctx, sid, format: 'text' })) {
        for (const line of chunk.split('\n')) {
          if (line === '') continue;
          if (lines.length === MAX_TIMELINE_LINES) {
            more = true;
            break chunks;
          }
          lines.push(line);
        }
      }
    } catch (err) {
      if (!(err instanceof AppError && err.code === 'not_found')) throw err;
      if (!status) return c.html(<NotFoundPage />, 404);
    }
    return c.html(
      <SessionPage
        sid={sid}
        state={status?.state ?? null}
        note={status?.note ?? null}
        lines={lines}
        more={more}
      />,
    );
  },
});
