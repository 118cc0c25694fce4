/**
 * Signing in with the tenant's OpenID provider (issue 29 item 1): `GET /login/oidc?tenant=…[&next=…]`
 * sends the browser to the provider with a sealed flow cookie; `GET /login/oidc/callback` is the redirect
 * URI registered at the provider, which ends the flow and sets the session cookie, or answers a page that
 * says why not (403 for a person the tenant refuses). What happens underneath is
 * lib/service/sign-in/flow.ts.
 */

import type { Context } from 'hono';
import { z } from 'zod';
import { ConfirmPage, ContinuePage } from '../../../board/continue.js';
import { LoginPage } from '../../../board/pages.js';
import { SignInErrorPage } from '../../../board/sign-in.js';
import { AppError } from '../../../service/shared/errors.js';
import { boardOrigin, finishSignIn, startSignIn } from '../../../service/sign-in/flow.js';
import { TenantName } from '../../../service/sign-in/schemas.js';
import type { AppEnv } from '../../auth.js';
import { refusedPage } from '../../refused-page.js';
import { defineRoute, page, redirect } from '../../route.js';
import {
  canKeepSession,
  clearFlowCookie,
  flowCookie,
  setFlowCookie,
  setSessionCookie,
} from '../../session-cookie.js';
import { safeNext } from './sign-in.js';

/** The deployment's sign-in deps, or the page that says sign-in is not available here. */
function flowDeps(c: Context<AppEnv>) {
  const { deps } = c.get('services');
  if (!deps.signIn) return null;
  return { state: deps.state, signIn: deps.signIn, now: deps.now };
}

/** The origin sign-in runs on (the configured public one, else this request's). */
function originOf(c: Context<AppEnv>, d: NonNullable<ReturnType<typeof flowDeps>>): string {
  return boardOrigin(d, new URL(c.req.url).origin);
}

/** A sign-in error as a page: its status from the error's code, its message as the page's sentence. */
function errorPage(c: Context<AppEnv>, err: unknown, tenant?: string) {
  if (!(err instanceof AppError)) throw err;
  const status = err.code === 'provider_unavailable' ? 502 : err.code === 'not_found' ? 404 : 400;
  return c.html(<SignInErrorPage message={`${err.message}.`} {...(tenant ? { tenant } : {})} />, status);
}

export const oidcStart = defineRoute({
  route: {
    method: 'get',
    path: '/login/oidc',
    operationId: 'oidcSignInStart',
    tags: ['board pages'],
    summary: "Sign in with the tenant's OpenID provider",
    request: {
      query: z.object({
        tenant: z.string().max(63).optional().describe('the tenant to sign in to'),
        next: z.string().max(2048).optional().describe('the board page to go back to'),
      }),
    },
    responses: {
      200: page(
        "from the board's own form: a page that goes on to the provider at once (the CSP binds a form's redirects to this origin); from another site, or a client that sends no Sec-Fetch-Site: a page that asks to confirm (login CSRF)",
      ),
      302: redirect("to the provider's authorization endpoint, with a sealed flow cookie", 'https://…'),
      400: page(
        'no or a bad tenant name, or a board on plain http away from loopback: the sign-in page says so',
      ),
      404: page('the tenant has no organisation sign-in set up'),
      502: page("the provider's discovery document could not be read"),
      503: page('this deployment has no sign-in set up (no sealer)'),
    },
  },
  auth: 'none',
  onInvalid: (err, c) => c.html(<LoginPage error={err.message} />, 400),
  handler: async (c) => {
    const q = c.req.valid('query');
    const next = safeNext(q.next);
    const carried = next === '/' ? undefined : next;
    const asked = (q.tenant ?? '').trim().toLowerCase();
    if (!TenantName.safeParse(asked).success) {
      const error =
        asked === '' ? 'Say which team (tenant) name to sign in to.' : `"${asked}" is not a tenant name.`;
      return c.html(<LoginPage error={error} next={carried} tenant={asked} />, 400);
    }
    const tenant: string = asked;
    const d = flowDeps(c);
    if (!d) {
      return c.html(
        <SignInErrorPage message="This hansard has no organisation sign-in: sign in with a link token." />,
        503,
      );
    }
    // Login CSRF: another site (or a page that is not the board) may not start a sign-in of its choosing
    // in this browser; a sign-in the person did not start from here is confirmed first.
    // (Fetch Metadata: `none` is an address typed, pasted or bookmarked; `same-origin` the board's own
    // page. Another site's link, redirect or form says `cross-site` or `same-site`; a client that sends
    // nothing is asked too.)
    const site = c.req.header('sec-fetch-site');
    if (site !== 'none' && site !== 'same-origin') {
      const again = `/login/oidc?${new URLSearchParams({ tenant, ...(carried ? { next: carried } : {}) })}`;
      return c.html(
        <ConfirmPage
          title="sign in?"
          message={`Another page sent you here to sign in to tenant ${tenant} with its organisation's provider. Go on only if you meant to.`}
          href={again}
          linkText={`Sign in to ${tenant}`}
        />,
      );
    }
    if (!canKeepSession(c)) {
      const error =
        'Organisation sign-in needs the board on https (or on this machine’s loopback address): a browser drops the sign-in cookie on plain http.';
      return c.html(<LoginPage error={error} next={carried} tenant={tenant} />, 400);
    }
    try {
      const { url, cookie } = await startSignIn(d, { tenant, next, origin: originOf(c, d) });
      setFlowCookie(c, cookie);
      // From the board's own page (its organisation form) the CSP's `form-action 'self'` would stop a
      // redirect to the provider: that browser gets a page that goes on by itself.
      if (c.req.header('sec-fetch-site') === 'same-origin' && c.req.header('sec-fetch-mode') === 'navigate') {
        return c.html(
          <ContinuePage
            title="signing in"
            message={`Continuing to the sign-in of tenant ${tenant}'s organisation…`}
            href={url}
            linkText="Continue to your organisation's sign-in"
          />,
        );
      }
      return c.redirect(url, 302);
    } catch (err) {
      return errorPage(c, err, tenant);
    }
  },
});

export const oidcCallback = defineRoute({
  route: {
    method: 'get',
    path: '/login/oidc/callback',
    operationId: 'oidcSignInCallback',
    tags: ['board pages'],
    summary: 'The redirect URI registered at the provider: ends the sign-in',
    responses: {
      303: redirect('signed in: the session cookie is set; to the page asked for before signing in', '/'),
      400: page(
        'no sign-in under way in this browser (expired, used, or begun elsewhere), or the provider refused',
      ),
      403: page('the person has no role in the tenant: the page says why and whom to ask'),
      502: page(
        "the provider's token exchange or its checks failed (a wrong issuer, state, nonce or signature)",
      ),
      503: page('this deployment has no sign-in set up'),
    },
  },
  auth: 'none',
  handler: async (c) => {
    const d = flowDeps(c);
    if (!d) return c.html(<SignInErrorPage message="This hansard has no organisation sign-in." />, 503);
    const sent = flowCookie(c);
    // A flow is used once, whatever its end.
    clearFlowCookie(c);
    const url = new URL(c.req.url);
    try {
      const r = await finishSignIn(d, { flowCookie: sent, query: url.search, origin: originOf(c, d) });
      if (!r.ok) return refusedPage(c, d.state, r);
      setSessionCookie(c, r.cookie, r.maxAge);
      return c.redirect(safeNext(r.next), 303);
    } catch (err) {
      return errorPage(c, err);
    }
  },
});
