/**
 * The checks of the board's admin pages (`/alerts`, `/audit`, `/tokens`; issues 28 item 5 and 29 item 4)
 * and of their forms. A page needs an admin: a signed-in person whose role is admin, or a token with the
 * `admin` scope bound to no session (as the API's admin routes ask); a signed-in viewer who is no admin
 * gets a page (403) saying what to ask for; anyone else is sent to sign in, as on every board page.
 *
 * A form's POST carried by the board's cookie is guarded twice: the same-origin check of the board's POSTs
 * (hono's `csrf()`: `ownPageOnly`) and the form token of the browser's sign-in (../../form-token.ts,
 * `formTokenOk`); one with an `Authorization` header (an API client) needs neither, since no browser sends
 * that header to another site's server without its consent (CORS).
 */
import type { Context, MiddlewareHandler } from 'hono';
import { csrf } from 'hono/csrf';
import { HTTPException } from 'hono/http-exception';
import { AdminOnlyPage, type AdminPageName } from '../../../board/admin.js';
import { BadPageLinkPage } from '../../../board/pages.js';
import { AppError } from '../../../service/shared/errors.js';
import { type AppEnv, pageAuth, requireAuth, signInLocation } from '../../auth.js';
import { boardHtml } from './board-html.js';

/** Whether the request carries its token in `Authorization` (an API client, not a browser's cookie). */
export const byBearer = (c: Context<AppEnv>) => c.req.header('authorization') !== undefined;

/** Whether the request's caller may use the admin pages: `admin`, bound to no session. */
export function isBoardAdmin(c: Context<AppEnv>): boolean {
  const { scopes, session } = c.get('ctx').caller;
  return scopes.includes('admin') && session === null;
}

/**
 * The 403 page of an admin page for a signed-in viewer who is no admin: for a person, their role; for a
 * token, its scopes.
 */
export function adminOnly(c: Context<AppEnv>, what: AdminPageName) {
  const { caller, person } = c.get('ctx');
  const next = new URL(c.req.url).pathname;
  return boardHtml(
    c,
    <AdminOnlyPage
      what={what}
      next={c.req.method === 'GET' ? next : '/'}
      person={person ? { role: person.role } : null}
      has={caller.scopes}
      bound={caller.session !== null}
    />,
    403,
  );
}

/**
 * The admin pages' check (see the module's doc). A browser goes through the board's page check
 * (`pageAuth`: its cookie, a link token's or a person's session); an API client through its bearer token,
 * which needs `admin` but not `board`. A signed-in caller with `board` or `admin` who is no admin gets
 * `forbidden(c)`; anyone else is sent to sign in (302).
 */
export function adminPageAuth(
  forbidden: (c: Context<AppEnv>) => Response | Promise<Response>,
): MiddlewareHandler<AppEnv> {
  return async (c, next) => {
    if (byBearer(c)) {
      try {
        await requireAuth(c.get('services').deps)(c, async () => {});
      } catch (err) {
        if (err instanceof AppError && err.code === 'unauthorized') return c.redirect(signInLocation(c), 302);
        throw err;
      }
    } else {
      let through = false;
      const answer = await pageAuth(c, async () => {
        through = true;
      });
      if (!through) return answer ?? c.redirect(signInLocation(c), 302);
    }
    if (isBoardAdmin(c)) return next();
    const { scopes } = c.get('ctx').caller;
    if (scopes.includes('board') || scopes.includes('admin')) return forbidden(c);
    return c.redirect(signInLocation(c), 302);
  };
}

const sameOrigin = csrf();

/**
 * The same-origin check of the board's POSTs (hono's `csrf()`, as `/login` and `/logout` have it in
 * ../../app.ts: the browser's `Sec-Fetch-Site: same-origin` or an `Origin` equal to this server's), first,
 * before the sign-in is read; its refusal is a page (403), since a person pressed a button.
 * @param refusal the page's line for a refused POST, given this server's origin
 */
export function ownPageOnly(refusal: (origin: string) => string): MiddlewareHandler<AppEnv> {
  return async (c, next) => {
    if (byBearer(c)) return next();
    try {
      await sameOrigin(c, async () => {});
    } catch (err) {
      if (!(err instanceof HTTPException && err.status === 403)) throw err;
      return c.html(<BadPageLinkPage message={refusal(new URL(c.req.url).origin)} />, 403);
    }
    return next();
  };
}
