/**
 * The status and work items of `DynamoStateStore` (dynamo/schema.ts): a session's status
 * `T#{tenant}#S#{sid}` / `STATUS` (seed 000 history, lib/service/status/retention.ts) and work items
 * `T#{tenant}` / `WORK#{id}`, by session on gsi1 (seed 004). Both are whole records written on condition
 * of their `version`. And the session summary the overview lists (issue 14.1, ADR 4): attributes of the
 * session items, set with each report and merged after each chunk. Split from the store so that each file
 * stays readable; the store delegates here and lends its primitives (as to dynamo/tokens.ts).
 */
import { createHash } from 'node:crypto';
import { PutCommand, QueryCommand, type QueryCommandInput, UpdateCommand } from '@aws-sdk/lib-dynamodb';
import type { OutboxEvent } from '../alerts.js';
import { StateConflictError } from '../errors.js';
import { askedOf, fixesOf, mergeSummary, statusSummaryOf } from '../session-summary.js';
import type { SessionSummary, SummaryDelta } from '../sessions.js';
import type { StatusRecord } from '../status.js';
import { decodeStatus, encodeStatus, legacyStatus } from '../status-record.js';
import type { WorkItem } from '../work.js';
import { outboxPuts } from './alert-items.js';
import {
  cancellationCodes,
  errorName,
  type Item,
  type TransactItem,
  toSessionSummary,
  update,
} from './items.js';
import { GSI1, GSI1_PK, GSI1_SK, gsiKeys, keys, PK, SK, TTL_ATTRIBUTE, WORK_PREFIX } from './schema.js';
import type { DynamoPrimitives } from './tokens.js';

/** How long a work item stays in the table past its lease (TTL cleanup only): 30 days, in seconds. */
const WORK_KEPT_SECONDS = 30 * 86_400;
/** How long a claimed key is kept (TTL cleanup): 30 days, in seconds. */
const CLAIM_KEPT_SECONDS = 30 * 86_400;
/**
 * How often a summary merge that lost to a concurrent one is tried in all: each round lets one of the
 * racing merges through, so this bounds how many chunks of one session may merge at once; a merge that
 * gives up answers its chunk 503 `summary_not_updated`, before it is indexed (retried). 30: the first
 * chunks of 100 writers starting together (issue 17.1) change the summary up to 20 times (20 agents)
 * and other times: each of those merges must outlast the others' rounds.
 */
const SUMMARY_ATTEMPTS = 30;

/** The `StateStore` status, work and session summary methods on DynamoDB; each answers as SQLite's does. */
export class DynamoStatusWorkItems {
  constructor(private readonly x: DynamoPrimitives) {}

  // ---- status: `T#{tenant}#S#{sid}` / `STATUS`

  /**
   * The status and the session index in one transaction (`withSessionTouch`). The status Put holds the
   * version condition (`attribute_not_exists(version)` for version 1: no item, or one an earlier hansard
   * wrote); the session index takes the status summary and `status_version` in the same transaction, so
   * summaries are written in the order of the versions. The change's alert events (`outbox`) are Puts of
   * the same transaction (dynamo/alert-items.ts `outboxPuts`). (Chunks' counts update the session item outside
   * any transaction, issue 17.1: a concurrent one cancels this with `TransactionConflict`, retried.)
   * @throws StateConflictError when the stored status is not at `s.version - 1`
   */
  async putStatus(s: StatusRecord, outbox: OutboxEvent[] = []): Promise<void> {
    const prev = s.version - 1;
    const sum = statusSummaryOf(s);
    const status = {
      TableName: this.x.table,
      Item: {
        ...keys.status(s.tenant, s.sid),
        tenant: s.tenant,
        sid: s.sid,
        record_json: encodeStatus(s),
        version: s.version,
      },
      ConditionExpression: prev === 0 ? 'attribute_not_exists(#version)' : '#version = :prev',
      ExpressionAttributeNames: { '#version': 'version' },
      ...(prev === 0 ? {} : { ExpressionAttributeValues: { ':prev': prev } }),
    };
    const conflict = () =>
      new StateConflictError(`the status of ${s.sid} changed since it was read (expected version ${prev})`);
    const events = outboxPuts(this.x.table, outbox);
    await this.withSessionTouch(
      { Put: status },
      s.tenant,
      s.sid,
      s.reports.at(-1)!.reported_at,
      conflict,
      events,
      {
        // the board's copy (issue 17.6): with the version it was taken from, so a verdict computed from
        // that version is reused without reading the record (lib/service/board/get.ts)
        set: {
          state: sum.state,
          state_since: sum.state_since,
          note: sum.note,
          reported_at: sum.reported_at,
          status_version: s.version,
        },
        setIfAbsent: sum.note === '' ? {} : { first_note: sum.note },
      },
    );
  }

  // ---- the session summary (issue 14.1): attributes of the session items `T#{tenant}` / `S#{sid}`

  /**
   * The session items of the tenant's partition (`S#` sort keys), 1 MB a page, eventually consistent (half
   * the read units; a write shows within about a second): ~600 bytes a session, so 5,000 are ~3 pages.
   */
  async listSessionSummaries(tenant: string): Promise<SessionSummary[]> {
    const items = await this.x.queryAll({
      KeyConditionExpression: '#pk = :pk AND begins_with(#sk, :s)',
      ExpressionAttributeNames: { '#pk': PK, '#sk': SK },
      ExpressionAttributeValues: { ':pk': `T#${tenant}`, ':s': 'S#' },
    });
    return items.map(toSessionSummary);
  }

  /**
   * `StateStore.mergeSessionSummary`: a consistent read of the session item, the merge (`mergeSummary`),
   * and, when it changes anything, an update on condition that the item's `summary_rev` is still the one
   * read (tried again from a fresh read when a concurrent merge got there first). Most chunks change
   * nothing and cost the read alone. A session with no item yet gets one: `created_at`, `updated_at` and
   * its board keys `at`, and writers, lines and bytes 0, each only if absent, so `advanceWriter`'s ADDs
   * then count from 0 (ingest merges before it advances the writer, ADR 4).
   */
  async mergeSessionSummary(
    tenant: string,
    sid: string,
    delta: SummaryDelta,
    at = new Date().toISOString(),
  ): Promise<void> {
    const key = keys.session(tenant, sid);
    for (let attempt = 1; ; attempt++) {
      const item = (await this.x.get(key)) ?? {};
      const names = (v: unknown): string[] => (Array.isArray(v) ? (v as string[]) : []);
      const next = mergeSummary(
        {
          title: (item.title as string | undefined) ?? null,
          title_at: (item.title_at as number | undefined) ?? null,
          people: names(item.people),
          agents: names(item.agents),
          asked: askedOf(item.asked),
          title_id: (item.title_id as string | undefined) ?? null,
          fixes: fixesOf(item.fixes),
        },
        delta,
      );
      if (!next) return;
      const rev = (item.summary_rev as number | undefined) ?? 0;
      const expr = update(
        {
          set: {
            people: next.people,
            agents: next.agents,
            // a list of at most 20 maps of ≤ 200 + 160 characters: bounded as the names are
            asked: next.asked,
            // the corrections of text the title and `asked` follow: at most 20 + 21 maps of ≤ 160 characters
            fixes: next.fixes,
            summary_rev: rev + 1,
            // a corrected title may be null (its first line blank) while its message stays the first
            ...(next.title_at === null
              ? {}
              : { title: next.title, title_at: next.title_at, title_id: next.title_id }),
          },
          // the item of a session whose first chunk is being ingested: what `advanceWriter` adds to
          setIfAbsent: {
            tenant,
            sid,
            created_at: at,
            updated_at: at,
            ...gsiKeys.board(tenant, at, sid),
            writers: 0,
            lines: 0,
            bytes: 0,
          },
        },
        (x) =>
          rev === 0 ? `attribute_not_exists(${x.n('summary_rev')})` : `${x.n('summary_rev')} = ${x.v(rev)}`,
      );
      try {
        await this.x.doc.send(new UpdateCommand({ TableName: this.x.table, Key: key, ...expr }));
        return;
      } catch (err) {
        if (errorName(err) !== 'ConditionalCheckFailedException' || attempt >= SUMMARY_ATTEMPTS) throw err;
        // jittered, so the losers of one round do not all meet again in the next
        await new Promise((r) => setTimeout(r, Math.random() * Math.min(200, 5 * 2 ** attempt)));
      }
    }
  }

  async getStatus(tenant: string, sid: string): Promise<StatusRecord | null> {
    const item = await this.x.get(keys.status(tenant, sid));
    if (!item) return null;
    if (typeof item.record_json === 'string')
      return decodeStatus(tenant, sid, item.record_json, item.version as number);
    return legacyStatus(tenant, sid, {
      state: item.state as string,
      note: item.note as string,
      events: JSON.parse(item.events_json as string) as unknown[],
      reported_by: item.reported_by as string,
      reported_at: item.reported_at as string,
    });
  }

  // ---- work items (seed 004): `T#{tenant}` / `WORK#{id}`, by session on gsi1

  /**
   * A conditional write of the whole item (`attribute_not_exists(version)` for version 1), with the session
   * index (`withSessionTouch`: a work item is activity, the session shows on the board). Its TTL attribute
   * is 30 days past the lease or this write, whichever is later (a service clock set in the past must not
   * have it cleaned at once): DynamoDB's TTL only cleans up; expiry is decided at read time. The change's
   * alert events (`outbox`: a lease watch) are Puts of the same transaction.
   * @throws StateConflictError when the stored item is not at `item.version - 1`
   */
  async putWork(item: WorkItem, outbox: OutboxEvent[] = []): Promise<void> {
    const prev = item.version - 1;
    // One conditional UpdateItem setting every attribute: the whole item, written or not at all.
    const work = {
      TableName: this.x.table,
      Key: keys.work(item.tenant, item.id),
      UpdateExpression:
        'SET #g1pk = :g1pk, #g1sk = :g1sk, #tenant = :tenant, #sid = :sid, #item = :item, #version = :version, #ttl = :ttl',
      ConditionExpression: prev === 0 ? 'attribute_not_exists(#version)' : '#version = :prev',
      ExpressionAttributeNames: {
        '#g1pk': GSI1_PK,
        '#g1sk': GSI1_SK,
        '#tenant': 'tenant',
        '#sid': 'sid',
        '#item': 'item_json',
        '#version': 'version',
        '#ttl': TTL_ATTRIBUTE,
      },
      ExpressionAttributeValues: {
        ':g1pk': gsiKeys.workPk(item.tenant, item.session),
        ':g1sk': item.id,
        ':tenant': item.tenant,
        ':sid': item.session,
        ':item': JSON.stringify(item),
        ':version': item.version,
        ':ttl':
          Math.floor(Math.max(Date.parse(item.lease_expires_at), Date.now()) / 1000) + WORK_KEPT_SECONDS,
        ...(prev === 0 ? {} : { ':prev': prev }),
      },
    };
    const conflict = () =>
      new StateConflictError(`work ${item.id} changed since it was read (expected version ${prev})`);
    const events = outboxPuts(this.x.table, outbox);
    await this.withSessionTouch(
      { Update: work },
      item.tenant,
      item.session,
      item.updated_at,
      conflict,
      events,
    );
  }

  /**
   * `write` (a conditional Put or Update of the record) and the session index in one transaction: the
   * entry is created, and its `updated_at` only moves forward (SQLite's MAX). When only the index's
   * condition fails (it is already newer), the record is written alone, under its own condition: the
   * index entry exists, which is all a report or a work item needs of it; `summary` (attributes of the
   * entry a report sets) is then written with it in a transaction of its own, without that condition.
   * `outbox` (unconditional Puts of alert events) goes into whichever transaction writes the record; with
   * none, the record alone is one conditional write as before.
   * @throws what `conflict` makes when the record's own condition fails
   */
  private async withSessionTouch(
    write: TransactItem,
    tenant: string,
    sid: string,
    at: string,
    conflict: () => StateConflictError,
    outbox: TransactItem[],
    summary?: { set: Item; setIfAbsent: Item },
  ): Promise<void> {
    const session = update(
      {
        set: { tenant, sid, updated_at: at, ...gsiKeys.board(tenant, at, sid), ...summary?.set },
        setIfAbsent: { created_at: at, writers: 0, lines: 0, bytes: 0, ...summary?.setIfAbsent },
      },
      (x) => `attribute_not_exists(${x.n(PK)}) OR ${x.n('updated_at')} < ${x.v(at)}`,
    );
    try {
      await this.x.transact([
        write,
        { Update: { TableName: this.x.table, Key: keys.session(tenant, sid), ...session } },
        ...outbox,
      ]);
    } catch (err) {
      const codes = cancellationCodes(err);
      if (codes[0] === 'ConditionalCheckFailed') throw conflict();
      if (codes[1] !== 'ConditionalCheckFailed') throw err;
      try {
        if (summary) {
          const only = update(summary);
          await this.x.transact([
            write,
            { Update: { TableName: this.x.table, Key: keys.session(tenant, sid), ...only } },
            ...outbox,
          ]);
        } else if (outbox.length > 0) await this.x.transact([write, ...outbox]);
        else if (write.Put) await this.x.doc.send(new PutCommand(write.Put));
        else await this.x.doc.send(new UpdateCommand(write.Update!));
      } catch (e) {
        if (errorName(e) === 'ConditionalCheckFailedException') throw conflict();
        if (cancellationCodes(e)[0] === 'ConditionalCheckFailed') throw conflict();
        throw e;
      }
    }
  }

  async getWork(tenant: string, id: string): Promise<WorkItem | null> {
    const item = await this.x.get(keys.work(tenant, id));
    return item ? (JSON.parse(item.item_json as string) as WorkItem) : null;
  }

  /**
   * A tenant's items: its partition's `WORK#` range; one session's: gsi1 (eventually consistent on AWS).
   * One Query answers at most 1 MB and an item may be about 250 KB (100 history entries), so pages are
   * followed until `limit` items or the end.
   */
  async listWork(tenant: string, options: { session?: string; limit: number }): Promise<WorkItem[]> {
    const query: QueryCommandInput =
      options.session === undefined
        ? {
            TableName: this.x.table,
            KeyConditionExpression: '#pk = :pk AND begins_with(#sk, :work)',
            ExpressionAttributeNames: { '#pk': PK, '#sk': SK },
            ExpressionAttributeValues: { ':pk': `T#${tenant}`, ':work': WORK_PREFIX },
            ScanIndexForward: false,
            ConsistentRead: true,
          }
        : {
            TableName: this.x.table,
            IndexName: GSI1,
            KeyConditionExpression: '#pk = :pk',
            ExpressionAttributeNames: { '#pk': GSI1_PK },
            ExpressionAttributeValues: { ':pk': gsiKeys.workPk(tenant, options.session) },
            ScanIndexForward: false,
          };
    const out: WorkItem[] = [];
    let start: Record<string, unknown> | undefined;
    do {
      const res = await this.x.doc.send(
        new QueryCommand({ ...query, Limit: options.limit - out.length, ExclusiveStartKey: start }),
      );
      for (const i of res.Items ?? []) out.push(JSON.parse(i.item_json as string) as WorkItem);
      start = res.LastEvaluatedKey;
    } while (start && out.length < options.limit);
    return out;
  }

  // ---- claimed keys: `T#{tenant}#KEY#{sha256(scope, key)}` / `KEY`

  /**
   * `StateStore.claimKey`: a Put on condition that no claim exists; when one does, a consistent Get of
   * it. The key's partition is a hash of scope and key, so any text fits in it. Its TTL is 30 days.
   * With alert events (`outbox`), the Put and theirs are one transaction, cancelled by the claim's
   * condition alone: the events are written only by the call that claims.
   */
  async claimKey(
    tenant: string,
    scope: string,
    key: string,
    value: string,
    outbox: OutboxEvent[] = [],
  ): Promise<string> {
    const k = claimKeyOf(tenant, scope, key);
    const claim = {
      TableName: this.x.table,
      Item: {
        ...k,
        tenant,
        value,
        claimed_at: new Date().toISOString(),
        [TTL_ATTRIBUTE]: Math.floor(Date.now() / 1000) + CLAIM_KEPT_SECONDS,
      },
      ConditionExpression: 'attribute_not_exists(#pk)',
      ExpressionAttributeNames: { '#pk': PK },
    };
    try {
      if (outbox.length === 0) await this.x.doc.send(new PutCommand(claim));
      else await this.x.transact([{ Put: claim }, ...outboxPuts(this.x.table, outbox)]);
      return value;
    } catch (err) {
      const lost =
        errorName(err) === 'ConditionalCheckFailedException' ||
        cancellationCodes(err)[0] === 'ConditionalCheckFailed';
      if (!lost) throw err;
    }
    const held = await this.x.get(k);
    // A claim removed (TTL) between the failed Put and this Get: so long unused that none holds it.
    if (!held) return this.claimKey(tenant, scope, key, value, outbox);
    return held.value as string;
  }

  /** `StateStore.readClaim`: a consistent Get of the claim (one removed by its TTL reads as none). */
  async readClaim(tenant: string, scope: string, key: string): Promise<string | null> {
    const held = await this.x.get(claimKeyOf(tenant, scope, key));
    return held ? (held.value as string) : null;
  }
}

/** The key of a claim: its partition is a hash of scope and key, so any text fits in it. */
function claimKeyOf(tenant: string, scope: string, key: string): ReturnType<typeof keys.claim> {
  return keys.claim(
    tenant,
    createHash('sha256')
      .update(JSON.stringify([scope, key]))
      .digest('hex'),
  );
}
