/**
 * The board's HTML routes and the Jupyter-style sign-in (issue 2): `GET /?token=…` or the sign-in form
 * checks a token with the `board` scope, sets it in an HttpOnly, SameSite=Strict cookie, and redirects to
 * `/` so the token leaves the address bar and the history.
 *
 * The link signs in at once only when the browser says the user opened it (issue 8.6, login CSRF): a
 * top-level navigation (`Sec-Fetch-Mode: navigate`, `Sec-Fetch-Dest: document` when sent) from no site
 * (`Sec-Fetch-Site: none`: typed, pasted, a bookmark, a link from a terminal) or from the board itself
 * (`same-origin`). Any other request (a link or a redirect from another site, `same-site`, an image, a
 * frame, or a client that sends no `Sec-Fetch-Site` at all: browsers before 2023, curl, a plain-HTTP
 * board on a LAN address, to which Chromium sends none) gets a page that names the tenant and asks to
 * confirm with a button, which posts the token to `/login` (guarded against cross-site posts). So another
 * site cannot sign a visitor's browser in to a board of its choosing.
 */
import { type Context, Hono } from 'hono';
import { deleteCookie, setCookie } from 'hono/cookie';
import {
  BadPageLinkPage,
  BoardPage,
  ConfirmSignInPage,
  LoginPage,
  NotFoundPage,
  SessionPage,
} from '../../board/pages.js';
import { type Board, getBoard } from '../../service/board.js';
import type { ServiceDeps } from '../../service/context.js';
import { AppError } from '../../service/errors.js';
import { replaySession } from '../../service/sessions.js';
import { getStatus, type StatusView } from '../../service/status.js';
import { authenticate } from '../../service/tokens.js';
import type { AppEnv } from '../auth.js';
import { BOARD_COOKIE, requireAuth } from '../auth.js';
import { BoardLimit, Cursor, pathParam, queryParam, SessionId } from '../params.js';

const MAX_TIMELINE_LINES = 2000;

/**
 * Whether a request is a top-level navigation the user started (see the module's doc): only then does
 * `GET /?token=` sign in without asking.
 */
export function isUserNavigation(header: (name: string) => string | undefined): boolean {
  const site = header('sec-fetch-site');
  if (site !== 'none' && site !== 'same-origin') return false;
  const mode = header('sec-fetch-mode');
  const dest = header('sec-fetch-dest');
  return (mode === undefined || mode === 'navigate') && (dest === undefined || dest === 'document');
}

export function boardRoutes(deps: Required<ServiceDeps>): Hono<AppEnv> {
  const r = new Hono<AppEnv>();

  /**
   * Checks `secret` (a token with the board scope); with `confirm`, answers the page that asks to sign
   * in, else sets the cookie and redirects to the board. A refused token gets the sign-in page with why.
   */
  const signIn = async (c: Context<AppEnv>, secret: string | undefined, confirm = false) => {
    try {
      const rec = await authenticate(deps.state, secret, deps.now());
      if (!rec.scopes.includes('board')) throw new AppError('forbidden', 'this token has no board scope');
      if (confirm) return c.html(<ConfirmSignInPage tenant={rec.tenant} token={secret!} />);
      setCookie(c, BOARD_COOKIE, secret!, {
        httpOnly: true,
        sameSite: 'Strict',
        path: '/',
        secure: new URL(c.req.url).protocol === 'https:',
        maxAge: 30 * 86400,
      });
      return c.redirect('/', 303);
    } catch (err) {
      if (!(err instanceof AppError)) throw err;
      const msg =
        err.code === 'forbidden'
          ? 'That token cannot open the board: it needs the board scope.'
          : 'That token is not valid here (unknown, revoked or expired).';
      return c.html(<LoginPage error={msg} />, 401);
    }
  };

  r.get('/login', (c) => c.html(<LoginPage />));
  r.post('/login', async (c) => {
    const form = await c.req.parseBody();
    return signIn(c, typeof form.token === 'string' ? form.token.trim() : undefined);
  });
  r.post('/logout', (c) => {
    deleteCookie(c, BOARD_COOKIE, { path: '/' });
    return c.redirect('/login', 303);
  });

  // Pages need a signed-in browser; anyone else is sent to sign in rather than shown a JSON error.
  const pageAuth = requireAuth(deps, true);
  r.use('/', async (c, next) => {
    const token = c.req.query('token');
    if (token !== undefined) return signIn(c, token, !isUserNavigation((h) => c.req.header(h)));
    return next();
  });
  for (const path of ['/', '/sessions/:sid']) {
    r.use(path, async (c, next) => {
      try {
        await pageAuth(c, async () => {});
      } catch (err) {
        if (err instanceof AppError && err.code === 'unauthorized') return c.redirect('/login', 302);
        throw err;
      }
      const ctx = c.get('ctx');
      if (!ctx.caller.scopes.includes('board')) return c.redirect('/login', 302);
      return next();
    });
  }

  // A page of the board (issue 8.7): `?limit=` and `?cursor=` as `GET /v1/board` takes them; a link that
  // cannot be followed gets a page that says so, not the API's JSON error.
  r.get('/', async (c) => {
    let board: Board;
    let limit: number;
    let cursor: string | null;
    try {
      limit = queryParam(c, 'limit', BoardLimit);
      cursor = queryParam(c, 'cursor', Cursor) ?? null;
      board = await getBoard({ ctx: c.get('ctx'), limit, cursor });
    } catch (err) {
      if (!(err instanceof AppError && (err.code === 'bad_request' || err.code === 'invalid_cursor')))
        throw err;
      return c.html(
        <BadPageLinkPage message={`That page of the board cannot be shown: ${err.message}.`} />,
        400,
      );
    }
    const keep = c.req.query('limit') === undefined ? '' : `&limit=${limit}`;
    const nextHref = board.next === null ? null : `/?cursor=${encodeURIComponent(board.next)}${keep}`;
    return c.html(<BoardPage board={board} nextHref={nextHref} later={cursor !== null} />);
  });

  r.get('/sessions/:sid', async (c) => {
    const sid = pathParam(c, 'sid', SessionId);
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
  });

  return r;
}
