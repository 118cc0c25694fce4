/**
 * The board's alerts page (issue 28 item 5; lib/board/alerts.tsx, lib/service/board/alerts.ts):
 * `GET /alerts`, each alert target of the tenant with its last deliveries, and `POST /alerts/{id}/test`,
 * its "Send a test" button. Both need an admin (an unbound token with the `admin` scope, or a person whose
 * role is admin: the targets are admin-only in the API too); a board viewer who is no admin gets a page
 * saying what to ask for. The checks, and the form's guards against other sites, are ./admin-guard.tsx's.
 */
import type { Context } from 'hono';
import { z } from 'zod';
import { type AlertsFlash, AlertsForbiddenPage, AlertsPage, maskTargetUrl } from '../../../board/alerts.js';
import { BadPageLinkPage } from '../../../board/pages.js';
import { AlertTargetId } from '../../../contract/alerts.js';
import { escapeControl } from '../../../log/format/escape.js';
import { sendTest } from '../../../service/alerts/targets.js';
import { type BoardAlerts, boardAlerts } from '../../../service/board/alerts.js';
import { AppError } from '../../../service/shared/errors.js';
import type { AppEnv } from '../../auth.js';
import { formToken, formTokenOk } from '../../form-token.js';
import { defineRoute, page, raw, redirect } from '../../route.js';
import { adminPageAuth as adminAuth, adminOnly, byBearer, ownPageOnly as ownPage } from './admin-guard.js';
import { boardHtml } from './board-html.js';

/**
 * The 403 page for a signed-in caller who may not administer alerts: a person is told to ask for the
 * admin role; a token sign-in, which token to ask for.
 */
function forbidden(c: Context<AppEnv>) {
  if (c.get('ctx').person) return adminOnly(c, 'the alerts page');
  const { scopes, session } = c.get('ctx').caller;
  return boardHtml(c, <AlertsForbiddenPage has={scopes} bound={session !== null} />, 403);
}

/** Who may use these pages (./admin-guard.tsx): an admin; another signed-in viewer gets `forbidden`. */
const adminPageAuth = adminAuth(forbidden);

/** The flash line of `?sent=` (a target still listed) or `?gone=`; anything else: none. */
function flashOf(
  q: { sent?: string | undefined; gone?: string | undefined },
  data: BoardAlerts,
): AlertsFlash {
  if (q.gone !== undefined) return { kind: 'gone' };
  const t = q.sent === undefined ? undefined : data.targets.find((x) => x.target.id === q.sent)?.target;
  if (!t) return null;
  return { kind: 'sent', label: t.label ? escapeControl(t.label) : maskTargetUrl(t.url) };
}

/** The same-origin check of the button's POST (./admin-guard.tsx), its refusal a page (403). */
const ownPageOnly = ownPage(
  (origin) =>
    `That button was not pressed on this board's alerts page (the browser named no origin, or another one than ${origin}): nothing was sent. Open the alerts page and press it there.`,
);

export const alertsPage = defineRoute({
  route: {
    method: 'get',
    path: '/alerts',
    operationId: 'alertsPage',
    tags: ['board pages'],
    summary: "The tenant's alert targets and their deliveries",
    description:
      'Each alert target (its label, its URL masked after the host, format, events, agents and hold), its ' +
      'last 10 deliveries (event, session, status, attempts, last answer, next try or delivery time), its ' +
      'dead letters counted, and a "Send a test" button. Needs a token with the `admin` scope bound to no ' +
      'session (a browser signs in with one that also has `board`); a signed-in viewer without it gets a ' +
      'page (403) saying which token to ask for.',
    middleware: [adminPageAuth],
    request: {
      query: z.object({
        sent: z.string().optional().describe('a test was queued for this target: the page says so'),
        gone: z.string().optional().describe('the target of a test was removed meanwhile: the page says so'),
      }),
    },
    responses: {
      200: page('the alert targets'),
      302: redirect('not signed in: to the sign-in page', '/login'),
      403: page(
        'signed in without the `admin` scope, or with a session-bound token: a page saying which token to ask for',
      ),
    },
  },
  auth: 'cookie',
  scopes: ['admin'],
  handler: async (c) => {
    const data = await boardAlerts(c.get('ctx'));
    return boardHtml(
      c,
      <AlertsPage data={data} csrf={formToken(c)} flash={flashOf(c.req.valid('query'), data)} />,
    );
  },
});

export const alertsTestPage = defineRoute({
  route: {
    method: 'post',
    path: '/alerts/{id}/test',
    operationId: 'alertsTestPage',
    tags: ['board pages'],
    summary: 'Send an alert target a test event, from the board',
    description:
      'The alerts page\'s "Send a test" button: queues an `alert.test` event for this target only (as ' +
      '`POST /v1/alerts/{id}/test`) and redirects back to `/alerts` with a line saying so. Only from the ' +
      "board's own page when the board's cookie carries it: a cross-site form is refused (403, a page), and " +
      "the form must carry the sign-in's form token (`csrf`); a request with `Authorization` needs neither.",
    middleware: [ownPageOnly, adminPageAuth],
    request: { params: z.object({ id: AlertTargetId }) },
    responses: {
      303: redirect('queued (`?sent=`), or the target was removed meanwhile (`?gone=1`)', '/alerts'),
      302: redirect('not signed in: to the sign-in page', '/login'),
      400: page('not a target id: a page linking back'),
      403: page(
        'nothing is sent: no `admin` scope, a form token that is not this sign-in’s, or a form from ' +
          'another site (neither `Origin` nor `Sec-Fetch-Site` says this board): a page saying why',
      ),
    },
  },
  auth: 'cookie',
  scopes: ['admin'],
  body: {
    contentType: 'application/x-www-form-urlencoded',
    schema: raw("csrf=…: the form token the alerts page's form carries"),
  },
  onInvalid: (err, c) =>
    boardHtml(c, <BadPageLinkPage message={`That alert target cannot be tested: ${err.message}.`} />, 400),
  handler: async (c) => {
    const form = await c.req.parseBody();
    if (!byBearer(c) && !formTokenOk(c, form.csrf)) {
      return boardHtml(
        c,
        <BadPageLinkPage message="That form is not this sign-in's (it is from an older sign-in, or from another page): nothing was sent. Reload the alerts page and press the button again." />,
        403,
      );
    }
    const { id } = c.req.valid('param');
    try {
      await sendTest(c.get('ctx'), id, { via: 'board' });
    } catch (err) {
      if (err instanceof AppError && err.code === 'not_found') return c.redirect('/alerts?gone=1', 303);
      throw err;
    }
    return c.redirect(`/alerts?sent=${id}`, 303);
  },
});
