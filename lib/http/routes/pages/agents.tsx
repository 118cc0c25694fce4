/**
 * `GET /agents/{agent}` (issue 14.4): what one agent did: the overview with its agent filter fixed by the
 * path.
 */
import { z } from 'zod';
import { pageAuth } from '../../auth.js';
import { defineRoute, page, redirect } from '../../route.js';
import { badOverviewLink, OverviewQuery, overviewPage } from './overview-common.js';

export const agentPage = defineRoute({
  route: {
    method: 'get',
    path: '/agents/{agent}',
    operationId: 'agentPage',
    tags: ['board pages'],
    summary: "One agent's sessions",
    middleware: [pageAuth],
    request: {
      params: z.object({
        agent: z.string().min(1).max(200).describe('the agent’s name, as its writers record it'),
      }),
      query: OverviewQuery.omit({ agent: true }),
    },
    responses: {
      200: page('the overview of the sessions this agent wrote in'),
      302: redirect('not signed in: to the sign-in page', '/login'),
      400: page('a bad agent name, `?page=`, `?limit=` or filter: a page linking to the board'),
    },
  },
  auth: 'cookie',
  scopes: ['board'],
  onInvalid: (err, c) => badOverviewLink(c, err),
  handler: (c) => overviewPage(c, c.req.valid('query'), { kind: 'agent', id: c.req.valid('param').agent }),
});
