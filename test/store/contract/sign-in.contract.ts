/**
 * The sign-in contract (issue 29, `SignInStore` in lib/store/sign-in.ts): a tenant's OIDC settings set,
 * replaced and removed; people written on condition of their version (of concurrent writers over one
 * version exactly one wins) and listed by email a page at a time; the audit list newest first, a page at
 * a time, an id appended twice kept once; cursors of another tenant or listing, or not the store's,
 * refused; tenants apart in all three. Run on every adapter (./suite.ts), and by
 * test/infra/dynamo-access.test.ts to record what the DynamoDB adapter sends. What one adapter alone has
 * (damaged rows, pruning, TTL, where items sit): test/store/sqlite/sign-in.test.ts,
 * test/store/dynamo/sign-in.test.ts.
 */
import { expect } from 'vitest';
import {
  type AuditEntry,
  InvalidCursorError,
  type Page,
  type PersonRecord,
  type SignInStore,
  StateConflictError,
} from '../../../lib/store/index.js';
import { auditOf, personOf, settingsOf } from './sign-in-records.js';
import { type ContractOptions, runContract } from './suite.js';

/** Every page of a listing, `limit` a page, following `next`; and how many pages there were. */
async function allPages<T>(
  list: (cursor: string | undefined) => Promise<Page<T>>,
): Promise<{ items: T[]; pages: T[][] }> {
  const pages: T[][] = [];
  let cursor: string | undefined;
  do {
    const page = await list(cursor);
    pages.push(page.items);
    cursor = page.next ?? undefined;
  } while (cursor !== undefined && pages.length < 100);
  return { items: pages.flat(), pages };
}

const emails = (list: PersonRecord[]) => list.map((p) => p.email);
const ids = (list: AuditEntry[]) => list.map((e) => e.id);

export function runSignInContract(opts: ContractOptions<SignInStore>): void {
  runContract('sign-in', opts, (contract) => {
    contract('keeps OIDC settings: absent, set, replaced whole, removed once', async (s) => {
      expect(await s.getOidcSettings('acme')).toBeNull();
      const first = settingsOf('acme', 1);
      await s.putOidcSettings(first);
      expect(await s.getOidcSettings('acme')).toEqual(first);
      // replaced, not merged: what the new settings leave out is gone
      const second = settingsOf('acme', 2, {
        issuer: 'http://127.0.0.1:4000',
        allowed_domains: [],
        role_map: {},
        default_role: 'viewer',
        groups_claim: 'roles',
        client_secret_sealed: 'sealed:bmV3',
      });
      await s.putOidcSettings(second);
      expect(await s.getOidcSettings('acme')).toEqual(second);
      expect(await s.deleteOidcSettings('acme')).toBe(true);
      expect(await s.getOidcSettings('acme')).toBeNull();
      expect(await s.deleteOidcSettings('acme')).toBe(false);
      // set again after removal
      await s.putOidcSettings(first);
      expect(await s.getOidcSettings('acme')).toEqual(first);
    });

    contract('keeps each tenant’s settings, people and audit list apart', async (s) => {
      const [acme, globex] = [settingsOf('acme', 1), settingsOf('globex', 2)];
      await s.putOidcSettings(acme);
      await s.putOidcSettings(globex);
      const email = 'priya@example.com';
      const [pa, pg] = [personOf('acme', email, 1), personOf('globex', email, 1, 5, { role: 'admin' })];
      await s.putPerson(pa, null);
      // the same email in another tenant is another person, with a version of its own
      await s.putPerson(pg, null);
      await s.putPerson(personOf('globex', 'ana@example.com', 1), null);
      const [ea, eg] = [auditOf('acme', 1), auditOf('globex', 2, { action: 'oidc.set', target: '' })];
      await s.appendAudit(ea);
      await s.appendAudit(eg);

      expect(await s.getOidcSettings('acme')).toEqual(acme);
      expect(await s.getPerson('acme', email)).toEqual(pa);
      expect(await s.getPerson('globex', email)).toEqual(pg);
      expect(await s.getPerson('acme', 'ana@example.com')).toBeNull();
      expect(await s.listPeople('acme', { limit: 10 })).toEqual({ items: [pa], next: null });
      expect(emails((await s.listPeople('globex', { limit: 10 })).items)).toEqual(['ana@example.com', email]);
      expect(await s.listAudit('acme', { limit: 10 })).toEqual({ items: [ea], next: null });
      expect(await s.listAudit('globex', { limit: 10 })).toEqual({ items: [eg], next: null });
      // a tenant with none of them
      expect(await s.getOidcSettings('initech')).toBeNull();
      expect(await s.listPeople('initech', { limit: 10 })).toEqual({ items: [], next: null });
      expect(await s.listAudit('initech', { limit: 10 })).toEqual({ items: [], next: null });
      // removing one tenant's settings leaves the other's
      expect(await s.deleteOidcSettings('acme')).toBe(true);
      expect(await s.getOidcSettings('globex')).toEqual(globex);
      // a person of one tenant is not written over the other's version
      await expect(s.putPerson(personOf('acme', email, 2), 1)).resolves.toBeUndefined();
      expect(await s.getPerson('globex', email)).toEqual(pg);
    });

    contract('writes a person on condition of the version it was read at', async (s) => {
      const email = 'priya@example.com';
      const v1 = personOf('acme', email, 1, 1, { sessions_valid_after: null, name: null });
      await s.putPerson(v1, null);
      expect(await s.getPerson('acme', email)).toEqual(v1);
      // a second first write conflicts
      await expect(s.putPerson(personOf('acme', email, 1, 2), null)).rejects.toBeInstanceOf(
        StateConflictError,
      );
      const v2 = personOf('acme', email, 2, 3, {
        role: 'none',
        user_ids: [],
        sessions_valid_after: v1.updated_at,
        ended_sessions: [],
      });
      await s.putPerson(v2, 1);
      expect(await s.getPerson('acme', email)).toEqual(v2);
      // written over a version it was not read at: refused, the stored record unchanged
      await expect(s.putPerson(personOf('acme', email, 2, 4), 1)).rejects.toBeInstanceOf(StateConflictError);
      await expect(s.putPerson(personOf('acme', email, 4, 4), 3)).rejects.toBeInstanceOf(StateConflictError);
      // a person not yet stored, written as if it were
      await expect(s.putPerson(personOf('acme', 'ana@example.com', 2), 1)).rejects.toBeInstanceOf(
        StateConflictError,
      );
      expect(await s.getPerson('acme', email)).toEqual(v2);
      expect(await s.getPerson('acme', 'ana@example.com')).toBeNull();
      // a version that is not the expected one's next is the caller's mistake
      await expect(s.putPerson(personOf('acme', email, 5), 2)).rejects.toBeInstanceOf(RangeError);
      await expect(s.putPerson(personOf('acme', 'new@example.com', 2), null)).rejects.toBeInstanceOf(
        RangeError,
      );
      expect(await s.getPerson('acme', email)).toEqual(v2);
    });

    contract('of concurrent writers of a person over one version, exactly one wins', async (s) => {
      const email = 'priya@example.com';
      const firsts = [1, 2, 3, 4, 5].map((i) => personOf('acme', email, 1, i, { name: `first ${i}` }));
      const made = await Promise.allSettled(firsts.map((p) => s.putPerson(p, null)));
      const madeBy = made.flatMap((r, i) => (r.status === 'fulfilled' ? [firsts[i]!] : []));
      expect(madeBy).toHaveLength(1);
      for (const r of made) {
        if (r.status === 'rejected') expect(r.reason).toBeInstanceOf(StateConflictError);
      }
      expect(await s.getPerson('acme', email)).toEqual(madeBy[0]);

      const seconds = [1, 2, 3, 4, 5].map((i) => personOf('acme', email, 2, 10 + i, { name: `second ${i}` }));
      const changed = await Promise.allSettled(seconds.map((p) => s.putPerson(p, 1)));
      const changedBy = changed.flatMap((r, i) => (r.status === 'fulfilled' ? [seconds[i]!] : []));
      expect(changedBy).toHaveLength(1);
      expect(changed.filter((r) => r.status === 'rejected')).toHaveLength(4);
      expect(await s.getPerson('acme', email)).toEqual(changedBy[0]);
    });

    contract('lists people by email a page at a time, each once, the last page without a next', async (s) => {
      const all = ['zoe', 'ana', 'mo', 'bea', 'li', 'chen', 'dara'].map((n) => `${n}@example.com`);
      for (const e of all) await s.putPerson(personOf('acme', e, 1), null);
      await s.putPerson(personOf('acme', 'mo@example.com', 2), 1);
      await s.putPerson(personOf('globex', 'aa@example.com', 1), null);
      const sorted = [...all].sort();

      const paged = await allPages((cursor) => s.listPeople('acme', { limit: 3, cursor }));
      expect(paged.pages.map(emails)).toEqual([sorted.slice(0, 3), sorted.slice(3, 6), sorted.slice(6)]);
      expect(paged.items.find((p) => p.email === 'mo@example.com')?.version).toBe(2);
      // a page that ends exactly at the last person has no next
      const whole = await s.listPeople('acme', { limit: 7 });
      expect(emails(whole.items)).toEqual(sorted);
      expect(whole.next).toBeNull();
      const six = await s.listPeople('acme', { limit: 6 });
      expect(six.next).not.toBeNull();
      expect(await s.listPeople('acme', { limit: 6, cursor: six.next! })).toEqual({
        items: [paged.items[6]],
        next: null,
      });
      expect(await s.listPeople('acme', { limit: 1000 })).toEqual({ items: paged.items, next: null });
      // a cursor stays valid after the person it ends at changes
      const first = await s.listPeople('acme', { limit: 2 });
      await s.putPerson(personOf('acme', sorted[1]!, 2), 1);
      expect(emails((await s.listPeople('acme', { limit: 2, cursor: first.next! })).items)).toEqual(
        sorted.slice(2, 4),
      );
    });

    contract(
      'lists the audit list newest first a page at a time; an id appended twice is kept once',
      async (s) => {
        const entries = [3, 1, 5, 2, 4].map((i) =>
          auditOf('acme', i, i === 2 ? { actor: { kind: 'token', token_id: 'tok_X' }, detail: null } : {}),
        );
        for (const e of entries) await s.appendAudit(e);
        await s.appendAudit(auditOf('globex', 9));
        const newest = [...entries].sort((a, b) => (a.id < b.id ? 1 : -1));
        expect(newest.map((e) => e.at)).toEqual([5, 4, 3, 2, 1].map((i) => auditOf('acme', i).at));

        const paged = await allPages((cursor) => s.listAudit('acme', { limit: 2, cursor }));
        expect(paged.pages.map(ids)).toEqual([
          ids(newest.slice(0, 2)),
          ids(newest.slice(2, 4)),
          ids(newest.slice(4)),
        ]);
        expect(paged.items).toEqual(newest);
        expect(await s.listAudit('acme', { limit: 5 })).toEqual({ items: newest, next: null });

        // the same id again (a retried append) keeps the first
        await s.appendAudit({ ...entries[0]!, detail: 'a second write' });
        expect(await s.listAudit('acme', { limit: 10 })).toEqual({ items: newest, next: null });
        // an entry newer than a page already read shows on the first page, not after the cursor
        const first = await s.listAudit('acme', { limit: 2 });
        const later = auditOf('acme', 6);
        await s.appendAudit(later);
        expect(ids((await s.listAudit('acme', { limit: 2, cursor: first.next! })).items)).toEqual(
          ids(newest.slice(2, 4)),
        );
        expect((await s.listAudit('acme', { limit: 1 })).items).toEqual([later]);
      },
    );

    contract(
      'refuses a cursor of another tenant, of the other listing, or not made by the store',
      async (s) => {
        for (const e of ['a', 'b', 'c'].map((n) => `${n}@example.com`)) {
          await s.putPerson(personOf('acme', e, 1), null);
          await s.putPerson(personOf('globex', e, 1), null);
        }
        for (const i of [1, 2, 3]) {
          await s.appendAudit(auditOf('acme', i));
          await s.appendAudit(auditOf('globex', i));
        }
        const people = (await s.listPeople('acme', { limit: 1 })).next!;
        const audit = (await s.listAudit('acme', { limit: 1 })).next!;
        expect(people).toEqual(expect.any(String));
        expect(audit).toEqual(expect.any(String));
        await expect(s.listPeople('globex', { limit: 1, cursor: people })).rejects.toBeInstanceOf(
          InvalidCursorError,
        );
        await expect(s.listAudit('globex', { limit: 1, cursor: audit })).rejects.toBeInstanceOf(
          InvalidCursorError,
        );
        await expect(s.listAudit('acme', { limit: 1, cursor: people })).rejects.toBeInstanceOf(
          InvalidCursorError,
        );
        await expect(s.listPeople('acme', { limit: 1, cursor: audit })).rejects.toBeInstanceOf(
          InvalidCursorError,
        );
        const b64 = (v: unknown) => Buffer.from(JSON.stringify(v)).toString('base64url');
        for (const cursor of [
          '',
          'garbage!',
          'bm90IGpzb24',
          b64({ a: 1 }),
          b64(['people', 'acme']),
          b64(['people', 'acme', '']),
          b64(['people', 'acme', 'x'.repeat(300)]),
          b64(['people', 'acme', 7]),
        ]) {
          await expect(s.listPeople('acme', { limit: 1, cursor })).rejects.toBeInstanceOf(InvalidCursorError);
        }
        // the tenant's own cursors still work
        expect(emails((await s.listPeople('acme', { limit: 1, cursor: people })).items)).toEqual([
          'b@example.com',
        ]);
        expect((await s.listAudit('acme', { limit: 1, cursor: audit })).items).toHaveLength(1);
      },
    );

    contract('refuses a page limit outside 1 to 1000', async (s) => {
      for (const limit of [0, -1, 1001, 1.5, Number.NaN]) {
        await expect(s.listPeople('acme', { limit })).rejects.toBeInstanceOf(RangeError);
        await expect(s.listAudit('acme', { limit })).rejects.toBeInstanceOf(RangeError);
      }
    });
  });
}
