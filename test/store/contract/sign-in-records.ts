/**
 * The records the sign-in contract (./sign-in.contract.ts) writes: OIDC settings, people and audit
 * entries, valid as lib/store/sign-in.ts has them, with fields of several JSON shapes (nulls, arrays,
 * a record, text beyond ASCII), so that an adapter that drops or reorders anything shows it. Each is
 * parsed with the port's schema: a field the schema defaults is filled in as a store reading it back does.
 */
import { randomInt } from 'node:crypto';
import { AuditEntry, PersonRecord, StoredOidcSettings } from '../../../lib/store/index.js';
import { at } from './records.js';

/** A tenant's OIDC settings, set at time `when`. */
export function settingsOf(
  tenant: string,
  when: number,
  over: Partial<StoredOidcSettings> = {},
): StoredOidcSettings {
  return StoredOidcSettings.parse({
    tenant,
    issuer: 'https://id.example.com/realms/eng',
    client_id: `hansard-${tenant}`,
    client_secret_sealed: 'sealed:c2VjcmV0',
    allowed_domains: ['example.com', 'example.org'],
    groups_claim: 'groups',
    role_map: { 'eng-leads': 'admin', eng: 'member', 'naïve café': 'viewer' },
    default_role: null,
    updated_at: at(when),
    updated_by: 'person:priya@example.com',
    ...over,
  });
}

/** A person of `tenant` at `version` (1: first written), last changed at time `when`. */
export function personOf(
  tenant: string,
  email: string,
  version: number,
  when = version,
  over: Partial<PersonRecord> = {},
): PersonRecord {
  return PersonRecord.parse({
    tenant,
    email,
    role: null,
    user_ids: ['priya', 'u_42'],
    name: 'Priya Ñandú',
    last_sign_in_at: at(when),
    updated_at: at(when),
    updated_by: 'token:tok_ADMIN',
    sessions_valid_after: null,
    ended_sessions: [{ sid: `sid-${version}`, exp: at(when + 3600) }],
    version,
    ...over,
  });
}

/** An audit entry of `tenant` at time `when` (its id a ULID of that time: ids sort as times do). */
export function auditOf(tenant: string, when: number, over: Partial<AuditEntry> = {}): AuditEntry {
  return AuditEntry.parse({
    tenant,
    id: `au_${ulidAt(Date.parse(at(when)))}`,
    at: at(when),
    actor: { kind: 'person', email: 'priya@example.com' },
    action: 'token.revoke',
    target: 'tok_01',
    detail: `revoked at ${when} — “quoted”`,
    via: 'board',
    expires_at: at(when + 400 * 86_400),
    ...over,
  });
}

const CROCKFORD = '0123456789ABCDEFGHJKMNPQRSTVWXYZ';

/**
 * A ULID whose time part is `ms` and the rest random: the ids of entries made at different times sort as
 * the times do, whatever order they are made in (a monotonic ULID factory would not give an earlier time).
 */
export function ulidAt(ms: number): string {
  let time = '';
  for (let t = ms, i = 0; i < 10; i++, t = Math.floor(t / 32)) time = CROCKFORD[t % 32] + time;
  return time + Array.from({ length: 16 }, () => CROCKFORD[randomInt(32)]).join('');
}
