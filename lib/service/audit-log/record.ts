/**
 * Recording what people and tokens did (issue 29 item 4: "board actions … name who did them in an audit
 * list that admins see"): one entry per admin action, appended after the action succeeded.
 */
import { monotonicFactory } from 'ulid';
import { AUDIT_RETENTION_DAYS, type AuditAction, type AuditActor } from '../../contract/sign-in.js';
import type { AuditEntry } from '../../store/index.js';
import type { ServiceContext } from '../shared/context.js';

/** Where an action was asked: a form of the board, or the API (the CLI, a script). */
export type AuditVia = 'board' | 'api';

/** How a verb that records an entry is told where it was asked (default `api`). */
export interface AuditOptions {
  via?: AuditVia;
}

/** What a verb records: the action, what it acted on, a short line of what changed (no secret), and where. */
export interface AuditNote {
  action: AuditAction;
  /** a target id, a token id, an email; '' for the tenant itself */
  target: string;
  /** a short plain line, no secret; cut to 400 characters */
  detail: string | null;
  via: AuditVia;
}

/**
 * ULIDs that grow within this process even inside one millisecond, so that the list's id order (newest
 * first) is the order the actions were recorded in, two of them in the same millisecond included.
 */
const nextUlid = monotonicFactory();

/** Longest `target` and `detail` an entry keeps (the contract's `AuditEntryView`). */
const MAX_CHARS = 400;

/** Who the request is: the signed-in person (their email), or the token (its id). */
export function auditActor(ctx: ServiceContext): AuditActor {
  return ctx.person
    ? { kind: 'person', email: ctx.person.email }
    : { kind: 'token', token_id: ctx.caller.id };
}

/** The actor as the records' `updated_by` name it: `person:{email}` or `token:{id}`. */
export function actorName(ctx: ServiceContext): string {
  const a = auditActor(ctx);
  return a.kind === 'person' ? `person:${a.email}` : `token:${a.token_id}`;
}

/** `text` cut to `max` characters, whole code points only (a cut never splits a surrogate pair). */
function cut(text: string, max: number): string {
  const points = Array.from(text);
  return points.length <= max ? text : `${points.slice(0, max - 1).join('')}…`;
}

/**
 * Appends `note` to the caller's tenant's audit list: actor from `ctx` (`auditActor`), id `au_` + ULID (its
 * time order), `at` and `expires_at` (`AUDIT_RETENTION_DAYS` later) from `ctx.now()`.
 *
 * Call it after the action succeeded. It never throws: a failed append (a full disk, a store fault) is
 * logged on the server's error output and neither undoes nor fails the action, which has already taken
 * effect; an action refused or failed is not recorded at all.
 */
export async function recordAudit(ctx: ServiceContext, note: AuditNote): Promise<void> {
  const now = ctx.now();
  const entry: AuditEntry = {
    tenant: ctx.tenant,
    id: `au_${nextUlid(now.getTime())}`,
    at: now.toISOString(),
    actor: auditActor(ctx),
    action: note.action,
    target: cut(note.target, MAX_CHARS),
    detail: note.detail === null ? null : cut(note.detail, MAX_CHARS),
    via: note.via,
    expires_at: new Date(now.getTime() + AUDIT_RETENTION_DAYS * 86_400_000).toISOString(),
  };
  try {
    await ctx.state.appendAudit(entry);
  } catch (err) {
    // The log line names the action and the failure, never the tenant's ids (the server's log is shared).
    const why = err instanceof Error ? `${err.name}: ${err.message}` : String(err);
    console.error(`audit entry not recorded (${note.action}; the action itself took effect): ${why}`);
  }
}
