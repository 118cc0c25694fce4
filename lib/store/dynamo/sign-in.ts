/**
 * The sign-in methods of `DynamoStateStore` (issue 29; the port: ../sign-in.ts; the layout:
 * dynamo/schema.ts). A tenant's OIDC settings `SIGNIN#{tenant}` / `OIDC` and its people
 * `SIGNIN#{tenant}` / `PERSON#{email}` (one query lists them by email), its audit list in a partition of
 * its own, `SIGNIN#{tenant}#AUDIT` / `{id}` (ids are ULIDs: a query backwards is newest first). Each
 * record is one JSON attribute beside the attributes its conditions read (a person's `version`) and an
 * audit entry's TTL (`expires_at`, epoch seconds, from the entry's `expires_at`). A person is written by
 * one Put on condition of its stored version. Records read back are checked with the port's schemas: a
 * `get…` of an item that does not parse throws `DamagedRecordError`, a listing leaves it out (and pages
 * on past it). Answers as sqlite/sign-in.ts does.
 */
import { DeleteCommand, PutCommand, QueryCommand } from '@aws-sdk/lib-dynamodb';
import { StateConflictError } from '../errors.js';
import type { Page } from '../sessions.js';
import { AuditEntry, PersonRecord, type SignInStore, StoredOidcSettings } from '../sign-in.js';
import {
  assertNextVersion,
  decodeSignInCursor,
  encodeSignInCursor,
  listedRecord,
  pageLimit,
  type SignInListing,
  storedRecord,
} from '../sign-in-records.js';
import { errorName, type Item } from './items.js';
import { type ItemKey, keys, PK, SK, TTL_ATTRIBUTE } from './schema.js';
import type { DynamoPrimitives } from './tokens.js';

/** The sort-key prefix of a tenant's people in its `SIGNIN#` partition. */
const PERSON_PREFIX = 'PERSON#';

/** The `SignInStore` methods on DynamoDB; each answers as SQLite's does. */
export class DynamoSignIn implements SignInStore {
  constructor(private readonly x: DynamoPrimitives) {}

  // ---- OIDC settings: `SIGNIN#{tenant}` / `OIDC`

  /** A consistent Get. @throws DamagedRecordError when the stored settings do not parse */
  async getOidcSettings(tenant: string): Promise<StoredOidcSettings | null> {
    const item = await this.x.get(keys.oidcSettings(tenant));
    return item
      ? storedRecord(StoredOidcSettings, item.settings_json, `OIDC settings of tenant ${tenant}`)
      : null;
  }

  /** One unconditional Put: the settings replace any before. */
  async putOidcSettings(settings: StoredOidcSettings): Promise<void> {
    await this.x.doc.send(
      new PutCommand({
        TableName: this.x.table,
        Item: {
          ...keys.oidcSettings(settings.tenant),
          tenant: settings.tenant,
          settings_json: JSON.stringify(settings),
        },
      }),
    );
  }

  /** One Delete, whose old item says whether there were settings. */
  async deleteOidcSettings(tenant: string): Promise<boolean> {
    const res = await this.x.doc.send(
      new DeleteCommand({ TableName: this.x.table, Key: keys.oidcSettings(tenant), ReturnValues: 'ALL_OLD' }),
    );
    return res.Attributes !== undefined;
  }

  // ---- people: `SIGNIN#{tenant}` / `PERSON#{email}`

  /** A consistent Get. @throws DamagedRecordError when the stored record does not parse */
  async getPerson(tenant: string, email: string): Promise<PersonRecord | null> {
    const item = await this.x.get(keys.person(tenant, email));
    return item ? storedRecord(PersonRecord, item.person_json, `person ${email} of tenant ${tenant}`) : null;
  }

  /**
   * See the port: one Put on condition that the item is absent (`expected` null) or at version
   * `expected`; of two writers over the same version, DynamoDB lets one through.
   * @throws StateConflictError when the condition fails
   * @throws RangeError when `person.version` is not `expected + 1`
   */
  async putPerson(person: PersonRecord, expected: number | null): Promise<void> {
    assertNextVersion(person.version, expected);
    try {
      await this.x.doc.send(
        new PutCommand({
          TableName: this.x.table,
          Item: {
            ...keys.person(person.tenant, person.email),
            tenant: person.tenant,
            email: person.email,
            version: person.version,
            person_json: JSON.stringify(person),
          },
          ...(expected === null
            ? { ConditionExpression: 'attribute_not_exists(#pk)', ExpressionAttributeNames: { '#pk': PK } }
            : {
                ConditionExpression: '#version = :expected',
                ExpressionAttributeNames: { '#version': 'version' },
                ExpressionAttributeValues: { ':expected': expected },
              }),
        }),
      );
    } catch (err) {
      if (errorName(err) !== 'ConditionalCheckFailedException') throw err;
      throw new StateConflictError(
        `person ${person.email} changed since it was read (expected version ${expected ?? 'none'})`,
      );
    }
  }

  /** See the port: a consistent query of the `PERSON#` range, by email. */
  async listPeople(
    tenant: string,
    opts: { limit: number; cursor?: string | undefined },
  ): Promise<Page<PersonRecord>> {
    const { items, next } = await this.page('people', tenant, opts, {
      pk: keys.person(tenant, '').pk,
      prefix: PERSON_PREFIX,
      startKey: (email) => keys.person(tenant, email),
      forward: true,
    });
    return { items: items.flatMap((i) => listedRecord(PersonRecord, i.person_json) ?? []), next };
  }

  // ---- the audit list: `SIGNIN#{tenant}#AUDIT` / `{id}`

  /**
   * One Put on condition that the id is new (a second append of it keeps the first, as SQLite's does),
   * its TTL the entry's `expires_at` in epoch seconds: DynamoDB drops it some time after.
   */
  async appendAudit(entry: AuditEntry): Promise<void> {
    try {
      await this.x.doc.send(
        new PutCommand({
          TableName: this.x.table,
          Item: {
            ...keys.auditEntry(entry.tenant, entry.id),
            tenant: entry.tenant,
            id: entry.id,
            [TTL_ATTRIBUTE]: Math.floor(Date.parse(entry.expires_at) / 1000),
            entry_json: JSON.stringify(entry),
          },
          ConditionExpression: 'attribute_not_exists(#pk)',
          ExpressionAttributeNames: { '#pk': PK },
        }),
      );
    } catch (err) {
      if (errorName(err) !== 'ConditionalCheckFailedException') throw err;
    }
  }

  /** See the port: a consistent query of the tenant's audit partition, backwards (newest first). */
  async listAudit(
    tenant: string,
    opts: { limit: number; cursor?: string | undefined },
  ): Promise<Page<AuditEntry>> {
    const { items, next } = await this.page('audit', tenant, opts, {
      pk: keys.auditEntry(tenant, '').pk,
      prefix: null,
      startKey: (id) => keys.auditEntry(tenant, id),
      forward: false,
    });
    return { items: items.flatMap((i) => listedRecord(AuditEntry, i.entry_json) ?? []), next };
  }

  /**
   * One page of a listing: consistent queries from the cursor's key until `limit` + 1 items are read (a
   * response stops at 1 MB) or the range ends; the next cursor is the last item of the page's, whether
   * or not that item parses: its sort key after `prefix` (an email, an id).
   * @throws InvalidCursorError for a cursor not of this listing of this tenant
   */
  private async page(
    listing: SignInListing,
    tenant: string,
    opts: { limit: number; cursor?: string | undefined },
    range: {
      pk: string;
      prefix: string | null;
      startKey: (position: string) => ItemKey;
      forward: boolean;
    },
  ): Promise<Page<Item>> {
    const limit = pageLimit(opts.limit);
    let start: Item | undefined =
      opts.cursor === undefined
        ? undefined
        : { ...range.startKey(decodeSignInCursor(listing, tenant, opts.cursor)) };
    const read: Item[] = [];
    do {
      const res = await this.x.doc.send(
        new QueryCommand({
          TableName: this.x.table,
          KeyConditionExpression:
            range.prefix === null ? '#pk = :pk' : '#pk = :pk AND begins_with(#sk, :prefix)',
          ExpressionAttributeNames: { '#pk': PK, ...(range.prefix === null ? {} : { '#sk': SK }) },
          ExpressionAttributeValues: {
            ':pk': range.pk,
            ...(range.prefix === null ? {} : { ':prefix': range.prefix }),
          },
          ScanIndexForward: range.forward,
          ConsistentRead: true,
          Limit: limit + 1 - read.length,
          ExclusiveStartKey: start,
        }),
      );
      read.push(...(res.Items ?? []));
      start = res.LastEvaluatedKey;
    } while (start && read.length <= limit);
    const items = read.slice(0, limit);
    const last = items.at(-1);
    // the position from the sort key, which every item has whatever its other attributes hold
    const position = last ? String(last[SK]).slice(range.prefix?.length ?? 0) : '';
    return {
      items,
      next: read.length > limit && position ? encodeSignInCursor(listing, tenant, position) : null,
    };
  }
}
