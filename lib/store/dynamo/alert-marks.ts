/**
 * The due marks of `DynamoStateStore`'s alert deliveries (issue 28, dynamo/alerts.ts; the layout:
 * dynamo/schema.ts): one item per session that may have pending deliveries, `ALERT_DUE#{shard}` /
 * `{tenant}#{sid}`, so that the worker reads the deliveries of those sessions only, and of those only
 * once one of them may be due. `due_at` is a lower bound of when a head of one of the session's queues
 * can next be listed (absent: at once); `rev` changes with every write that may lower it, so that a
 * listing that computed a later bound from an older read cannot overwrite a lower one. `targets` (a
 * string set) names every target that may have pending deliveries in the session, a superset (absent:
 * unknown, a mark from before it), so that a listing passes over a mark whose targets are all excluded or
 * have enough listed already, without reading its session.
 *
 * - `fanOut` Puts the mark with its new deliveries (`puts`): the bound lowered to their `next_at`, their
 *   targets added to the stored ones (kept unknown when they were), on condition of the `rev` it read
 *   (none read: on condition there is none);
 * - `finishAttempt` removes the bound with a new `rev` (`touch`): the next of the queue may be due at once;
 * - `listDueDeliveries` reads the marks due (`due`), and once it has read a session's pending deliveries
 *   (`settle`) deletes its mark when none is pending, or sets the bound from its heads (their `next_at`,
 *   or the end of a claim) and `targets` to theirs, each on condition of the `rev` it read (a fan-out
 *   since changed it, so its targets are never lost).
 */
import { randomUUID } from 'node:crypto';
import { DeleteCommand, UpdateCommand } from '@aws-sdk/lib-dynamodb';
import type { AlertDelivery } from '../alerts.js';
import { cmp } from './alert-items.js';
import { errorName, type Item, type TransactItem } from './items.js';
import { ALERT_DUE_PREFIX, ALERT_SHARDS, keys, NO_SID, PK, SK } from './schema.js';
import type { DynamoPrimitives } from './tokens.js';

/** The due marks of the deliveries' sessions. */
export class DueMarks {
  constructor(private readonly x: DynamoPrimitives) {}

  /** The marks of every shard whose bound is absent or by `now`: one consistent query per shard. */
  async due(now: string): Promise<Item[]> {
    const shards = await Promise.all(
      Array.from({ length: ALERT_SHARDS }, (_, shard) =>
        this.x.queryAll({
          KeyConditionExpression: '#pk = :pk',
          FilterExpression: 'attribute_not_exists(#due) OR #due <= :now',
          ExpressionAttributeNames: { '#pk': PK, '#due': 'due_at' },
          ExpressionAttributeValues: { ':pk': `${ALERT_DUE_PREFIX}${shard}`, ':now': now },
          ConsistentRead: true,
        }),
      ),
    );
    return shards.flat();
  }

  /**
   * For `fanOut`'s transaction: the Put of the mark of each session of the new pending deliveries, its
   * bound the lowest of the stored one and theirs, on condition of the `rev` read (a Get of each mark).
   */
  async puts(pending: readonly AlertDelivery[]): Promise<TransactItem[]> {
    const bySession = new Map<string, AlertDelivery[]>();
    for (const d of pending) {
      const k = `${d.tenant}#${d.sid ?? NO_SID}`;
      bySession.set(k, [...(bySession.get(k) ?? []), d]);
    }
    return Promise.all(
      [...bySession.values()].map(async (ds) => {
        const { tenant, sid } = ds[0]!;
        const key = keys.alertDue(tenant, sid);
        const stored = await this.x.get(key);
        const bounds = ds.map((d) => d.next_at ?? '');
        // a stored mark of unknown targets stays unknown (its session may have others pending)
        const storedTargets = stored ? markTargets(stored) : new Set<string>();
        const targets = storedTargets && new Set([...storedTargets, ...ds.map((d) => d.target_id)]);
        // a stored mark without a bound is due at once: it stays so
        const bound =
          stored && typeof stored.due_at !== 'string'
            ? null
            : [...bounds, ...(stored ? [stored.due_at as string] : [])].sort(cmp)[0]!;
        const item: TransactItem = {
          Put: {
            TableName: this.x.table,
            Item: {
              ...key,
              tenant,
              sid: sid ?? NO_SID,
              rev: randomUUID(),
              ...(bound === null ? {} : { due_at: bound }),
              ...(targets ? { targets } : {}),
            },
            ...(stored
              ? {
                  ConditionExpression: '#rev = :rev',
                  ExpressionAttributeNames: { '#rev': 'rev' },
                  ExpressionAttributeValues: { ':rev': stored.rev },
                }
              : {
                  ConditionExpression: 'attribute_not_exists(#pk)',
                  ExpressionAttributeNames: { '#pk': PK },
                }),
          },
        };
        return item;
      }),
    );
  }

  /** After an attempt of `d`: the session's bound removed and a new `rev` (the mark made if it went). */
  async touch(d: AlertDelivery): Promise<void> {
    await this.x.doc.send(
      new UpdateCommand({
        TableName: this.x.table,
        Key: keys.alertDue(d.tenant, d.sid),
        UpdateExpression: 'SET #rev = :rev, #tenant = :tenant, #sid = :sid REMOVE #due',
        ExpressionAttributeNames: { '#rev': 'rev', '#tenant': 'tenant', '#sid': 'sid', '#due': 'due_at' },
        ExpressionAttributeValues: { ':rev': randomUUID(), ':tenant': d.tenant, ':sid': d.sid ?? NO_SID },
      }),
    );
  }

  /**
   * `mark`'s session read, `heads` the heads of its queues (none: nothing pending): the mark deleted, or
   * its bound set to when the first of them may be listed and its targets to theirs, on condition of the
   * `rev` read (a write since keeps its own).
   */
  async settle(mark: Item, heads: readonly AlertDelivery[], now: string): Promise<void> {
    const ours = {
      TableName: this.x.table,
      Key: { [PK]: mark[PK], [SK]: mark[SK] },
      ConditionExpression: '#rev = :rev',
    };
    try {
      if (heads.length === 0) {
        await this.x.doc.send(
          new DeleteCommand({
            ...ours,
            ExpressionAttributeNames: { '#rev': 'rev' },
            ExpressionAttributeValues: { ':rev': mark.rev },
          }),
        );
        return;
      }
      const bound = heads
        .map((h) => (h.claimed_until !== null && h.claimed_until > now ? h.claimed_until : (h.next_at ?? '')))
        .sort(cmp)[0]!;
      const targets = new Set(heads.map((h) => h.target_id));
      const known = markTargets(mark);
      if (bound === mark.due_at && known && sameSet(known, targets)) return;
      await this.x.doc.send(
        new UpdateCommand({
          ...ours,
          UpdateExpression: 'SET #due = :due, #targets = :targets',
          ExpressionAttributeNames: { '#rev': 'rev', '#due': 'due_at', '#targets': 'targets' },
          ExpressionAttributeValues: { ':rev': mark.rev, ':due': bound, ':targets': targets },
        }),
      );
    } catch (err) {
      if (errorName(err) !== 'ConditionalCheckFailedException') throw err;
    }
  }
}

/** The targets a mark names (a superset of those with pending deliveries in its session), null: unknown. */
export function markTargets(mark: Item): Set<string> | null {
  return mark.targets instanceof Set ? (mark.targets as Set<string>) : null;
}

function sameSet(a: ReadonlySet<string>, b: ReadonlySet<string>): boolean {
  return a.size === b.size && [...a].every((x) => b.has(x));
}
