/**
 * What only the DynamoDB sign-in adapter has (issue 29, lib/store/dynamo/sign-in.ts), on DynamoDB Local
 * with the real SDK; the contract (test/store/contract/sign-in.contract.ts) has the rest:
 * - where its items sit (`SIGNIN#{tenant}` / `OIDC` and `PERSON#{email}`, `SIGNIN#{tenant}#AUDIT` /
 *   `{id}`), a person's version an attribute of its own, an audit entry's TTL (`expires_at`, epoch
 *   seconds) from the entry's `expires_at`, and no TTL on settings or people;
 * - an item whose record does not parse makes a `get…` throw a `DamagedRecordError` naming it, and is
 *   left out of a listing whose paging goes on past it.
 */
import { DynamoDBDocumentClient, GetCommand, UpdateCommand } from '@aws-sdk/lib-dynamodb';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type DynamoLocal, startDynamoLocal } from '../../../harness/dynamodb-local.js';
import { keys, TTL_ATTRIBUTE } from '../../../lib/store/dynamo/schema.js';
import { DynamoStateStore } from '../../../lib/store/dynamo/state-store.js';
import { DamagedRecordError } from '../../../lib/store/sign-in-records.js';
import { at } from '../contract/records.js';
import { auditOf, personOf, settingsOf } from '../contract/sign-in-records.js';

let local: DynamoLocal;
beforeAll(async () => {
  local = await startDynamoLocal();
}, 120_000);
afterAll(async () => {
  await local?.stop();
});

describe('DynamoStateStore sign-in items (issue 29)', () => {
  it('keeps settings, people and audit entries where schema.ts says, audit entries with a TTL', async () => {
    const table = await local.freshTable();
    const store = new DynamoStateStore({ tableName: table, client: local.client });
    const doc = DynamoDBDocumentClient.from(local.client);
    const item = async (key: { pk: string; sk: string }) =>
      (await doc.send(new GetCommand({ TableName: table, Key: key }))).Item;

    const settings = settingsOf('acme', 1);
    await store.putOidcSettings(settings);
    const person = personOf('acme', 'priya@example.com', 1);
    await store.putPerson(person, null);
    await store.putPerson({ ...person, version: 2 }, 1);
    const entry = auditOf('acme', 3, { expires_at: at(3 + 400 * 86_400) });
    await store.appendAudit(entry);

    expect(keys.oidcSettings('acme')).toEqual({ pk: 'SIGNIN#acme', sk: 'OIDC' });
    const s = await item(keys.oidcSettings('acme'));
    expect(s?.[TTL_ATTRIBUTE]).toBeUndefined();
    expect(JSON.parse(s?.settings_json as string)).toEqual(settings);

    expect(keys.person('acme', 'priya@example.com')).toEqual({
      pk: 'SIGNIN#acme',
      sk: 'PERSON#priya@example.com',
    });
    const p = await item(keys.person('acme', 'priya@example.com'));
    expect(p).toMatchObject({ tenant: 'acme', email: 'priya@example.com', version: 2 });
    expect(p?.[TTL_ATTRIBUTE]).toBeUndefined();

    expect(keys.auditEntry('acme', entry.id)).toEqual({ pk: 'SIGNIN#acme#AUDIT', sk: entry.id });
    const a = await item(keys.auditEntry('acme', entry.id));
    expect(a?.[TTL_ATTRIBUTE]).toBe(Date.parse(entry.expires_at) / 1000);
    expect(a?.[TTL_ATTRIBUTE]).toBe(Math.floor(Date.UTC(2026, 0, 1) / 1000) + 3 + 400 * 86_400);
    expect(JSON.parse(a?.entry_json as string)).toEqual(entry);
    await store.close();
  });

  it('throws a DamagedRecordError naming a damaged item read alone, and lists past it', async () => {
    const table = await local.freshTable();
    const store = new DynamoStateStore({ tableName: table, client: local.client });
    const doc = DynamoDBDocumentClient.from(local.client);
    const damage = (key: { pk: string; sk: string }, attr: string, value: unknown) =>
      doc.send(
        new UpdateCommand({
          TableName: table,
          Key: key,
          UpdateExpression: 'SET #a = :v',
          ExpressionAttributeNames: { '#a': attr },
          ExpressionAttributeValues: { ':v': value },
        }),
      );
    await store.putOidcSettings(settingsOf('acme', 1));
    const people = ['a', 'b', 'c', 'd'].map((n) => personOf('acme', `${n}@example.com`, 1));
    for (const p of people) await store.putPerson(p, null);
    const entries = [1, 2, 3].map((i) => auditOf('acme', i));
    for (const e of entries) await store.appendAudit(e);

    await damage(keys.oidcSettings('acme'), 'settings_json', '{broken');
    await damage(
      keys.person('acme', 'b@example.com'),
      'person_json',
      JSON.stringify({ ...people[1], version: 'two' }),
    );
    await damage(keys.person('acme', 'c@example.com'), 'person_json', 7);
    await damage(keys.auditEntry('acme', entries[1]!.id), 'entry_json', '[]');

    await expect(store.getOidcSettings('acme')).rejects.toThrow(/OIDC settings of tenant acme is not JSON/);
    await expect(store.getPerson('acme', 'b@example.com')).rejects.toThrow(
      /person b@example\.com of tenant acme does not parse at version/,
    );
    await expect(store.getPerson('acme', 'c@example.com')).rejects.toBeInstanceOf(DamagedRecordError);
    const first = await store.listPeople('acme', { limit: 2 });
    expect(first.items).toEqual([people[0]]);
    expect(await store.listPeople('acme', { limit: 2, cursor: first.next! })).toEqual({
      items: [people[3]],
      next: null,
    });
    expect(await store.listAudit('acme', { limit: 10 })).toEqual({
      items: [entries[2], entries[0]],
      next: null,
    });
    // the damaged person can be written over at its stored version, and reads again
    const fixed = personOf('acme', 'b@example.com', 2);
    await store.putPerson(fixed, 1);
    expect(await store.getPerson('acme', 'b@example.com')).toEqual(fixed);
    await store.close();
  });
});
