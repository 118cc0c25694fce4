/**
 * The sign-in port (issue 29): a tenant's OpenID Connect settings, its people (sign-in identities, their
 * own roles and linked person ids, and the sessions they ended), and its audit list. Part of the state
 * store (lib/store/sqlite/sign-in.ts, lib/store/dynamo/sign-in.ts). The store keeps the records as given;
 * what they mean is lib/service/sign-in/.
 *
 * Nothing here is a session store: a signed-in browser's session lives in its sealed cookie alone. A
 * person's record is read at each of their requests, so an admin's change (a role, a removal) and a
 * sign-out (`ended_sessions`) take effect at the next request.
 */
import { z } from 'zod';
import { Instant } from '../contract/ids.js';
import { AuditEntryView, OidcSettingsView, PersonView } from '../contract/sign-in.js';
import type { Page } from './sessions.js';

/** A tenant's OIDC settings as stored: the view without what the server derives, and the sealed secret. */
export const StoredOidcSettings = OidcSettingsView.omit({
  redirect_uri: true,
  post_logout_redirect_uri: true,
}).extend({
  /** the client secret, sealed by the deployment's sealer for this tenant (lib/service/alerts/deps.ts `SecretSealer`) */
  client_secret_sealed: z.string().min(1),
  /**
   * which sign-in these settings are (random, base64url): kept while the issuer and client stay, new when
   * they change or after the settings were removed. A session cookie names it, so no cookie of a sign-in
   * removed (or moved to another client) opens again when settings are set anew. '' on records written
   * before it existed.
   */
  generation: z.string().max(64).default(''),
});
export type StoredOidcSettings = z.infer<typeof StoredOidcSettings>;

/** Most sign-outs a person record remembers; past that, `sessions_valid_after` ends them all instead. */
export const MAX_ENDED_SESSIONS = 50;

/** A person of a tenant: one sign-in identity (its email, lower case). */
export const PersonRecord = PersonView.extend({
  tenant: z.string(),
  /** sessions that began before this time are over (ISO 8601); null: none ended this way */
  sessions_valid_after: Instant.nullable(),
  /** sessions signed out before their cookie expired: `sid` and when its cookie would have expired */
  ended_sessions: z.array(z.object({ sid: z.string().max(64), exp: Instant })).max(MAX_ENDED_SESSIONS),
  /** the record's version: 1 for the first write, one more at each (the conditional write's check) */
  version: z.int().min(1),
});
export type PersonRecord = z.infer<typeof PersonRecord>;

/** An audit entry as stored: the view, its tenant, and when it may be dropped. */
export const AuditEntry = AuditEntryView.extend({
  tenant: z.string(),
  /** when the store may drop it (ISO 8601; DynamoDB's TTL, SQLite's prune): `AUDIT_RETENTION_DAYS` on */
  expires_at: Instant,
});
export type AuditEntry = z.infer<typeof AuditEntry>;

/** A tenant's sign-in settings, people and audit list. */
export interface SignInStore {
  /** The tenant's OIDC settings, or null when sign-in is not configured. */
  getOidcSettings(tenant: string): Promise<StoredOidcSettings | null>;
  /** Sets (replaces) the tenant's OIDC settings. */
  putOidcSettings(settings: StoredOidcSettings): Promise<void>;
  /** Removes the tenant's OIDC settings; false when there were none. */
  deleteOidcSettings(tenant: string): Promise<boolean>;

  /** The person `email` (lower case) of `tenant`, or null. Strongly consistent. */
  getPerson(tenant: string, email: string): Promise<PersonRecord | null>;
  /**
   * Writes `person` when the stored record's version is `expected` (null: there is none), so two changes
   * made at once never lose one: `person.version` must be `expected + 1` (1 when `expected` is null).
   * @throws StateConflictError when the stored version is not `expected`
   */
  putPerson(person: PersonRecord, expected: number | null): Promise<void>;
  /**
   * The tenant's people, by email, `limit` (1–1000) a page from `cursor` (a page's `next`; absent: the
   * first page).
   * @throws InvalidCursorError for a cursor this store did not make for this tenant
   */
  listPeople(
    tenant: string,
    opts: { limit: number; cursor?: string | undefined },
  ): Promise<Page<PersonRecord>>;

  /** Appends an entry to its tenant's audit list (its id is new: a ULID). */
  appendAudit(entry: AuditEntry): Promise<void>;
  /**
   * The tenant's audit list, newest first, `limit` (1–1000) a page from `cursor`; entries past
   * `expires_at` may still be listed until the store drops them.
   * @throws InvalidCursorError for a cursor this store did not make for this tenant
   */
  listAudit(tenant: string, opts: { limit: number; cursor?: string | undefined }): Promise<Page<AuditEntry>>;
}
