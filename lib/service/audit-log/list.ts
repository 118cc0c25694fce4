/** Reading a tenant's audit list (issue 29 item 4: "an audit list that admins see"). */
import type { AuditEntryView } from '../../contract/sign-in.js';
import { type AuditEntry, InvalidCursorError } from '../../store/index.js';
import { openCursor, sealCursor } from '../sessions/cursors.js';
import type { ServiceContext } from '../shared/context.js';
import { AppError } from '../shared/errors.js';
import { requireTenantAdmin } from '../sign-in/guard.js';

/** A page of the audit list: entries newest first, `next` the signed cursor of the page after (null: last). */
export interface AuditPage {
  entries: AuditEntryView[];
  next: string | null;
}

/** An entry as the API shows it: without its tenant and its drop time. */
export function auditView({ tenant: _t, expires_at: _e, ...view }: AuditEntry): AuditEntryView {
  return view;
}

/**
 * `GET /v1/audit-log?limit=&cursor=` (scope `admin`, bound to no session): the tenant's audit entries,
 * newest first, `limit` (1–200) a page. `cursor` is the previous page's `next`: signed for this tenant and
 * listing (lib/service/sessions/cursors.ts), so a cursor of another tenant or listing is refused.
 * @throws AppError `forbidden` (403), `invalid_cursor` (400)
 */
export async function listAudit(
  ctx: ServiceContext,
  opts: { limit: number; cursor?: string | null | undefined },
): Promise<AuditPage> {
  requireTenantAdmin(ctx, 'the audit list');
  const inner = opts.cursor ? await openCursor(ctx, 'audit', opts.cursor) : undefined;
  try {
    const page = await ctx.state.listAudit(ctx.tenant, { limit: opts.limit, cursor: inner });
    return {
      entries: page.items.map(auditView),
      next: page.next === null ? null : await sealCursor(ctx, 'audit', page.next),
    };
  } catch (err) {
    if (err instanceof InvalidCursorError) {
      throw new AppError('invalid_cursor', 'the cursor is no longer valid: start from the first page');
    }
    throw err;
  }
}
