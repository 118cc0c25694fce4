/**
 * The alerts methods of `DynamoStateStore` (issue 28; the port and its rules: ../alerts.ts; the layout:
 * dynamo/schema.ts). Targets `ALERT#{tenant}` / `TARGET#{id}`; outbox events `ALERT_OUT#{shard}` /
 * `{tenant}#{id}`, Put by the change's own transaction (`outboxPut`: an unconditional Put of the same
 * content, so a retried change is the same item, and never fails the transaction); deliveries in their
 * session's partition `ALERT#{tenant}#S#{sid}` / `D#{target}#{order}#{event}`, on gsi1 by target; and a
 * due mark `ALERT_DUE#{shard}` / `{tenant}#{sid}` per session that may have pending deliveries, with a
 * lower bound of when one may be due (dynamo/alert-marks.ts; the worker's listing: dynamo/alert-due.ts).
 * A tenant's targets are counted in `ALERT#{tenant}`/`COUNT` (`n`), one more in the transaction that
 * makes a target, one fewer in the one that deletes it. A finished delivery gets the table's TTL 30 days out. A listing leaves out an item that
 * does not parse as its record (dynamo/alert-items.ts). Answers as sqlite/alerts.ts does.
 */
import { DeleteCommand, PutCommand, QueryCommand, UpdateCommand } from '@aws-sdk/lib-dynamodb';
import type { AlertDelivery, AlertStore, AlertTarget, AttemptResult, OutboxEvent } from '../alerts.js';
import { LimitReachedError, StateConflictError } from '../errors.js';
import { DueListing } from './alert-due.js';
import {
  cmp,
  deliveryItem,
  deliveryKey,
  FINAL,
  FINISHED_KEPT_SECONDS,
  firstOf,
  outboxPut,
  parseDelivery,
  parseEvent,
  parseTarget,
} from './alert-items.js';
import { DueMarks } from './alert-marks.js';
import { cancellationCodes, compact, errorName, type Item, type TransactItem, update } from './items.js';
import {
  ALERT_OUT_PREFIX,
  ALERT_SHARDS,
  alertSessionPk,
  GSI1,
  GSI1_PK,
  gsiKeys,
  keys,
  PK,
  SK,
  TTL_ATTRIBUTE,
} from './schema.js';
import type { DynamoPrimitives } from './tokens.js';

/** The most items of one `TransactWriteItems`. */
const MAX_TRANSACT_ITEMS = 100;
/** How often `fanOut` reads again after a delivery was made under it by another worker. */
const FAN_OUT_ATTEMPTS = 5;

/** The `AlertStore` methods on DynamoDB; each answers as SQLite's does. */
export class DynamoAlerts implements AlertStore {
  private readonly marks: DueMarks;
  private readonly due: DueListing;

  constructor(private readonly x: DynamoPrimitives) {
    this.marks = new DueMarks(x);
    this.due = new DueListing(x, this.marks);
  }

  // ---- targets: `ALERT#{tenant}` / `TARGET#{id}`

  /**
   * A Put on condition of the stored version; a new target's (version 1) in one transaction with the
   * tenant's count `n` one more, on condition (with `maxTargets`) that it is below: concurrent adds on
   * any number of instances never pass it.
   * @throws StateConflictError when the stored version is not `target.version - 1`
   * @throws LimitReachedError when the tenant has `maxTargets` targets already
   */
  async putAlertTarget(target: AlertTarget, o: { maxTargets?: number } = {}): Promise<void> {
    const prev = target.version - 1;
    const max = o.maxTargets;
    const refused = () =>
      new LimitReachedError(`the tenant has ${max} alert targets already (at most ${max})`, max ?? 0);
    const conflict = () =>
      new StateConflictError(
        `alert target ${target.id} changed since it was read (expected version ${prev})`,
      );
    const put = {
      TableName: this.x.table,
      Item: {
        ...keys.alertTarget(target.tenant, target.id),
        tenant: target.tenant,
        id: target.id,
        created_at: target.created_at,
        version: target.version,
        target_json: JSON.stringify(target),
      },
      ConditionExpression: prev === 0 ? 'attribute_not_exists(#version)' : '#version = :prev',
      ExpressionAttributeNames: { '#version': 'version' },
      ...(prev === 0 ? {} : { ExpressionAttributeValues: { ':prev': prev } }),
    };
    if (prev !== 0) {
      try {
        await this.x.doc.send(new PutCommand(put));
        return;
      } catch (err) {
        if (errorName(err) !== 'ConditionalCheckFailedException') throw err;
        throw conflict();
      }
    }
    // an absent count is 0, which no condition `n < max` can say for max 0
    if (max !== undefined && max <= 0) throw refused();
    const count: TransactItem = {
      Update: {
        TableName: this.x.table,
        Key: keys.alertTargetCount(target.tenant),
        UpdateExpression: 'ADD #n :one',
        ExpressionAttributeNames: { '#n': 'n' },
        ExpressionAttributeValues: { ':one': 1, ...(max === undefined ? {} : { ':max': max }) },
        ...(max === undefined ? {} : { ConditionExpression: 'attribute_not_exists(#n) OR #n < :max' }),
      },
    };
    try {
      await this.x.transact([{ Put: put }, count]);
    } catch (err) {
      const codes = cancellationCodes(err);
      if (codes[0] === 'ConditionalCheckFailed') throw conflict();
      if (codes[1] === 'ConditionalCheckFailed') throw refused();
      throw err;
    }
  }

  /** The target, or null when there is none or its item does not parse. */
  async getAlertTarget(tenant: string, id: string): Promise<AlertTarget | null> {
    const item = await this.x.get(keys.alertTarget(tenant, id));
    return item ? parseTarget(item) : null;
  }

  /** One consistent query of the tenant's alert partition (at most 50 targets: `MAX_TARGETS`). */
  async listAlertTargets(tenant: string): Promise<AlertTarget[]> {
    const items = await this.x.queryAll({
      KeyConditionExpression: '#pk = :pk AND begins_with(#sk, :t)',
      ExpressionAttributeNames: { '#pk': PK, '#sk': SK },
      ExpressionAttributeValues: { ':pk': `ALERT#${tenant}`, ':t': 'TARGET#' },
      ConsistentRead: true,
    });
    const out = items.flatMap((i) => parseTarget(i) ?? []);
    return out.sort((a, b) => cmp(a.created_at, b.created_at) || cmp(a.id, b.id));
  }

  /**
   * The target's Delete (on condition it is there) and the tenant's count one fewer, one transaction (an
   * absent target: neither); then each of its deliveries as gsi1 lists them (eventually consistent on
   * AWS: a delivery made a moment before may stay; the worker finds its target gone).
   */
  async deleteAlertTarget(tenant: string, id: string): Promise<void> {
    try {
      await this.x.transact([
        {
          Delete: {
            TableName: this.x.table,
            Key: keys.alertTarget(tenant, id),
            ConditionExpression: 'attribute_exists(#pk)',
            ExpressionAttributeNames: { '#pk': PK },
          },
        },
        {
          Update: {
            TableName: this.x.table,
            Key: keys.alertTargetCount(tenant),
            UpdateExpression: 'ADD #n :minus',
            ExpressionAttributeNames: { '#n': 'n' },
            ExpressionAttributeValues: { ':minus': -1 },
          },
        },
      ]);
    } catch (err) {
      if (cancellationCodes(err)[0] !== 'ConditionalCheckFailed') throw err;
    }
    const items = await this.x.queryAll({
      IndexName: GSI1,
      KeyConditionExpression: '#pk = :pk',
      ExpressionAttributeNames: { '#pk': GSI1_PK },
      ExpressionAttributeValues: { ':pk': gsiKeys.alertTargetPk(tenant, id) },
    });
    for (const i of items) {
      await this.x.doc.send(
        new DeleteCommand({ TableName: this.x.table, Key: { [PK]: i[PK], [SK]: i[SK] } }),
      );
    }
  }

  // ---- the outbox: `ALERT_OUT#{shard}` / `{tenant}#{id}`

  async putOutboxEvents(events: OutboxEvent[]): Promise<void> {
    await Promise.all(events.map((e) => this.x.doc.send(new PutCommand(outboxPut(this.x.table, e).Put!))));
  }

  /** One consistent query per shard (filter `due_at <= now`), merged earliest first; a damaged item left out. */
  async listDueEvents(now: string, limit: number): Promise<OutboxEvent[]> {
    const shards = await Promise.all(
      Array.from({ length: ALERT_SHARDS }, (_, shard) =>
        this.x.queryAll({
          KeyConditionExpression: '#pk = :pk',
          FilterExpression: '#due <= :now',
          ExpressionAttributeNames: { '#pk': PK, '#due': 'due_at' },
          ExpressionAttributeValues: { ':pk': `${ALERT_OUT_PREFIX}${shard}`, ':now': now },
          ConsistentRead: true,
        }),
      ),
    );
    const due = shards.flat().flatMap((i) => parseEvent(i) ?? []);
    due.sort((a, b) => cmp(a.due_at, b.due_at) || cmp(a.tenant, b.tenant) || cmp(a.id, b.id));
    return due.slice(0, Math.max(0, limit));
  }

  /**
   * Reads the event (gone: nothing to do) and which deliveries exist, then one transaction: the event's
   * Delete on condition it is there, each new delivery's Put on condition it is not, and the session's due
   * mark when one of them is pending (`DueMarks.puts`: read, and Put on condition of what was read). A
   * delivery or a mark written meanwhile by another worker cancels it: read again. At most 98 deliveries (a transaction's 100 items; a tenant has at most 50 targets).
   */
  async fanOut(event: OutboxEvent, deliveries: AlertDelivery[]): Promise<void> {
    const eventKey = keys.alertOutbox(event.tenant, event.id);
    for (let attempt = 1; ; attempt++) {
      if (!(await this.x.get(eventKey))) return;
      const once = firstOf(deliveries, (d) => `${d.tenant}#${d.target_id}#${d.event_id}`);
      const held = await Promise.all(once.map((d) => this.x.get(deliveryKey(d))));
      const fresh = once.filter((_, i) => !held[i]);
      const marks = await this.marks.puts(fresh.filter((d) => d.status === 'pending'));
      const items: TransactItem[] = [
        {
          Delete: {
            TableName: this.x.table,
            Key: eventKey,
            ConditionExpression: 'attribute_exists(#pk)',
            ExpressionAttributeNames: { '#pk': PK },
          },
        },
        ...fresh.map(
          (d): TransactItem => ({
            Put: {
              TableName: this.x.table,
              Item: deliveryItem(d),
              ConditionExpression: 'attribute_not_exists(#pk)',
              ExpressionAttributeNames: { '#pk': PK },
            },
          }),
        ),
        ...marks,
      ];
      if (items.length > MAX_TRANSACT_ITEMS) {
        throw new Error(`fanOut of ${fresh.length} deliveries: more than one transaction holds`);
      }
      try {
        await this.x.transact(items);
        return;
      } catch (err) {
        const codes = cancellationCodes(err);
        // the event is gone: another worker fanned it out
        if (codes[0] === 'ConditionalCheckFailed') return;
        if (!codes.includes('ConditionalCheckFailed') || attempt >= FAN_OUT_ATTEMPTS) throw err;
      }
    }
  }

  async rescheduleEvent(tenant: string, id: string, dueAt: string): Promise<void> {
    try {
      await this.x.doc.send(
        new UpdateCommand({
          TableName: this.x.table,
          Key: keys.alertOutbox(tenant, id),
          UpdateExpression: 'SET #due = :due',
          ConditionExpression: 'attribute_exists(#pk)',
          ExpressionAttributeNames: { '#due': 'due_at', '#pk': PK },
          ExpressionAttributeValues: { ':due': dueAt },
        }),
      );
    } catch (err) {
      if (errorName(err) !== 'ConditionalCheckFailedException') throw err;
    }
  }

  // ---- deliveries: `ALERT#{tenant}#S#{sid}` / `D#{target}#{order}#{event}`

  /** See `DueListing.list` (dynamo/alert-due.ts). */
  listDueDeliveries(
    now: string,
    limit: number,
    o: { perTarget?: number; exclude?: readonly string[] } = {},
  ): Promise<AlertDelivery[]> {
    return this.due.list(now, limit, o);
  }

  /** An Update on condition that it is pending at `d.attempts` and unclaimed (or its claim over by `now`). */
  async claimDelivery(d: AlertDelivery, now: string, until: string): Promise<boolean> {
    try {
      await this.x.doc.send(
        new UpdateCommand({
          TableName: this.x.table,
          Key: deliveryKey(d),
          UpdateExpression: 'SET #cu = :until',
          ConditionExpression:
            '#status = :pending AND #attempts = :attempts AND (attribute_not_exists(#cu) OR #cu <= :now)',
          ExpressionAttributeNames: { '#cu': 'claimed_until', '#status': 'status', '#attempts': 'attempts' },
          ExpressionAttributeValues: {
            ':until': until,
            ':pending': 'pending',
            ':attempts': d.attempts,
            ':now': now,
          },
        }),
      );
      return true;
    } catch (err) {
      if (errorName(err) === 'ConditionalCheckFailedException') return false;
      throw err;
    }
  }

  /**
   * An Update on condition that it is pending at `d.attempts`: the outcome, the claim removed, and when
   * final its due time removed and the TTL set 30 days out.
   * @throws StateConflictError when it is not (another worker finished it, or it is gone)
   */
  async finishAttempt(d: AlertDelivery, result: AttemptResult): Promise<void> {
    const final = FINAL.has(result.status);
    const values: Item = {
      status: result.status,
      attempts: result.attempts,
      next_at: final ? null : result.next_at,
      last_status: result.last_status,
      last_error: result.last_error,
      delivered_at: result.delivered_at,
      skipped_reason: result.skipped_reason,
      ...(final ? { [TTL_ATTRIBUTE]: Math.floor(Date.now() / 1000) + FINISHED_KEPT_SECONDS } : {}),
    };
    const expr = update(
      {
        set: compact(values),
        remove: [...Object.keys(values).filter((k) => values[k] === null), 'claimed_until'],
      },
      (x) => `${x.n('status')} = ${x.v('pending')} AND ${x.n('attempts')} = ${x.v(d.attempts)}`,
    );
    try {
      await this.x.doc.send(new UpdateCommand({ TableName: this.x.table, Key: deliveryKey(d), ...expr }));
    } catch (err) {
      if (errorName(err) !== 'ConditionalCheckFailedException') throw err;
      throw new StateConflictError(
        `delivery of ${d.event_id} to ${d.target_id} changed since it was claimed (not pending at ${d.attempts} attempts)`,
      );
    }
    await this.marks.touch(d);
  }

  /**
   * Of a target: gsi1 newest first (eventually consistent on AWS, as the other listings). Of a session
   * (and a target): its partition (the target's range), consistent, sorted newest first (a session's
   * deliveries are few: its events times its targets, each kept 30 days once finished).
   */
  async listDeliveries(
    tenant: string,
    options: { target?: string; sid?: string; limit: number },
  ): Promise<AlertDelivery[]> {
    const limit = Math.max(0, options.limit);
    if (options.sid !== undefined) {
      const items = await this.x.queryAll({
        KeyConditionExpression: '#pk = :pk AND begins_with(#sk, :d)',
        ExpressionAttributeNames: { '#pk': PK, '#sk': SK },
        ExpressionAttributeValues: {
          ':pk': alertSessionPk(tenant, options.sid),
          ':d': options.target === undefined ? 'D#' : `D#${options.target}#`,
        },
        ConsistentRead: true,
      });
      const out = items.flatMap((i) => parseDelivery(i) ?? []);
      out.sort(
        (a, b) => cmp(b.order, a.order) || cmp(a.target_id, b.target_id) || cmp(b.event_id, a.event_id),
      );
      return out.slice(0, limit);
    }
    if (options.target === undefined) throw new Error('listDeliveries needs a target or a sid');
    // a Query's Limit is at least 1
    if (limit === 0) return [];
    const out: AlertDelivery[] = [];
    let start: Item | undefined;
    do {
      const res = await this.x.doc.send(
        new QueryCommand({
          TableName: this.x.table,
          IndexName: GSI1,
          KeyConditionExpression: '#pk = :pk',
          ExpressionAttributeNames: { '#pk': GSI1_PK },
          ExpressionAttributeValues: { ':pk': gsiKeys.alertTargetPk(tenant, options.target) },
          ScanIndexForward: false,
          Limit: limit - out.length,
          ExclusiveStartKey: start,
        }),
      );
      out.push(...(res.Items ?? []).flatMap((i) => parseDelivery(i) ?? []));
      start = res.LastEvaluatedKey;
    } while (start && out.length < limit);
    return out;
  }
}
