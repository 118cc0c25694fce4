/**
 * How a board page route answers with a page (issue 29 item 4): `boardHtml(c, <Page/>, status)` renders it
 * with the request's viewer provided (`ViewerContext`, lib/board/signed-in.tsx), so that the layout's
 * header names who is signed in, links an admin to the admin pages and carries the sign-out form's token,
 * without every page component passing them down.
 */
import type { Context } from 'hono';
import type { Child } from 'hono/jsx';
import type { ContentfulStatusCode } from 'hono/utils/http-status';
import { type BoardViewer, ViewerContext } from '../../../board/signed-in.js';
import type { AppEnv } from '../../auth.js';
import { formToken } from '../../form-token.js';

/**
 * The viewer of `c` as the header shows it: the signed-in person (`ctx.person`, an OIDC session), else
 * the token the browser signed in with; null before the sign-in was read (no `ctx` on the request).
 * An admin is a caller with the `admin` scope bound to no session (what the admin pages ask).
 */
export function viewerOf(c: Context<AppEnv>): BoardViewer | null {
  const ctx = c.get('ctx') as AppEnv['Variables']['ctx'] | undefined;
  if (!ctx) return null;
  const admin = ctx.caller.scopes.includes('admin') && ctx.caller.session === null;
  const csrf = formToken(c);
  const p = ctx.person;
  if (p) {
    return { kind: 'person', email: p.email, name: p.name, role: p.role, user_ids: p.user_ids, admin, csrf };
  }
  return { kind: 'token', admin, csrf };
}

/** `c.html(page, status)` with the request's viewer provided to the page's layout (see the module's doc). */
export function boardHtml(c: Context<AppEnv>, page: Child, status?: ContentfulStatusCode) {
  return c.html(<ViewerContext.Provider value={viewerOf(c)}>{page}</ViewerContext.Provider>, status);
}
