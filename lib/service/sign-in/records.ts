/**
 * The person records sign-in keeps (issue 29): the conditional write every change of a person goes through
 * (`updatePerson`: sign-in, sign-out, the capture hook's seen ids), who a refused person may ask, and the
 * audit entry of a refusal. No openid-client here: ingest imports this module.
 */
import { ulid } from 'ulid';
import { AUDIT_RETENTION_DAYS } from '../../contract/sign-in.js';
import {
  type PersonRecord,
  StateConflictError,
  type StateStore,
  type StoredOidcSettings,
} from '../../store/index.js';
import { groupsWithRole, type Refusal } from './roles.js';

/** Pages of people read at most to find the admins a refused person may ask (200 a page). */
const ADMIN_SEARCH_PAGES = 10;
/** Admins named at most. */
const ADMINS_NAMED = 5;

/**
 * Who can let a refused person in, for the page that refuses them: the tenant's admins by email (those an
 * admin gave the role by name, at most 5, from the first 2,000 people by email) and, when their groups
 * could help, the groups the role map makes admins (bare names). Nobody for a `domain` refusal: a person
 * outside the tenant's domains (any account at a public provider) learns no admin's address; admins
 * only for a `removed` person, whom no group lets in.
 * @param settings the tenant's settings, or its name (then read)
 */
export async function whomToAsk(
  state: StateStore,
  settings: StoredOidcSettings | string,
  why: Refusal = 'unmapped',
): Promise<string[]> {
  if (why === 'domain') return [];
  if (typeof settings === 'string') {
    const read = await state.getOidcSettings(settings);
    if (!read) return [];
    settings = read;
  }
  const admins: string[] = [];
  let cursor: string | undefined;
  for (let page = 0; page < ADMIN_SEARCH_PAGES && admins.length < ADMINS_NAMED; page++) {
    const got = await state.listPeople(settings.tenant, { limit: 200, cursor });
    for (const p of got.items) if (p.role === 'admin' && admins.length < ADMINS_NAMED) admins.push(p.email);
    if (!got.next) break;
    cursor = got.next;
  }
  return why === 'removed' ? admins : [...admins, ...groupsWithRole(settings, 'admin')];
}

/**
 * Writes `change` to `email`'s record (made when absent, `updated_by` then `madeBy`), retrying a lost
 * conditional write a few times.
 * @throws StateConflictError after 5 lost races; what the store throws
 */
export async function updatePerson(
  state: StateStore,
  tenant: string,
  email: string,
  at: string,
  change: (p: PersonRecord) => PersonRecord,
  madeBy = 'sign-in',
): Promise<PersonRecord> {
  for (let attempt = 0; ; attempt++) {
    const old = await state.getPerson(tenant, email);
    const base: PersonRecord = old ?? {
      tenant,
      email,
      role: null,
      user_ids: [],
      seen_user_ids: [],
      name: null,
      last_sign_in_at: null,
      updated_at: at,
      updated_by: madeBy,
      sessions_valid_after: null,
      ended_sessions: [],
      version: 1,
    };
    const next = { ...change(base), version: (old?.version ?? 0) + 1 };
    try {
      await state.putPerson(next, old?.version ?? null);
      return next;
    } catch (err) {
      if (!(err instanceof StateConflictError) || attempt >= 4) throw err;
    }
  }
}

/** Records a sign-in on the person's record (name, time), making the record on their first. */
export async function noteSignIn(
  state: StateStore,
  tenant: string,
  email: string,
  name: string | null,
  now: Date,
): Promise<void> {
  const at = now.toISOString();
  await updatePerson(state, tenant, email, at, (p) => ({ ...p, name: name ?? p.name, last_sign_in_at: at }));
}

/** How long one person's repeated refusals count as one audit entry, ms (per process). */
const REFUSAL_QUIET_MS = 10 * 60_000;
/** Refusals remembered per process for that. */
const REFUSALS_KEPT = 1000;
const lastRefused = new Map<string, number>();

/**
 * Lists a refused sign-in in the tenant's audit list (`sign-in.refused`, the email as actor and target),
 * once per person and reason in `REFUSAL_QUIET_MS` per process: someone retrying in a loop (each a full
 * sign-in at the provider) makes one entry, not one each. A failed append never lets anyone in.
 */
export async function recordRefusal(
  state: StateStore,
  tenant: string,
  email: string,
  now: Date,
  why: Refusal,
): Promise<void> {
  const key = `${tenant}\n${email}\n${why}`;
  const last = lastRefused.get(key);
  if (last !== undefined && now.getTime() - last < REFUSAL_QUIET_MS && now.getTime() >= last) return;
  lastRefused.delete(key);
  lastRefused.set(key, now.getTime());
  while (lastRefused.size > REFUSALS_KEPT) lastRefused.delete(lastRefused.keys().next().value as string);
  const expires = new Date(now.getTime() + AUDIT_RETENTION_DAYS * 86_400_000);
  await state
    .appendAudit({
      tenant,
      id: `au_${ulid(now.getTime())}`,
      at: now.toISOString(),
      actor: { kind: 'person', email },
      action: 'sign-in.refused',
      target: email,
      detail: `refused: ${why}`,
      via: 'board',
      expires_at: expires.toISOString(),
    })
    .catch(() => {
      // The refusal stands whether or not it is listed.
    });
}
