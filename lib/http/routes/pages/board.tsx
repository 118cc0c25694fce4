/**
 * `GET /`: the board's overview (issue 14.1): every session urgent first, filtered and paged by its query
 * (`?state=&agent=&person=&q=&page=&limit=`), with live updates where the deployment can serve them
 * (../board/events.ts, ../board/fragment.tsx). A link that cannot be followed gets a page that says so,
 * not the API's JSON error. `?token=` signs in first (./sign-in.tsx).
 */
import { z } from 'zod';
import { pageAuth } from '../../auth.js';
import { defineRoute, page, redirect } from '../../route.js';
import { badOverviewLink, OverviewQuery, overviewPage } from './overview-common.js';
import { signInLink } from './sign-in.js';

export const boardPage = defineRoute({
  route: {
    method: 'get',
    path: '/',
    operationId: 'boardPage',
    tags: ['board pages'],
    summary: 'The status board',
    description:
      'With `?token=`: signs the browser in (a token with the board scope), sets the cookie and redirects ' +
      'here without the token, when the browser says the user opened the link (`Sec-Fetch-Site: none` or ' +
      '`same-origin`, a top-level navigation). From another site, or from a client that does not say, it ' +
      'answers a page that asks to confirm with a button posting to `/login` (no login CSRF). Without it: ' +
      'the overview, urgent first (blocked, needs review, working, done recently, the rest), a page at a ' +
      'time, with each group’s count and the filters of the query.',
    middleware: [signInLink, pageAuth],
    request: {
      query: OverviewQuery.extend({
        token: z
          .string()
          .optional()
          .describe('sign in with this token: it moves into an HttpOnly cookie and leaves the address bar'),
      }),
    },
    responses: {
      200: page('the overview; with a `?token=` not opened by the user: the page asking to confirm'),
      302: redirect('not signed in: to the sign-in page', '/login'),
      303: redirect('signed in (`?token=`): to the board', '/'),
      400: page('a bad `?page=`, `?limit=` or filter: a page linking to the first'),
      401: page('the `?token=` was refused: the sign-in page with why'),
    },
  },
  auth: 'cookie',
  scopes: ['board'],
  onInvalid: (err, c) => badOverviewLink(c, err),
  handler: (c) => overviewPage(c, c.req.valid('query'), { kind: 'all' }),
});
