/**
 * The sign-in page and form (`GET /login`, `POST /login`) and signing out (`POST /logout`). The posts are
 * guarded against cross-site forms (`csrf()` in createApp: 403).
 */
import { deleteCookie, getCookie } from 'hono/cookie';
import { z } from 'zod';
import { ContinuePage } from '../../../board/continue.js';
import { LoginPage } from '../../../board/pages.js';
import { AppError } from '../../../service/shared/errors.js';
import { boardOrigin, endSession } from '../../../service/sign-in/flow.js';
import { openSession } from '../../../service/sign-in/session.js';
import { BOARD_COOKIE } from '../../auth.js';
import { formTokenMatches, formTokenOf, sessionFormSecret } from '../../form-token.js';
import { defineRoute, page, raw, redirect } from '../../route.js';
import { clearSessionCookie, sessionCookie } from '../../session-cookie.js';
import { safeNext, signIn } from './sign-in.js';

export const loginPage = defineRoute({
  route: {
    method: 'get',
    path: '/login',
    operationId: 'loginPage',
    tags: ['board pages'],
    summary: 'The sign-in page',
    request: {
      query: z.object({
        next: z.string().optional().describe('the board page to go back to after signing in'),
        tenant: z.string().optional().describe('prefills the organisation sign-in form'),
        signed_out: z.string().optional().describe('says the browser was just signed out'),
        ended: z
          .string()
          .optional()
          .describe("`1`: says the person's session ended (ran out, or ended by an admin), to sign in again"),
      }),
    },
    responses: { 200: page('a form to paste a token, and one to sign in with your organisation') },
  },
  auth: 'none',
  handler: (c) => {
    const next = safeNext(c.req.query('next'));
    const tenant = c.req.query('tenant')?.slice(0, 63);
    return c.html(
      <LoginPage
        next={next === '/' ? undefined : next}
        signedOut={c.req.query('signed_out') === '1'}
        ended={c.req.query('ended') === '1'}
        {...(tenant ? { tenant } : {})}
      />,
    );
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
    description:
      'Only from the board’s own form (a cross-site form is refused, 403) carrying the sign-in’s form token (`csrf`). ' +
      'A person’s session is ended for good (a copy of its cookie opens nothing after), and where their provider ' +
      'offers RP-initiated logout the browser goes there to sign out of it too.',
    responses: {
      200: page(
        "a person's session ended: a page that goes on to the provider's end-session endpoint (RP-initiated logout)",
      ),
      303: redirect('the cookies are cleared: to the sign-in page', '/login?signed_out=1'),
    },
  },
  auth: 'none',
  body: {
    contentType: 'application/x-www-form-urlencoded',
    schema: raw('csrf=…: the form token every board page’s sign-out form carries'),
  },
  errors: ['forbidden'],
  handler: async (c) => {
    const form = await c.req.parseBody();
    const { deps } = c.get('services');
    const origin = new URL(c.req.url).origin;
    let session: Awaited<ReturnType<typeof openSession>> | null = null;
    if (deps.signIn && sessionCookie(c) !== undefined) {
      session = await openSession(
        { state: deps.state, signIn: deps.signIn, now: deps.now },
        sessionCookie(c),
      );
    }
    const token = getCookie(c, BOARD_COOKIE);
    // What signs this browser in decides the form token; a browser signed in with nothing has nothing to end.
    const secret = session?.ok ? sessionFormSecret(session.person.sid) : (token ?? null);
    if (secret !== null && !formTokenMatches(formTokenOf(secret), form.csrf)) {
      throw new AppError(
        'forbidden',
        'sign-out needs the form token of the board page it came from (`csrf`): sign out with the board’s own button',
      );
    }
    clearSessionCookie(c);
    deleteCookie(c, BOARD_COOKIE, { path: '/' });
    if (session?.ok && deps.signIn) {
      const d = { state: deps.state, signIn: deps.signIn, now: deps.now };
      const endAt = await endSession(d, session.claims, boardOrigin(d, origin));
      // The provider is another origin, which a form's redirect may not reach (CSP `form-action 'self'`).
      if (endAt) {
        return c.html(
          <ContinuePage
            title="signed out"
            message="You are signed out of hansard. Continuing to sign you out of your organisation's provider too…"
            href={endAt}
            linkText="Sign out of your organisation's provider"
          />,
        );
      }
    }
    return c.redirect('/login?signed_out=1', 303);
  },
});
