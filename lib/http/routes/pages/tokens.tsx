/**
 * The board's tokens page (issue 29 item 4; lib/board/admin.tsx, lib/service/tokens/): `GET /tokens`, the
 * tenant's tokens (never a secret), and `POST /tokens/{id}/revoke`, the "Revoke" button of a live one,
 * which revokes it through the service verb as `DELETE /v1/tokens/{id}` does, recorded in the audit list
 * as done from the board (`via: 'board'`), and redirects back with a line saying so. Admins only; the
 * button's POST must come from the board's own page with the sign-in's form token (./admin-guard.tsx).
 */
import { z } from 'zod';
import { type TokensFlash, TokensPage } from '../../../board/admin.js';
import { BadPageLinkPage } from '../../../board/pages.js';
import { AppError } from '../../../service/shared/errors.js';
import { listTokens, revokeToken } from '../../../service/tokens/create.js';
import { formToken, formTokenOk } from '../../form-token.js';
import { TokenId } from '../../params.js';
import { defineRoute, page, raw, redirect } from '../../route.js';
import { adminOnly, adminPageAuth, byBearer, ownPageOnly } from './admin-guard.js';
import { boardHtml } from './board-html.js';

/** The flash line of `?revoked=` (a token id) or `?gone=`; anything else: none. */
function flashOf(q: { revoked?: string | undefined; gone?: string | undefined }): TokensFlash {
  if (q.gone !== undefined) return { kind: 'gone' };
  if (q.revoked !== undefined && TokenId.safeParse(q.revoked).success)
    return { kind: 'revoked', id: q.revoked };
  return null;
}

const tokensAuth = adminPageAuth((c) => adminOnly(c, 'the tokens page'));

export const tokensPage = defineRoute({
  route: {
    method: 'get',
    path: '/tokens',
    operationId: 'tokensPage',
    tags: ['board pages'],
    summary: "The tenant's tokens",
    description:
      'Every token of the tenant, live ones first (id, label, scopes, bound session, created, last used, ' +
      'expiry; never a secret), as `GET /v1/tokens`, with a "Revoke" button on each live one. Admins ' +
      'only: a person whose role is admin, or a token with the `admin` scope bound to no session; another ' +
      'signed-in viewer gets a page (403) saying what to ask for.',
    middleware: [tokensAuth],
    request: {
      query: z.object({
        revoked: z.string().optional().describe('this token was just revoked: the page says so'),
        gone: z.string().optional().describe('the token to revoke did not exist: the page says so'),
      }),
    },
    responses: {
      200: page("the tenant's tokens"),
      302: redirect('not signed in: to the sign-in page', '/login'),
      403: page('signed in, but no admin: a page saying what to ask for'),
    },
  },
  auth: 'cookie',
  scopes: ['admin'],
  handler: async (c) => {
    const ctx = c.get('ctx');
    const tokens = await listTokens({ ctx });
    return boardHtml(
      c,
      <TokensPage
        tokens={tokens}
        self={ctx.person ? null : ctx.caller.id}
        csrf={formToken(c)}
        flash={flashOf(c.req.valid('query'))}
        now={ctx.now().toISOString()}
      />,
    );
  },
});

export const tokensRevokePage = defineRoute({
  route: {
    method: 'post',
    path: '/tokens/{id}/revoke',
    operationId: 'tokensRevokePage',
    tags: ['board pages'],
    summary: 'Revoke a token, from the board',
    description:
      'The tokens page\'s "Revoke" button: revokes the token and every token minted from it (as ' +
      '`DELETE /v1/tokens/{id}`), records it in the audit list as done from the board, and redirects back ' +
      "to `/tokens` with a line saying so. Only from the board's own page when the board's cookie carries " +
      "it: a cross-site form is refused (403, a page), and the form must carry the sign-in's form token " +
      '(`csrf`); a request with `Authorization` needs neither.',
    middleware: [
      ownPageOnly(
        (origin) =>
          `That button was not pressed on this board's tokens page (the browser named no origin, or another one than ${origin}): nothing was revoked. Open the tokens page and press it there.`,
      ),
      tokensAuth,
    ],
    request: { params: z.object({ id: TokenId }) },
    responses: {
      303: redirect('revoked (`?revoked=`), or no such token of this tenant (`?gone=1`)', '/tokens'),
      302: redirect('not signed in: to the sign-in page', '/login'),
      400: page('not a token id: a page linking back'),
      403: page(
        'nothing is revoked: no admin, a form token that is not this sign-in’s, or a form from another ' +
          'site (neither `Origin` nor `Sec-Fetch-Site` says this board): a page saying why',
      ),
    },
  },
  auth: 'cookie',
  scopes: ['admin'],
  body: {
    contentType: 'application/x-www-form-urlencoded',
    schema: raw("csrf=…: the form token the tokens page's form carries"),
  },
  onInvalid: (err, c) =>
    boardHtml(c, <BadPageLinkPage message={`That token cannot be revoked: ${err.message}.`} />, 400),
  handler: async (c) => {
    const form = await c.req.parseBody();
    if (!byBearer(c) && !formTokenOk(c, form.csrf)) {
      return boardHtml(
        c,
        <BadPageLinkPage message="That form is not this sign-in's (it is from an older sign-in, or from another page): nothing was revoked. Reload the tokens page and press the button again." />,
        403,
      );
    }
    const { id } = c.req.valid('param');
    try {
      await revokeToken({ ctx: c.get('ctx'), id, via: 'board' });
    } catch (err) {
      if (err instanceof AppError && err.code === 'not_found') return c.redirect('/tokens?gone=1', 303);
      throw err;
    }
    return c.redirect(`/tokens?revoked=${id}`, 303);
  },
});
