/**
 * The checks every admin verb of team sign-in makes (issue 29 item 1: scope `admin`): the caller is a
 * tenant admin (an `admin` token bound to no session, or a signed-in admin), and a `{tenant}` it names is
 * its own; and the sign-in deps are there when a verb needs the sealer.
 */
import { requireScope, type ServiceContext } from '../shared/context.js';
import { AppError, notFound } from '../shared/errors.js';
import type { SignInServiceDeps } from './deps.js';

/**
 * The `admin` scope on a caller bound to no session: sign-in settings, people and the audit list are the
 * tenant's, outside any one session (as the token and alert verbs ask).
 * @param what the thing administered, for the message ("sign-in", "the audit list")
 * @throws AppError `forbidden` (403)
 */
export function requireTenantAdmin(ctx: ServiceContext, what: string): void {
  requireScope(ctx, 'admin');
  if (ctx.caller.session !== null) {
    throw new AppError(
      'forbidden',
      `a session-bound token cannot administer ${what}: use an unbound admin token`,
      { required: ['admin'] },
    );
  }
}

/**
 * The `{tenant}` of a path must be the caller's own. Another one answers exactly as a tenant that does not
 * exist: a tenant never learns that another exists (DESIGN §4).
 * @throws AppError `not_found` (404)
 */
export function requireOwnTenant(ctx: ServiceContext, tenant: string): void {
  if (tenant !== ctx.tenant) throw notFound('tenant');
}

/**
 * The sign-in deps (sealer, settings), for the verbs that seal or open a secret.
 * @throws AppError `sign_in_unavailable` (503) when the server was started without them
 */
export function signInDeps(ctx: ServiceContext): SignInServiceDeps {
  if (!ctx.signIn) {
    throw new AppError(
      'sign_in_unavailable',
      'this server was started without team sign-in (no sealer for client secrets): start it with hansard serve',
    );
  }
  return ctx.signIn;
}
