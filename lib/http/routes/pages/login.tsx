/**
 * The sign-in page and form (`GET /login`, `POST /login`) and signing out (`POST /logout`). The posts are
 * guarded against cross-site forms (`csrf()` in createApp: 403).
 */
import { deleteCookie } from 'hono/cookie';
import { LoginPage } from '../../../board/pages.js';
import { BOARD_COOKIE } from '../../auth.js';
import { defineRoute, page, raw, redirect } from '../../route.js';
import { safeNext, signIn } from './sign-in.js';

export const loginPage = defineRoute({
  route: {
    method: 'get',
    path: '/login',
    operationId: 'loginPage',
    tags: ['board pages'],
    summary: 'The sign-in page',
    responses: { 200: page('a form to paste a token') },
  },
  auth: 'none',
  handler: (c) => {
    const next = safeNext(c.req.query('next'));
    return c.html(<LoginPage next={next === '/' ? undefined : next} />);
  },
});

export const login = defineRoute({
  route: {
    method: 'post',
    path: '/login',
    operationId: 'login',
    tags: ['board pages'],
    summary: 'Sign a browser in',
    description: 'Only from the board’s own form: a cross-site form is refused (403).',
    responses: {
      303: redirect(
        'signed in: the cookie is set; to `next` when it is a path of the board, else to the board',
        '/',
      ),
      401: page('the token was refused: the sign-in page with why'),
    },
  },
  auth: 'none',
  body: {
    contentType: 'application/x-www-form-urlencoded',
    schema: raw(
      'token=hns_…: a token with the board scope; next=/…: the board page to go back to (optional)',
    ),
  },
  errors: ['forbidden'],
  handler: async (c) => {
    const form = await c.req.parseBody();
    return signIn(c, typeof form.token === 'string' ? form.token.trim() : undefined, false, form.next);
  },
});

export const logout = defineRoute({
  route: {
    method: 'post',
    path: '/logout',
    operationId: 'logout',
    tags: ['board pages'],
    summary: 'Sign a browser out',
    responses: { 303: redirect('the cookie is cleared: to the sign-in page', '/login') },
  },
  auth: 'none',
  errors: ['forbidden'],
  handler: (c) => {
    deleteCookie(c, BOARD_COOKIE, { path: '/' });
    return c.redirect('/login', 303);
  },
});
