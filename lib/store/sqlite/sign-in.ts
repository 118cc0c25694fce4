/**
 * The sign-in methods of `SqliteStateStore` (issue 29; the port: ../sign-in.ts). Three tables, each record
 * a JSON text beside the columns its queries and conditions read: `sign_in_oidc` (a tenant's OIDC
 * settings), `sign_in_people` (a person by (tenant, email), its version) and `sign_in_audit` (an entry by
 * (tenant, id), its `expires_at`). A person is written on condition of its stored version, in one
 * transaction. An audit entry past `expires_at` is pruned by a later `appendAudit` (at most
 * `AUDIT_PRUNE_BATCH` of any tenant's each time: bounded work; DynamoDB: its TTL). Records read back are
 * checked with the port's schemas: a `get…` of a row that does not parse throws `DamagedRecordError`, a
 * listing leaves the row out (and pages on past it), so one damaged row never stops the others. Answers
 * as dynamo/sign-in.ts does.
 */
import { StateConflictError } from '../errors.js';
import type { Page } from '../sessions.js';
import { AuditEntry, PersonRecord, type SignInStore, StoredOidcSettings } from '../sign-in.js';
import {
  assertNextVersion,
  decodeSignInCursor,
  encodeSignInCursor,
  listedRecord,
  pageLimit,
  storedRecord,
} from '../sign-in-records.js';
import type { SqlitePrimitives } from './status-work.js';

/** How many expired audit entries one `appendAudit` removes at most (bounded work per call). */
export const AUDIT_PRUNE_BATCH = 100;

/**
 * The sign-in tables and indexes (issue 29), made by the store's opening transaction, each
 * `IF NOT EXISTS`: a database from before them gets them empty. `expires_at` is stored as
 * `Date.toISOString` gives it (one length), so that comparing the text compares the times.
 */
export const SIGN_IN_SCHEMA = `
CREATE TABLE IF NOT EXISTS sign_in_oidc (tenant TEXT PRIMARY KEY, settings TEXT NOT NULL);
CREATE TABLE IF NOT EXISTS sign_in_people (
  tenant TEXT NOT NULL, email TEXT NOT NULL, person TEXT NOT NULL, version INTEGER NOT NULL,
  PRIMARY KEY (tenant, email)
);
CREATE TABLE IF NOT EXISTS sign_in_audit (
  tenant TEXT NOT NULL, id TEXT NOT NULL, expires_at TEXT NOT NULL, entry TEXT NOT NULL,
  PRIMARY KEY (tenant, id)
);
CREATE INDEX IF NOT EXISTS sign_in_audit_expiry ON sign_in_audit (expires_at);
`;

/** Makes the sign-in tables where they are missing (inside the store's schema transaction). */
export function addSignInSchema(exec: (sql: string) => void): void {
  exec(SIGN_IN_SCHEMA);
}

/**
 * The listings' queries, named so that a test can ask SQLite for their plans (each a search of the
 * table's primary key, never a scan). Parameters: `@tenant`, `@after` (a cursor's position), `@limit`.
 */
export const SIGN_IN_QUERIES = {
  people: 'SELECT email, person FROM sign_in_people WHERE tenant = @tenant ORDER BY email LIMIT @limit',
  peopleAfter: `SELECT email, person FROM sign_in_people WHERE tenant = @tenant AND email > @after
      ORDER BY email LIMIT @limit`,
  audit: 'SELECT id, entry FROM sign_in_audit WHERE tenant = @tenant ORDER BY id DESC LIMIT @limit',
  auditAfter: `SELECT id, entry FROM sign_in_audit WHERE tenant = @tenant AND id < @after
      ORDER BY id DESC LIMIT @limit`,
} as const;

/** The `SignInStore` methods on SQLite; each answers as `DynamoStateStore`'s does. */
export class SqliteSignIn implements SignInStore {
  constructor(private readonly x: SqlitePrimitives) {}

  /** @throws DamagedRecordError when the stored settings do not parse */
  async getOidcSettings(tenant: string): Promise<StoredOidcSettings | null> {
    const row = this.x.q('SELECT settings FROM sign_in_oidc WHERE tenant = ?').get(tenant) as
      | { settings: string }
      | undefined;
    return row ? storedRecord(StoredOidcSettings, row.settings, `OIDC settings of tenant ${tenant}`) : null;
  }

  async putOidcSettings(settings: StoredOidcSettings): Promise<void> {
    this.x
      .q(
        `INSERT INTO sign_in_oidc (tenant, settings) VALUES (?, ?)
           ON CONFLICT (tenant) DO UPDATE SET settings = excluded.settings`,
      )
      .run(settings.tenant, JSON.stringify(settings));
  }

  async deleteOidcSettings(tenant: string): Promise<boolean> {
    const r = this.x.q('DELETE FROM sign_in_oidc WHERE tenant = ?').run(tenant) as { changes: number };
    return r.changes > 0;
  }

  /** @throws DamagedRecordError when the stored record does not parse */
  async getPerson(tenant: string, email: string): Promise<PersonRecord | null> {
    const row = this.x
      .q('SELECT person FROM sign_in_people WHERE tenant = ? AND email = ?')
      .get(tenant, email) as { person: string } | undefined;
    return row ? storedRecord(PersonRecord, row.person, `person ${email} of tenant ${tenant}`) : null;
  }

  /**
   * See the port: one transaction reads the stored version and writes the record only when it is
   * `expected` (none for null).
   * @throws StateConflictError when it is not
   * @throws RangeError when `person.version` is not `expected + 1`
   */
  async putPerson(person: PersonRecord, expected: number | null): Promise<void> {
    assertNextVersion(person.version, expected);
    this.x.transaction(() => {
      const row = this.x
        .q('SELECT version FROM sign_in_people WHERE tenant = ? AND email = ?')
        .get(person.tenant, person.email) as { version: number } | undefined;
      if ((row?.version ?? null) !== expected) {
        throw new StateConflictError(
          `person ${person.email} changed since it was read (version ${row?.version ?? 'none'}, expected ${expected ?? 'none'})`,
        );
      }
      this.x
        .q(
          `INSERT INTO sign_in_people (tenant, email, person, version) VALUES (?, ?, ?, ?)
             ON CONFLICT (tenant, email) DO UPDATE SET person = excluded.person, version = excluded.version`,
        )
        .run(person.tenant, person.email, JSON.stringify(person), person.version);
    });
  }

  /**
   * See the port: by email (binary order, as DynamoDB's sort keys), `limit` + 1 rows read to know whether
   * a next page exists. A row that does not parse is left out; the cursor is past it all the same.
   */
  async listPeople(
    tenant: string,
    opts: { limit: number; cursor?: string | undefined },
  ): Promise<Page<PersonRecord>> {
    const limit = pageLimit(opts.limit);
    const after = opts.cursor === undefined ? null : decodeSignInCursor('people', tenant, opts.cursor);
    const rows = (
      after === null
        ? this.x.q(SIGN_IN_QUERIES.people).all({ tenant, limit: limit + 1 })
        : this.x.q(SIGN_IN_QUERIES.peopleAfter).all({ tenant, after, limit: limit + 1 })
    ) as { email: string; person: string }[];
    const page = rows.slice(0, limit);
    const last = page.at(-1);
    return {
      items: page.flatMap((r) => listedRecord(PersonRecord, r.person) ?? []),
      next: rows.length > limit && last ? encodeSignInCursor('people', tenant, last.email) : null,
    };
  }

  /**
   * See the port: the entry (a second append of its id keeps the first), then at most
   * `AUDIT_PRUNE_BATCH` entries of any tenant whose `expires_at` is before this entry's `at` removed, one
   * transaction. The entry's own time is the clock, so what is pruned does not depend on this machine's.
   */
  async appendAudit(entry: AuditEntry): Promise<void> {
    this.x.transaction(() => {
      this.x
        .q('INSERT OR IGNORE INTO sign_in_audit (tenant, id, expires_at, entry) VALUES (?, ?, ?, ?)')
        .run(entry.tenant, entry.id, isoOf(entry.expires_at), JSON.stringify(entry));
      this.x
        .q(
          `DELETE FROM sign_in_audit WHERE rowid IN (
             SELECT rowid FROM sign_in_audit WHERE expires_at < ? LIMIT ?)`,
        )
        .run(isoOf(entry.at), AUDIT_PRUNE_BATCH);
    });
  }

  /** See the port: newest first by id (a ULID), paged as `listPeople`; a row that does not parse left out. */
  async listAudit(
    tenant: string,
    opts: { limit: number; cursor?: string | undefined },
  ): Promise<Page<AuditEntry>> {
    const limit = pageLimit(opts.limit);
    const after = opts.cursor === undefined ? null : decodeSignInCursor('audit', tenant, opts.cursor);
    const rows = (
      after === null
        ? this.x.q(SIGN_IN_QUERIES.audit).all({ tenant, limit: limit + 1 })
        : this.x.q(SIGN_IN_QUERIES.auditAfter).all({ tenant, after, limit: limit + 1 })
    ) as { id: string; entry: string }[];
    const page = rows.slice(0, limit);
    const last = page.at(-1);
    return {
      items: page.flatMap((r) => listedRecord(AuditEntry, r.entry) ?? []),
      next: rows.length > limit && last ? encodeSignInCursor('audit', tenant, last.id) : null,
    };
  }
}

/** An ISO 8601 instant as `Date.toISOString` writes it (one length: text order is time order). */
function isoOf(instant: string): string {
  return new Date(instant).toISOString();
}
