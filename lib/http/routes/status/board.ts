/**
 * `GET /v1/board?limit=&cursor=`: everything the board shows, paged as `GET /v1/sessions` is. The one API
 * route that also takes the board's cookie (`auth: 'bearer_or_cookie'`).
 */
import { z } from 'zod';
import { getBoard } from '../../../service/board/get.js';
import { Board } from '../../../service/board/schemas.js';
import { BoardLimit, Cursor } from '../../params.js';
import { AUTHED, defineRoute, json } from '../../route.js';

export const getBoardRoute = defineRoute({
  route: {
    method: 'get',
    path: '/v1/board',
    operationId: 'getBoard',
    tags: ['status'],
    summary: 'Everything the board shows',
    description:
      'Sessions with their latest state and note, last activity and agents, most recent first, a page at ' +
      'a time (signed cursors, as `GET /v1/sessions`), with how many there are in all.',
    request: { query: z.object({ limit: BoardLimit, cursor: Cursor }) },
    responses: { 200: json('a page of the board', Board) },
  },
  auth: 'bearer_or_cookie',
  scopes: ['board', 'read'],
  errors: ['bad_request', 'invalid_cursor', ...AUTHED],
  handler: async (c) => {
    const { limit, cursor } = c.req.valid('query');
    return c.json(await getBoard({ ctx: c.get('ctx'), limit, cursor: cursor ?? null }), 200);
  },
});
