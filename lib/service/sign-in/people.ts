/**
 * A tenant's people (issue 29 item 4): sign-in identities by email, their own role (`hansard people role`)
 * and the person ids of the record that are theirs (`hansard people link|unlink`), through
 * `GET /v1/people`, `GET|PUT /v1/people/{email}`. Scope `admin` on a caller bound to no session; each
 * verb is the caller's tenant's only. Emails are compared and stored as `normalEmail` gives them.
 */
import {
  EmailAddress,
  MAX_LINKED_IDS,
  normalEmail,
  PersonInput,
  type PersonView,
} from '../../contract/sign-in.js';
import { InvalidCursorError, type PersonRecord, StateConflictError } from '../../store/index.js';
import { type AuditOptions, actorName, recordAudit } from '../audit-log/index.js';
import { openCursor, sealCursor } from '../sessions/cursors.js';
import { isoNow, type ServiceContext } from '../shared/context.js';
import { AppError, notFound, parseInput } from '../shared/errors.js';
import { requireTenantAdmin } from './guard.js';
import type { PeoplePage } from './schemas.js';

/** How many times `setPerson` reads and writes again when another change won the conditional write. */
const WRITE_ATTEMPTS = 3;

/** A person as the API shows them. */
export function personView(p: PersonRecord): PersonView {
  return {
    email: p.email,
    role: p.role,
    user_ids: p.user_ids,
    seen_user_ids: p.seen_user_ids,
    name: p.name,
    last_sign_in_at: p.last_sign_in_at,
    updated_at: p.updated_at,
    updated_by: p.updated_by,
  };
}

/**
 * `email` as an identity key (`normalEmail`), checked.
 * @throws AppError `invalid_body` (400) for what is not an email address
 */
function emailKey(email: string): string {
  const key = normalEmail(email);
  const ok = EmailAddress.safeParse(key);
  if (!ok.success) {
    throw new AppError('invalid_body', `${JSON.stringify(email.slice(0, 80))} is not an email address`, {
      issues: [{ path: 'email', message: ok.error.issues[0]?.message ?? 'not an email address' }],
    });
  }
  return key;
}

/**
 * `GET /v1/people?limit=&cursor=`: the tenant's people by email, `limit` (1–200) a page; `cursor` is the
 * previous page's `next`, signed for this tenant and listing.
 * @throws AppError `forbidden` (403), `invalid_cursor` (400)
 */
export async function listPeople(
  ctx: ServiceContext,
  opts: { limit: number; cursor?: string | null | undefined },
): Promise<PeoplePage> {
  requireTenantAdmin(ctx, 'people');
  const inner = opts.cursor ? await openCursor(ctx, 'people', opts.cursor) : undefined;
  try {
    const page = await ctx.state.listPeople(ctx.tenant, { limit: opts.limit, cursor: inner });
    return {
      people: page.items.map(personView),
      next: page.next === null ? null : await sealCursor(ctx, 'people', page.next),
    };
  } catch (err) {
    if (err instanceof InvalidCursorError) {
      throw new AppError('invalid_cursor', 'the cursor is no longer valid: start from the first page');
    }
    throw err;
  }
}

/**
 * `GET /v1/people/{email}`: one person (any case of the email).
 * @throws AppError `forbidden` (403), `invalid_body` (400: not an email), `not_found` (404)
 */
export async function getPerson(ctx: ServiceContext, email: string): Promise<PersonView> {
  requireTenantAdmin(ctx, 'people');
  const p = await ctx.state.getPerson(ctx.tenant, emailKey(email));
  if (!p) throw notFound('person');
  return personView(p);
}

/** What a change did, in one line for the audit list: `link a, b; unlink c; role admin`. */
function describeChange(input: PersonInput): string {
  const parts: string[] = [];
  if (input.link?.length) parts.push(`link ${input.link.join(', ')}`);
  if (input.unlink?.length) parts.push(`unlink ${input.unlink.join(', ')}`);
  if (input.role !== undefined) parts.push(`role ${input.role ?? 'mapped'}`);
  return parts.join('; ') || 'nothing';
}

/**
 * The record after `input`: `link` adds person ids (each once, in the order given after those linked
 * already), `unlink` removes them, `role` sets the person's own role (null: back to the role map).
 * @throws AppError `invalid_body` (400) for more than `MAX_LINKED_IDS` linked ids
 */
function changed(
  ctx: ServiceContext,
  prior: PersonRecord | null,
  key: string,
  input: PersonInput,
): PersonRecord {
  const base: PersonRecord = prior ?? {
    tenant: ctx.tenant,
    email: key,
    role: null,
    user_ids: [],
    seen_user_ids: [],
    name: null,
    last_sign_in_at: null,
    updated_at: isoNow(ctx),
    updated_by: actorName(ctx),
    sessions_valid_after: null,
    ended_sessions: [],
    version: 0,
  };
  const gone = new Set(input.unlink ?? []);
  const userIds = [...new Set([...base.user_ids, ...(input.link ?? [])])].filter((id) => !gone.has(id));
  if (userIds.length > MAX_LINKED_IDS) {
    throw new AppError(
      'invalid_body',
      `${key} would be linked to ${userIds.length} person ids, more than the ${MAX_LINKED_IDS} one identity may have: unlink some first`,
      { issues: [{ path: 'link', message: `at most ${MAX_LINKED_IDS} linked ids` }], max: MAX_LINKED_IDS },
    );
  }
  return {
    ...base,
    user_ids: userIds,
    role: input.role === undefined ? base.role : input.role,
    // Removing a person ends every session they hold for good: giving a role back later does not bring a
    // copied or stolen cookie back to life (they sign in again).
    sessions_valid_after: input.role === 'none' ? isoNow(ctx) : base.sessions_valid_after,
    ended_sessions: input.role === 'none' ? [] : base.ended_sessions,
    updated_at: isoNow(ctx),
    updated_by: actorName(ctx),
    version: base.version + 1,
  };
}

/**
 * `PUT /v1/people/{email}`: links person ids to the identity `email`, unlinks them, and/or sets its own
 * role (`PersonInput`), and records `person.set`. A person not yet known is made by a `link` or a role
 * (an admin may set them up before their first sign-in); an `unlink` or `role: null` alone of one not known
 * is a 404. The write is conditional on the version read, read again and tried again when another change
 * won meanwhile, so two changes at once both take effect. A role change applies at the person's next
 * request (their record is read at each).
 * @returns the person after the change
 * @throws AppError `forbidden` (403), `invalid_body` (400: not an email, a body naming its field, an id
 *   both linked and unlinked, past `MAX_LINKED_IDS`), `not_found` (404), `conflict` (409: still changing
 *   after 3 tries)
 */
export async function setPerson(
  ctx: ServiceContext,
  email: string,
  input: unknown,
  opts: AuditOptions = {},
): Promise<PersonView> {
  requireTenantAdmin(ctx, 'people');
  const key = emailKey(email);
  const body = parseInput(PersonInput, input, 'the change to the person');
  const both = (body.link ?? []).filter((id) => body.unlink?.includes(id));
  if (both.length > 0) {
    throw new AppError('invalid_body', `${both.join(', ')} is both linked and unlinked: say one`, {
      issues: [{ path: 'unlink', message: 'also in link' }],
    });
  }
  const creates = (body.link?.length ?? 0) > 0 || (body.role !== undefined && body.role !== null);
  for (let attempt = 1; ; attempt++) {
    const prior = await ctx.state.getPerson(ctx.tenant, key);
    if (!prior && !creates) throw notFound('person');
    const next = changed(ctx, prior, key, body);
    try {
      await ctx.state.putPerson(next, prior?.version ?? null);
    } catch (err) {
      if (!(err instanceof StateConflictError)) throw err;
      if (attempt < WRITE_ATTEMPTS) continue;
      throw new AppError('conflict', `${key} kept changing while this change was made: try again`);
    }
    await recordAudit(ctx, {
      action: 'person.set',
      target: key,
      detail: describeChange(body),
      via: opts.via ?? 'api',
    });
    return personView(next);
  }
}
