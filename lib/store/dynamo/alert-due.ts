/**
 * The worker's listing of due deliveries on DynamoDB (issue 28, `listDueDeliveries` of dynamo/alerts.ts;
 * the port: ../alerts.ts): the sessions the due marks (dynamo/alert-marks.ts) say may be due, read a few
 * at a time, each session's queue heads taken from its partition. A file of its own so that
 * dynamo/alerts.ts stays readable.
 */
import type { AlertDelivery } from '../alerts.js';
import { cmp, parseDelivery } from './alert-items.js';
import { type DueMarks, markTargets } from './alert-marks.js';
import type { Item } from './items.js';
import { alertSessionPk, NO_SID, PK, SK } from './schema.js';
import type { DynamoPrimitives } from './tokens.js';

/** How many sessions' deliveries a listing reads at once. */
const SESSION_READS = 16;
/** The most sessions one listing reads (a query each): 16 rounds of `SESSION_READS`. */
export const MAX_SESSION_READS = 256;

/** Due deliveries, as `listDueDeliveries` lists them. */
export class DueListing {
  constructor(
    private readonly x: DynamoPrimitives,
    private readonly marks: DueMarks,
  ) {}

  /**
   * The due marks of every shard whose bound is by `now` (one consistent query each), earliest bound first
   * (a mark without one first of all); then, 16 at a time, each such session's pending deliveries (one
   * consistent query of its partition, filtered on `status`): the first of each target's range is its
   * queue's head, listed when due and unclaimed. A mark whose targets (`targets`) are all in `exclude`, or
   * have `perTarget` listed already, is passed over unread, so that a target with a backlog of sessions
   * (a hanging one) costs no reads and takes no places. It stops once `limit` are listed whose `next_at`
   * is by the next mark's bound, and after `MAX_SESSION_READS` (256) session queries in any case: past
   * that, a listing holds the earliest marks' heads only. Each session read has its mark settled
   * (`DueMarks.settle`): deleted when none is pending, else bound to when the first head may be listed,
   * so that a session whose queues all wait (a retry an hour away, a claim) is not read again before.
   */
  async list(
    now: string,
    limit: number,
    o: { perTarget?: number; exclude?: readonly string[] } = {},
  ): Promise<AlertDelivery[]> {
    const max = Math.max(0, limit);
    const perTarget = o.perTarget ?? Number.POSITIVE_INFINITY;
    if (max === 0 || perTarget <= 0) return [];
    const excluded = new Set(o.exclude ?? []);
    const bound = (m: Item) => (typeof m.due_at === 'string' ? m.due_at : '');
    const marks = (await this.marks.due(now)).sort(
      (a, b) =>
        cmp(bound(a), bound(b)) || cmp(String(a[PK]), String(b[PK])) || cmp(String(a[SK]), String(b[SK])),
    );
    const due: AlertDelivery[] = [];
    const listed = new Map<string, number>();
    const full = (key: string) => excluded.has(key) || (listed.get(key) ?? 0) >= perTarget;
    const passedOver = (m: Item) => {
      const targets = markTargets(m);
      return targets !== null && [...targets].every((t) => full(`${m.tenant as string}/${t}`));
    };
    let reads = 0;
    let i = 0;
    while (i < marks.length && reads < MAX_SESSION_READS) {
      const batch: Item[] = [];
      while (i < marks.length && batch.length < SESSION_READS && reads + batch.length < MAX_SESSION_READS) {
        const m = marks[i++]!;
        if (!passedOver(m)) batch.push(m);
      }
      reads += batch.length;
      for (const heads of await Promise.all(batch.map((m) => this.heads(m, now)))) {
        for (const d of heads) {
          const key = `${d.tenant}/${d.target_id}`;
          if (excluded.has(key)) continue;
          due.push(d);
          listed.set(key, (listed.get(key) ?? 0) + 1);
        }
      }
      if (i < marks.length) {
        // enough when the `max`th listed is due by the next mark's bound (whose heads come no earlier)
        const kth = capped(due, perTarget)[max - 1];
        if (kth && (kth.next_at ?? '') <= bound(marks[i]!)) break;
      }
    }
    return capped(due, perTarget).slice(0, max);
  }

  /**
   * The due, unclaimed heads of one marked session's queues; its mark settled. A pending item that does
   * not parse still heads its queue (the queue waits behind it, as on SQLite) but is never listed.
   */
  private async heads(mark: Item, now: string): Promise<AlertDelivery[]> {
    const tenant = mark.tenant as string;
    const sid = mark.sid === NO_SID ? null : (mark.sid as string);
    const pending = await this.x.queryAll({
      KeyConditionExpression: '#pk = :pk AND begins_with(#sk, :d)',
      FilterExpression: '#status = :pending',
      ExpressionAttributeNames: { '#pk': PK, '#sk': SK, '#status': 'status' },
      ExpressionAttributeValues: { ':pk': alertSessionPk(tenant, sid), ':d': 'D#', ':pending': 'pending' },
      ConsistentRead: true,
    });
    const heads = new Map<string, AlertDelivery | null>();
    // sorted by sort key `D#{target}#…`: each target's range in `order`, so its first pending item is its head
    for (const item of pending) {
      const target = String(item[SK]).split('#')[1] ?? '';
      if (!heads.has(target)) heads.set(target, parseDelivery(item));
    }
    const parsed = [...heads.values()].filter((d): d is AlertDelivery => d !== null);
    await this.marks.settle(mark, parsed, now);
    return parsed.filter(
      (d) => d.next_at !== null && d.next_at <= now && (d.claimed_until === null || d.claimed_until <= now),
    );
  }
}

/**
 * Due deliveries in the listing's order (earliest `next_at`, then tenant, target, session and `order`),
 * at most `perTarget` of each target: its earliest.
 */
function capped(list: readonly AlertDelivery[], perTarget: number): AlertDelivery[] {
  const taken = new Map<string, number>();
  return inOrder(list).filter((d) => {
    const key = `${d.tenant}/${d.target_id}`;
    const n = (taken.get(key) ?? 0) + 1;
    taken.set(key, n);
    return n <= perTarget;
  });
}

function inOrder(list: readonly AlertDelivery[]): AlertDelivery[] {
  return [...list].sort(
    (a, b) =>
      cmp(a.next_at ?? '', b.next_at ?? '') ||
      cmp(a.tenant, b.tenant) ||
      cmp(a.target_id, b.target_id) ||
      cmp(a.sid ?? '', b.sid ?? '') ||
      cmp(a.order, b.order),
  );
}
