/**
 * What only the SQLite adapter's sign-in tables have (issue 29, lib/store/sqlite/sign-in.ts; the contract
 * for both adapters is test/store/contract/sign-in.contract.ts): a database from before them opens with
 * them made empty; a row edited into something that does not parse makes a `get…` throw a
 * `DamagedRecordError` naming it, and is left out of a listing whose paging goes on past it; audit
 * entries past `expires_at` are pruned by later appends, at most `AUDIT_PRUNE_BATCH` each, by the appended
 * entry's time; the listings search the primary keys, never scan.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import Database from 'better-sqlite3';
import { afterAll, describe, expect, it } from 'vitest';
import { DamagedRecordError } from '../../../lib/store/sign-in-records.js';
import { AUDIT_PRUNE_BATCH, SIGN_IN_QUERIES } from '../../../lib/store/sqlite/sign-in.js';
import { SqliteStateStore } from '../../../lib/store/sqlite/state-store.js';
import { at } from '../contract/records.js';
import { auditOf, personOf, settingsOf } from '../contract/sign-in-records.js';

const tmp = mkdtempSync(join(tmpdir(), 'hansard-sign-in-'));
afterAll(() => rmSync(tmp, { recursive: true, force: true }));

const SIGN_IN_TABLES = ['sign_in_audit', 'sign_in_oidc', 'sign_in_people'];
const newPath = () => join(mkdtempSync(join(tmp, 'sqlite-')), 'state.sqlite');

/** Runs `fn` on the database file at `path` opened directly (the store closed). */
function raw<T>(path: string, fn: (db: Database.Database) => T): T {
  const db = new Database(path);
  try {
    return fn(db);
  } finally {
    db.close();
  }
}

const tablesOf = (path: string) =>
  raw(path, (db) =>
    (
      db.prepare("SELECT name FROM sqlite_master WHERE type = 'table' ORDER BY name").all() as {
        name: string;
      }[]
    ).map((r) => r.name),
  );

describe('SqliteStateStore sign-in tables', () => {
  it('adds them empty to a database from before them, its other records untouched', async () => {
    const path = newPath();
    const store = new SqliteStateStore(path);
    await store.claimKey('acme', 'scope', 'key', 'kept');
    await store.close();
    raw(path, (db) => {
      for (const t of SIGN_IN_TABLES) db.exec(`DROP TABLE ${t}`);
    });
    expect(tablesOf(path).filter((t) => SIGN_IN_TABLES.includes(t))).toEqual([]);

    const reopened = new SqliteStateStore(path);
    expect(tablesOf(path).filter((t) => SIGN_IN_TABLES.includes(t))).toEqual(SIGN_IN_TABLES);
    expect(await reopened.readClaim('acme', 'scope', 'key')).toBe('kept');
    expect(await reopened.listPeople('acme', { limit: 10 })).toEqual({ items: [], next: null });
    const person = personOf('acme', 'priya@example.com', 1);
    await reopened.putPerson(person, null);
    await reopened.close();
    // opened again: nothing made twice, nothing lost
    const again = new SqliteStateStore(path);
    expect(await again.getPerson('acme', person.email)).toEqual(person);
    await again.close();
  });

  it('throws a DamagedRecordError naming a damaged record read alone, and lists past it', async () => {
    const path = newPath();
    const store = new SqliteStateStore(path);
    await store.putOidcSettings(settingsOf('acme', 1));
    await store.putOidcSettings(settingsOf('globex', 1));
    const people = ['a', 'b', 'c', 'd'].map((n) => personOf('acme', `${n}@example.com`, 1));
    for (const p of people) await store.putPerson(p, null);
    const entries = [1, 2, 3].map((i) => auditOf('acme', i));
    for (const e of entries) await store.appendAudit(e);
    await store.close();
    raw(path, (db) => {
      db.prepare("UPDATE sign_in_oidc SET settings = '{broken' WHERE tenant = 'acme'").run();
      // JSON, but not a person: a version of the wrong type
      db.prepare('UPDATE sign_in_people SET person = ? WHERE email = ?').run(
        JSON.stringify({ ...people[1], version: 'two' }),
        'b@example.com',
      );
      db.prepare("UPDATE sign_in_people SET person = 'null' WHERE email = ?").run('c@example.com');
      db.prepare("UPDATE sign_in_audit SET entry = '[]' WHERE id = ?").run(entries[1]!.id);
    });

    const s = new SqliteStateStore(path);
    await expect(s.getOidcSettings('acme')).rejects.toThrow(DamagedRecordError);
    await expect(s.getOidcSettings('acme')).rejects.toThrow(/OIDC settings of tenant acme is not JSON/);
    expect(await s.getOidcSettings('globex')).toEqual(settingsOf('globex', 1));
    await expect(s.getPerson('acme', 'b@example.com')).rejects.toThrow(
      /person b@example\.com of tenant acme does not parse at version/,
    );
    await expect(s.getPerson('acme', 'c@example.com')).rejects.toBeInstanceOf(DamagedRecordError);
    expect(await s.getPerson('acme', 'a@example.com')).toEqual(people[0]);

    // a page of two whose rows are a good one and a damaged one: one record, and the next page goes on
    const first = await s.listPeople('acme', { limit: 2 });
    expect(first.items).toEqual([people[0]]);
    expect(first.next).not.toBeNull();
    expect(await s.listPeople('acme', { limit: 2, cursor: first.next! })).toEqual({
      items: [people[3]],
      next: null,
    });
    expect((await s.listPeople('acme', { limit: 10 })).items).toEqual([people[0], people[3]]);
    expect(await s.listAudit('acme', { limit: 10 })).toEqual({ items: [entries[2], entries[0]], next: null });
    // the damaged person can be written over at its stored version, and reads again
    const fixed = personOf('acme', 'b@example.com', 2);
    await s.putPerson(fixed, 1);
    expect(await s.getPerson('acme', 'b@example.com')).toEqual(fixed);
    await s.close();
  });

  it('prunes audit entries past expires_at at later appends, a bounded batch each, by the entry’s time', async () => {
    const path = newPath();
    const s = new SqliteStateStore(path);
    const count = () =>
      raw(path, (db) => (db.prepare('SELECT count(*) AS n FROM sign_in_audit').get() as { n: number }).n);
    // 150 entries of two tenants that expire at at(200), and one that does not until much later
    for (let i = 0; i < 150; i++) {
      await s.appendAudit(auditOf(i % 2 ? 'acme' : 'globex', i, { expires_at: at(200) }));
    }
    const kept = auditOf('acme', 1, { expires_at: at(10_000) });
    await s.appendAudit(kept);
    expect(await count()).toBe(151);
    // appended at at(200): none is past its expiry yet
    const atExpiry = auditOf('acme', 200);
    await s.appendAudit(atExpiry);
    expect(await count()).toBe(152);
    // appended after: at most a batch of the expired go, of any tenant
    const after = auditOf('acme', 201);
    await s.appendAudit(after);
    expect(await count()).toBe(152 + 1 - AUDIT_PRUNE_BATCH);
    await s.appendAudit(auditOf('globex', 202));
    expect(await count()).toBe(4);
    expect((await s.listAudit('acme', { limit: 10 })).items).toEqual([after, atExpiry, kept]);
    await s.close();
  });

  it('lists people and audit entries by a search of the primary key, never a scan', async () => {
    const path = newPath();
    await new SqliteStateStore(path).close();
    raw(path, (db) => {
      for (const sql of Object.values(SIGN_IN_QUERIES)) {
        const plan = (
          db.prepare(`EXPLAIN QUERY PLAN ${sql}`).all({ tenant: 'acme', after: 'x', limit: 10 }) as {
            detail: string;
          }[]
        )
          .map((r) => r.detail)
          .join('\n');
        expect(plan).toMatch(/^SEARCH sign_in_(people|audit) USING INDEX sqlite_autoindex_sign_in_/);
        expect(plan).not.toMatch(/\bSCAN\b|TEMP B-TREE/);
      }
    });
  });
});
