/**
 * The board's Jupyter-style sign-in (issue 2): `GET /?token=…` or the sign-in form checks a token with the
 * `board` scope, sets it in an HttpOnly, SameSite=Strict cookie, and redirects to `/` so the token leaves
 * the address bar and the history.
 *
 * The link signs in at once only when the browser says the user opened it (issue 8.6, login CSRF): a
 * top-level navigation (`Sec-Fetch-Mode: navigate`, `Sec-Fetch-Dest: document` when sent) from no site
 * (`Sec-Fetch-Site: none`: typed, pasted, a bookmark, a link from a terminal) or from the board itself
 * (`same-origin`). Any other request (a link or a redirect from another site, `same-site`, an image, a
 * frame, or a client that sends no `Sec-Fetch-Site` at all: browsers before 2023, curl, a plain-HTTP
 * board on a LAN address, to which Chromium sends none) gets a page that names the tenant and asks to
 * confirm with a button, which posts the token to `/login` (guarded against cross-site posts). So another
 * site cannot sign a visitor's browser in to a board of its choosing.
 *
 * A page asked for signed out sends the browser to `/login?next=<that page>` (`signInLocation` in
 * ../../auth.ts); the sign-in form carries `next` and, signed in, the browser goes back there, but only
 * when `safeNext` finds it a path of this board: never to another site (an open redirect).
 */
import type { Context, MiddlewareHandler } from 'hono';
import { setCookie } from 'hono/cookie';
import { ConfirmSignInPage, LoginPage } from '../../../board/pages.js';
import { AppError } from '../../../service/shared/errors.js';
import { authenticate } from '../../../service/tokens/create.js';
import { type AppEnv, BOARD_COOKIE, MAX_NEXT } from '../../auth.js';

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

/** Where no `next` is given or a `next` is refused: the board's first page. */
const HOME = '/';
/** An origin no request has, to resolve a `next` against and see that it stays there. */
const HERE = 'http://board.invalid';

/**
 * `next` when it is a path of this board to return to after signing in, else `/`. A path of this board
 * starts with one `/` (not `//` or `/\`, which browsers read as another host), holds only printable ASCII
 * (no control characters, spaces, backslashes or anything not URL-encoded) and is at most `MAX_NEXT`
 * characters; it also must resolve to this origin. So a redirect to it never leaves the board.
 */
export function safeNext(next: unknown): string {
  if (typeof next !== 'string' || next.length > MAX_NEXT) return HOME;
  if (!/^\/(?![/\\])[\x21-\x5b\x5d-\x7e]*$/.test(next)) return HOME;
  try {
    return new URL(next, HERE).origin === HERE ? next : HOME;
  } catch {
    return HOME;
  }
}

/**
 * Checks `secret` (a token with the board scope); with `confirm`, answers the page that asks to sign in,
 * else sets the cookie and redirects to `next` when `safeNext` allows it, else to the board. A refused
 * token gets the sign-in page with why (401), `next` kept.
 * @param next where the browser asked to go before signing in (a form field or query: not yet checked)
 */
export async function signIn(
  c: Context<AppEnv>,
  secret: string | undefined,
  confirm = false,
  next?: unknown,
) {
  const back = safeNext(next);
  // Only a checked path goes back into a page: a refused one is dropped, not carried on.
  const carried = back === HOME ? undefined : back;
  const { deps } = c.get('services');
  try {
    const rec = await authenticate(deps.state, secret, deps.now());
    if (!rec.scopes.includes('board')) throw new AppError('forbidden', 'this token has no board scope');
    if (confirm) return c.html(<ConfirmSignInPage tenant={rec.tenant} token={secret!} next={carried} />);
    setCookie(c, BOARD_COOKIE, secret!, {
      httpOnly: true,
      sameSite: 'Strict',
      path: '/',
      secure: new URL(c.req.url).protocol === 'https:',
      maxAge: 30 * 86400,
    });
    return c.redirect(back, 303);
  } catch (err) {
    if (!(err instanceof AppError)) throw err;
    const msg =
      err.code === 'forbidden'
        ? 'That token cannot open the board: it needs the board scope.'
        : 'That token is not valid here (unknown, revoked or expired).';
    return c.html(<LoginPage error={msg} next={carried} />, 401);
  }
}

/**
 * `GET /?token=…[&next=…]`: signs in (or asks to) before the page checks the cookie, then goes to `next`
 * (when `safeNext` allows it); without a token, goes on.
 */
export const signInLink: MiddlewareHandler<AppEnv> = async (c, next) => {
  const token = c.req.query('token');
  if (token !== undefined)
    return signIn(c, token, !isUserNavigation((h) => c.req.header(h)), c.req.query('next'));
  return next();
};
