/**
 * `GET /`: a page of the board (issue 8.7), `?limit=` and `?cursor=` as `GET /v1/board` takes them; a link
 * that cannot be followed gets a page that says so, not the API's JSON error. `?token=` signs in first
 * (./sign-in.tsx).
 */
import { z } from 'zod';
import { BadPageLinkPage, BoardPage } from '../../../board/pages.js';
import { type Board, getBoard } from '../../../service/board.js';
import { AppError } from '../../../service/errors.js';
import { pageAuth } from '../../auth.js';
import { BoardLimit, Cursor } from '../../params.js';
import { defineRoute, page, redirect } from '../../route.js';
import { signInLink } from './sign-in.js';

/** The page for a link to a page of the board that cannot be shown (400). */
function badLink(c: Parameters<typeof pageAuth>[0], err: AppError) {
  return c.html(<BadPageLinkPage message={`That page of the board cannot be shown: ${err.message}.`} />, 400);
}

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
      'a page of the board, with how many sessions there are and a link to the next page.',
    middleware: [signInLink, pageAuth],
    request: {
      query: z.object({
        token: z
          .string()
          .optional()
          .describe('sign in with this token: it moves into an HttpOnly cookie and leaves the address bar'),
        limit: BoardLimit,
        cursor: Cursor,
      }),
    },
    responses: {
      200: page('the board; with a `?token=` not opened by the user: the page asking to confirm'),
      302: redirect('not signed in: to the sign-in page', '/login'),
      303: redirect('signed in (`?token=`): to the board', '/'),
      400: page('a `?cursor=` this server did not give, or a bad `?limit=`: a page linking to the first'),
      401: page('the `?token=` was refused: the sign-in page with why'),
    },
  },
  auth: 'cookie',
  scopes: ['board'],
  onInvalid: (err, c) => badLink(c, err),
  handler: async (c) => {
    const { limit, cursor } = c.req.valid('query');
    let board: Board;
    try {
      board = await getBoard({ ctx: c.get('ctx'), limit, cursor: cursor ?? null });
    } catch (err) {
      if (!(err instanceof AppError && err.code === 'invalid_cursor')) throw err;
      return badLink(c, err);
    }
    const keep = c.req.query('limit') === undefined ? '' : `&limit=${limit}`;
    const nextHref = board.next === null ? null : `/?cursor=${encodeURIComponent(board.next)}${keep}`;
    return c.html(<BoardPage board={board} nextHref={nextHref} later={cursor !== undefined} />);
  },
});
