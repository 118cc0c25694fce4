/**
 * The board's audit list (issue 29 item 4: "board actions … name who did them in an audit list that
 * admins see"; lib/board/admin.tsx, lib/service/audit-log/): `GET /audit`, the tenant's entries newest
 * first, `AUDIT_PAGE` a page, the next page by its signed cursor. Admins only (./admin-guard.tsx).
 */
import type { Context } from 'hono';
import { z } from 'zod';
import { AuditPage } from '../../../board/admin.js';
import { BadPageLinkPage } from '../../../board/pages.js';
import { listAudit } from '../../../service/audit-log/index.js';
import { AppError } from '../../../service/shared/errors.js';
import type { AppEnv } from '../../auth.js';
import { defineRoute, page, redirect } from '../../route.js';
import { adminOnly, adminPageAuth } from './admin-guard.js';
import { boardHtml } from './board-html.js';

/** Entries a page of the board's audit list shows. */
export const AUDIT_PAGE = 50;

/** A link to the audit list that cannot be shown (a cursor refused): 400, a page. */
function badLink(c: Context<AppEnv>, message: string) {
  return boardHtml(
    c,
    <BadPageLinkPage message={`That page of the audit list cannot be shown: ${message}`} />,
    400,
  );
}

export const auditPage = defineRoute({
  route: {
    method: 'get',
    path: '/audit',
    operationId: 'auditPage',
    tags: ['board pages'],
    summary: "The tenant's audit list",
    description:
      'What people and tokens did (tokens made and revoked, alert targets, sign-in settings, people), newest ' +
      `first, ${AUDIT_PAGE} a page: who (an email or a token id), what, its target, when, and whether from ` +
      'the board or the API, as `GET /v1/audit-log`. Admins only: a person whose role is admin, or a token ' +
      'with the `admin` scope bound to no session; another signed-in viewer gets a page (403) saying what ' +
      'to ask for.',
    middleware: [adminPageAuth((c) => adminOnly(c, 'the audit list'))],
    request: {
      query: z.object({
        cursor: z.string().max(4096).optional().describe('the page after the one that linked here'),
      }),
    },
    responses: {
      200: page('a page of the audit list'),
      302: redirect('not signed in: to the sign-in page', '/login'),
      400: page('a cursor that is not (or no longer) valid: a page linking to the first page'),
      403: page('signed in, but no admin: a page saying what to ask for'),
    },
  },
  auth: 'cookie',
  scopes: ['admin'],
  onInvalid: (err, c) => badLink(c, `${err.message}.`),
  handler: async (c) => {
    const { cursor } = c.req.valid('query');
    const ctx = c.get('ctx');
    try {
      const { entries, next } = await listAudit(ctx, { limit: AUDIT_PAGE, cursor: cursor || null });
      return boardHtml(
        c,
        <AuditPage entries={entries} next={next} first={!cursor} now={ctx.now().toISOString()} />,
      );
    } catch (err) {
      if (err instanceof AppError && err.code === 'invalid_cursor') {
        return badLink(
          c,
          'its cursor is not one this board gave, or is too old. Open the newest page: /audit.',
        );
      }
      throw err;
    }
  },
});
