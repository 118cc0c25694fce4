/**
 * `GET /sessions/{sid}?after=&person=`: a session's timeline as structured rows (issue 14.3;
 * lib/service/timeline/page.ts, lib/board/timeline.tsx), a page of `TIMELINE_PAGE_ROWS` at a time, for a
 * signed-in browser. A whole-session read like the API's replay: it holds a replay slot of the token (one
 * more than the cap gets a page saying so, 429), waits its turn in the scan gate, and stops when the
 * browser goes away.
 */
import { z } from 'zod';
import type { SessionAlert } from '../../../board/alerts.js';
import { BadPageLinkPage, BusyPage, NotFoundPage } from '../../../board/pages.js';
import { SessionTimelinePage, StatusOnlyPage } from '../../../board/timeline.js';
import { sessionAlerts } from '../../../service/alerts/targets.js';
import type { ServiceContext } from '../../../service/shared/context.js';
import { AppError } from '../../../service/shared/errors.js';
import { getStatus } from '../../../service/status/get.js';
import { TIMELINE_PAGE_ROWS, type TimelinePage, timelinePage } from '../../../service/timeline/page.js';
import { listWork } from '../../../service/work/index.js';
import { pageAuth } from '../../auth.js';
import { SessionPath } from '../../params.js';
import { readWholeSession } from '../../replay-slots.js';
import { defineRoute, page, redirect } from '../../route.js';
import { boardHtml } from './board-html.js';

/**
 * `?after=N`: the position of the last row already shown. Read leniently: a link that is not a position
 * shows the timeline from its start, as a page without it does.
 */
const After = z
  .string()
  .optional()
  .describe(
    'show the rows after this position (the "Load more" link gives it); not a number: from the start',
  );
const Person = z
  .string()
  .optional()
  .describe(
    "only this person's messages and the turns attributed to them (a user_id, at most 200 characters)",
  );

const At = z
  .string()
  .optional()
  .describe(
    'show the page that holds this row (its anchor, e.g. `e-m_01…` or `d-0`); links to rows on other pages give it; not an anchor: as without it',
  );

/** Alerts the session page lists, newest first (one per event and target). */
const SESSION_ALERTS = 20;

/**
 * The alerts the session fired, newest first; none when no session record lists it yet (a report may
 * come before any upload: its page shows the report, and its alerts once the session is recorded).
 */
async function alertsOf(ctx: ServiceContext, sid: string): Promise<SessionAlert[]> {
  try {
    return await sessionAlerts(ctx, sid, SESSION_ALERTS);
  } catch (err) {
    if (err instanceof AppError && err.code === 'not_found') return [];
    throw err;
  }
}

/** `?at=` when it has the shape of a row's anchor (lib/service/timeline/text.ts `idAnchor`, `d-`, `q-`). */
function atOf(v: string | undefined): string | null {
  return v !== undefined && /^[deq]-[A-Za-z0-9_.:-]{1,200}$/.test(v) ? v : null;
}

/** `?after=` as a position, −1 (the start) when it is not one. */
function afterOf(v: string | undefined): number {
  return v !== undefined && /^\d{1,9}$/.test(v) ? Number(v) : -1;
}

export const sessionPage = defineRoute({
  route: {
    method: 'get',
    path: '/sessions/{sid}',
    operationId: 'sessionPage',
    tags: ['board pages'],
    summary: "A session's timeline",
    description:
      'The merged transcript as rows (writers, people, messages, turns with their actions, results and ' +
      'outputs, attribution, corrections, declared status reports with their verdicts, quarantined lines, ' +
      `verify findings), ${TIMELINE_PAGE_ROWS} rows a page (\`?after=\`), with the status history, the work ` +
      'items, the alerts it fired (when it fired any) and download links beside it.',
    middleware: [pageAuth],
    request: { params: SessionPath, query: z.object({ after: After, person: Person, at: At }) },
    responses: {
      200: page('the timeline'),
      302: redirect('not signed in: to the sign-in page', '/login'),
      400: page('a session id that is not one (`invalid_id`): a page saying why, linking to the board'),
      404: page('no such session (or another tenant’s)'),
      429: page(
        'the token already runs as many whole-session reads as it may (`too_many_replays`): a page asking ' +
          'to reload later, `Retry-After` saying when',
      ),
    },
  },
  auth: 'cookie',
  scopes: ['board'],
  // A person followed a link: a page like the rest of the board's, not the API's JSON.
  onInvalid: (err, c) =>
    boardHtml(c, <BadPageLinkPage message={`That session link cannot be shown: ${err.message}.`} />, 400),
  handler: async (c) => {
    const { sid } = c.req.valid('param');
    const query = c.req.valid('query');
    const after = afterOf(query.after);
    const person = query.person && query.person.length <= 200 ? query.person : null;
    const at = atOf(query.at);
    const ctx = c.get('ctx');
    let tl: TimelinePage;
    try {
      tl = await readWholeSession(c, sid, async (read) => {
        const page = await timelinePage({ ...read, after, person, at });
        // A row not in this person's view (a status report, another person's message): the whole
        // session at that row, so that the link still lands on it.
        if (at === null || person === null || page.rows.some((r) => r.anchor === at)) return page;
        return timelinePage({ ...read, at });
      });
    } catch (err) {
      if (err instanceof AppError && err.code === 'too_many_replays') {
        const { limit, retry_after_seconds } = err.details as { limit: number; retry_after_seconds: number };
        return boardHtml(c, <BusyPage limit={limit} retryAfterSeconds={retry_after_seconds} />, 429);
      }
      if (!(err instanceof AppError && err.code === 'not_found')) throw err;
      // No segment: a status report may still have come first.
      try {
        const status = await getStatus({ ctx, sid });
        const alerts = await alertsOf(ctx, sid);
        return boardHtml(
          c,
          <StatusOnlyPage sid={sid} status={status} alerts={alerts} now={ctx.now().toISOString()} />,
        );
      } catch (e) {
        if (e instanceof AppError && e.code === 'not_found') return boardHtml(c, <NotFoundPage />, 404);
        throw e;
      }
    }
    const work = (await listWork({ ctx, session: sid, limit: 50 })).items;
    const alerts = await alertsOf(ctx, sid);
    return boardHtml(
      c,
      <SessionTimelinePage tl={tl} work={work} alerts={alerts} now={ctx.now().toISOString()} />,
    );
  },
});
