/**
 * `GET /people/{user_id}` (issue 14.4): the sessions one person took part in, urgent first: the overview
 * with its person filter fixed by the path, each session linking to its timeline for that person.
 */
import { z } from 'zod';
import { pageAuth } from '../../auth.js';
import { defineRoute, page, redirect } from '../../route.js';
import { badOverviewLink, OverviewQuery, overviewPage } from './overview-common.js';

export const personPage = defineRoute({
  route: {
    method: 'get',
    path: '/people/{user_id}',
    operationId: 'personPage',
    tags: ['board pages'],
    summary: "One person's sessions",
    middleware: [pageAuth],
    request: {
      params: z.object({ user_id: z.string().min(1).max(200).describe('the person’s user_id, as recorded') }),
      query: OverviewQuery.omit({ person: true }),
    },
    responses: {
      200: page('the overview of the sessions this person took part in'),
      302: redirect('not signed in: to the sign-in page', '/login'),
      400: page('a bad user_id, `?page=`, `?limit=` or filter: a page linking to the board'),
    },
  },
  auth: 'cookie',
  scopes: ['board'],
  onInvalid: (err, c) => badOverviewLink(c, err),
  handler: (c) => overviewPage(c, c.req.valid('query'), { kind: 'person', id: c.req.valid('param').user_id }),
});
