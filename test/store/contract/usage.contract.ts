/**
 * The usage contract (issue 27, `UsageStore` in lib/store/usage.ts): one suite SQLite and DynamoDB both
 * run (./suite.ts), and test/infra/dynamo-access.test.ts runs again to record what the DynamoDB adapter
 * sends. A writer's record is written on condition of its `upto`; its deltas add to the session's counters
 * and the tenant's buckets (by UTC day, agent, person, model), which are summed over the DynamoDB shards
 * on read. The fold state stored is a real one of lib/log/analyse/usage/fold.ts.
 */
import { expect } from 'vitest';
import { COUNTER_KEYS, newFoldState } from '../../../lib/log/analyse/usage/index.js';
import { newId } from '../../../lib/log/format/ids.js';
import { usageBucketShard } from '../../../lib/store/dynamo/schema.js';
import {
  type StoredUsageCounters,
  type UsageBucket,
  type UsageBucketKey,
  UsageConflictError,
  type UsageStore,
  type WriterUsage,
} from '../../../lib/store/index.js';
import { USAGE_COUNTERS } from '../../../lib/store/usage-counters.js';
import { at } from './records.js';
import { type ContractOptions, runContract } from './suite.js';

/** Counters with every field distinct (`base`, `base + 1`, …), so a swapped or dropped column shows. */
function countersOf(base: number): StoredUsageCounters {
  return Object.fromEntries(COUNTER_KEYS.map((k, i) => [k, base + i])) as unknown as StoredUsageCounters;
}

/** `c` times `f` (a negative `f` retracts). */
function scaled(c: StoredUsageCounters, f: number): StoredUsageCounters {
  return Object.fromEntries(COUNTER_KEYS.map((k) => [k, c[k] * f])) as unknown as StoredUsageCounters;
}

function sum(...list: StoredUsageCounters[]): StoredUsageCounters {
  return Object.fromEntries(
    COUNTER_KEYS.map((k) => [k, list.reduce((n, c) => n + c[k], 0)]),
  ) as unknown as StoredUsageCounters;
}

const key = (
  day: string,
  agent = 'claude-code',
  person = 'priya',
  model = 'claude-sonnet-4-5',
): UsageBucketKey => ({
  day,
  agent,
  person,
  model,
});

const bucket = (k: UsageBucketKey, counters: StoredUsageCounters): UsageBucket => ({ ...k, counters });

/** A writer record after `upto` bytes: a fold state of several shapes, and its buckets. */
function recordOf(upto: number, buckets: UsageBucket[], when = 1): WriterUsage {
  const state = {
    ...newFoldState(),
    agent: 'claude-code',
    people: ['priya', 'jo'],
    recent: [{ id: 'msg_01', at: 1_765_000_000_000_000 }],
    last_at: 1_765_000_000_000_000 + upto,
  };
  return { upto, state, buckets, updated_at: at(when) };
}

/** Buckets sorted by key, for comparing listings without depending on their order. */
const sorted = (list: UsageBucket[]) =>
  [...list].sort((a, b) =>
    JSON.stringify([a.day, a.agent, a.person, a.model]) < JSON.stringify([b.day, b.agent, b.person, b.model])
      ? -1
      : 1,
  );

export function runUsageContract(opts: ContractOptions<UsageStore>): void {
  runContract('usage', opts, (contract) => {
    /** the case's store */
    let store: UsageStore;
    /** A case of this suite, its store in `store`. */
    const it = (title: string, fn: () => Promise<void>) =>
      contract(title, async (s) => {
        store = s;
        await fn();
      });

    it('keeps the counters of totals.ts, in its order', async () => {
      expect(USAGE_COUNTERS).toEqual([...COUNTER_KEYS]);
    });

    it('reads nothing where nothing was applied', async () => {
      const sid = newId('s');
      expect(await store.getWriterUsage('acme', sid, newId('w'))).toBeNull();
      expect(await store.getSessionUsageCounters('acme', sid)).toBeNull();
      expect(await store.getSessionUsageCountersMany('acme', [sid])).toEqual(new Map());
      expect(await store.listWriterUsage('acme', sid)).toEqual(new Map());
      expect(await store.listUsageBuckets('acme', '2000-01-01', '2099-12-31')).toEqual([]);
    });

    it('applies a first change from no record, then the next from the stored upto', async () => {
      const sid = newId('s');
      const w = newId('w');
      const d1 = bucket(key('2026-12-07'), countersOf(10));
      const first = recordOf(120, [d1]);
      await store.applyWriterUsage('acme', sid, w, null, { next: first, deltas: [d1] });
      expect(await store.getWriterUsage('acme', sid, w)).toEqual(first);
      expect(await store.getSessionUsageCounters('acme', sid)).toEqual(d1.counters);
      expect(await store.listUsageBuckets('acme', '2026-12-07', '2026-12-07')).toEqual([d1]);

      const d2 = bucket(key('2026-12-07'), countersOf(1));
      const d3 = bucket(key('2026-12-08', 'claude-code', 'priya', 'claude-opus-4-1'), countersOf(100));
      const second = recordOf(300, [bucket(d1, sum(d1.counters, d2.counters)), d3], 2);
      await store.applyWriterUsage('acme', sid, w, 120, { next: second, deltas: [d2, d3] });
      expect(await store.getWriterUsage('acme', sid, w)).toEqual(second);
      expect(await store.getSessionUsageCounters('acme', sid)).toEqual(
        sum(d1.counters, d2.counters, d3.counters),
      );
      expect(sorted(await store.listUsageBuckets('acme', '2026-12-01', '2026-12-31'))).toEqual(
        sorted([bucket(d1, sum(d1.counters, d2.counters)), d3]),
      );
    });

    it('writes a change without deltas as the record alone: its session gets no counters', async () => {
      const sid = newId('s');
      const w = newId('w');
      await store.applyWriterUsage('acme', sid, w, null, { next: recordOf(40, []), deltas: [] });
      expect((await store.getWriterUsage('acme', sid, w))?.upto).toBe(40);
      expect(await store.getSessionUsageCounters('acme', sid)).toBeNull();
      expect(await store.listUsageBuckets('acme', '2000-01-01', '2099-12-31')).toEqual([]);
    });

    it('refuses a stale expectUpto with the stored upto, and changes nothing', async () => {
      const sid = newId('s');
      const w = newId('w');
      const d = bucket(key('2026-12-07'), countersOf(5));
      const stored = recordOf(200, [d]);
      await store.applyWriterUsage('acme', sid, w, null, { next: stored, deltas: [d] });
      const more = bucket(key('2026-12-07'), countersOf(1_000));
      const change = { next: recordOf(400, [bucket(d, sum(d.counters, more.counters))], 3), deltas: [more] };
      for (const stale of [null, 0, 199, 201, 400]) {
        const err = await store.applyWriterUsage('acme', sid, w, stale, change).catch((e: unknown) => e);
        expect(err, `expectUpto ${stale}`).toBeInstanceOf(UsageConflictError);
        expect((err as UsageConflictError).currentUpto).toBe(200);
      }
      expect(await store.getWriterUsage('acme', sid, w)).toEqual(stored);
      expect(await store.getSessionUsageCounters('acme', sid)).toEqual(d.counters);
      expect(await store.listUsageBuckets('acme', '2026-12-07', '2026-12-07')).toEqual([d]);
      // no record: any expected upto is stale, and the error says there is none
      const absent = newId('w');
      const err = await store
        .applyWriterUsage('acme', sid, absent, 200, change)
        .catch((e: unknown) => e as UsageConflictError);
      expect(err).toBeInstanceOf(UsageConflictError);
      expect((err as UsageConflictError).currentUpto).toBeNull();
      expect(await store.getWriterUsage('acme', sid, absent)).toBeNull();
      expect(await store.getSessionUsageCounters('acme', sid)).toEqual(d.counters);
    });

    it('applies one of two changes from the same upto sent at once, and refuses the other', async () => {
      const sid = newId('s');
      const w = newId('w');
      const d = bucket(key('2026-12-07'), countersOf(7));
      const tries = await Promise.allSettled(
        [1, 2].map((i) =>
          store.applyWriterUsage('acme', sid, w, null, { next: recordOf(50 * i, [d]), deltas: [d] }),
        ),
      );
      expect(tries.filter((t) => t.status === 'fulfilled')).toHaveLength(1);
      const refused = tries.find((t) => t.status === 'rejected') as PromiseRejectedResult;
      expect(refused.reason).toBeInstanceOf(UsageConflictError);
      const kept = await store.getWriterUsage('acme', sid, w);
      expect((refused.reason as UsageConflictError).currentUpto).toBe(kept?.upto);
      // counted once
      expect(await store.getSessionUsageCounters('acme', sid)).toEqual(d.counters);
      expect(await store.listUsageBuckets('acme', '2026-12-07', '2026-12-07')).toEqual([d]);
    });

    it('adds the deltas of writers and sessions up, per session and per bucket', async () => {
      const [s1, s2] = [newId('s'), newId('s')];
      const [w1, w2, w3] = [newId('w'), newId('w'), newId('w')];
      const k = key('2026-12-07');
      const other = key('2026-12-07', 'codex', 'jo', 'gpt-5');
      const a = bucket(k, countersOf(1));
      const b = bucket(k, countersOf(20));
      const c = bucket(other, countersOf(300));
      const e = bucket(k, countersOf(4_000));
      await Promise.all([
        store.applyWriterUsage('acme', s1, w1, null, { next: recordOf(10, [a]), deltas: [a] }),
        store.applyWriterUsage('acme', s1, w2, null, { next: recordOf(10, [b, c]), deltas: [b, c] }),
        store.applyWriterUsage('acme', s2, w3, null, { next: recordOf(10, [e]), deltas: [e] }),
      ]);
      expect(await store.getSessionUsageCounters('acme', s1)).toEqual(
        sum(a.counters, b.counters, c.counters),
      );
      expect(await store.getSessionUsageCounters('acme', s2)).toEqual(e.counters);
      expect(sorted(await store.listUsageBuckets('acme', '2026-12-07', '2026-12-07'))).toEqual(
        sorted([bucket(k, sum(a.counters, b.counters, e.counters)), c]),
      );
      // another tenant's buckets and sessions are apart
      expect(await store.listUsageBuckets('globex', '2026-12-07', '2026-12-07')).toEqual([]);
      expect(await store.getSessionUsageCounters('globex', s1)).toBeNull();
    });

    it('takes negative deltas off, and leaves out a bucket taken back to zero', async () => {
      const sid = newId('s');
      const w = newId('w');
      const kept = bucket(key('2026-12-07'), countersOf(10));
      const gone = bucket(key('2026-12-07', 'claude-code', 'priya', 'unknown-model'), countersOf(3));
      await store.applyWriterUsage('acme', sid, w, null, {
        next: recordOf(10, [kept, gone]),
        deltas: [kept, gone],
      });
      // a message counted again with smaller figures (Claude's last-wins), and the unknown model retracted
      const fix = bucket(kept, scaled(countersOf(1), -1));
      const retract = bucket(gone, scaled(gone.counters, -1));
      const next = recordOf(20, [bucket(kept, sum(kept.counters, fix.counters))], 2);
      await store.applyWriterUsage('acme', sid, w, 10, { next, deltas: [fix, retract] });
      expect(await store.getSessionUsageCounters('acme', sid)).toEqual(sum(kept.counters, fix.counters));
      expect(await store.listUsageBuckets('acme', '2026-12-07', '2026-12-07')).toEqual([
        bucket(kept, sum(kept.counters, fix.counters)),
      ]);
    });

    it('sums a bucket over the sessions of every shard', async () => {
      // sessions in as many of DynamoDB's bucket shards as 40 ids reach (all 8, nearly always)
      const byShard = new Map<number, string>();
      for (let i = 0; i < 40 || byShard.size < 3; i++) {
        const sid = newId('s');
        if (!byShard.has(usageBucketShard(sid))) byShard.set(usageBucketShard(sid), sid);
      }
      const k = key('2026-12-07');
      const each = bucket(k, countersOf(2));
      await Promise.all(
        [...byShard.values()].map((sid) =>
          store.applyWriterUsage('acme', sid, newId('w'), null, {
            next: recordOf(10, [each]),
            deltas: [each],
          }),
        ),
      );
      expect(await store.listUsageBuckets('acme', '2026-12-07', '2026-12-07')).toEqual([
        bucket(k, scaled(each.counters, byShard.size)),
      ]);
    });

    it('lists the days of the range, both ends included, and no day outside', async () => {
      const days = ['2026-11-30', '2026-12-01', '2026-12-02', '2026-12-03', '2026-12-04', 'unknown'];
      const deltas = days.map((d, i) => bucket(key(d), countersOf(i + 1)));
      await store.applyWriterUsage('acme', newId('s'), newId('w'), null, {
        next: recordOf(10, deltas),
        deltas,
      });
      const listed = async (from: string, to: string) =>
        (await store.listUsageBuckets('acme', from, to)).map((b) => b.day).sort();
      expect(await listed('2026-12-01', '2026-12-03')).toEqual(['2026-12-01', '2026-12-02', '2026-12-03']);
      expect(await listed('2026-12-04', '2026-12-04')).toEqual(['2026-12-04']);
      expect(await listed('2026-11-01', '2026-11-29')).toEqual([]);
      expect(await listed('2026-12-05', '2026-12-31')).toEqual([]);
      expect(await listed('2026-12-03', '2026-12-01')).toEqual([]);
      expect(await listed('2026-01-01', '2026-12-31')).toEqual(days.slice(0, 5));
      expect((await store.listUsageBuckets('acme', '2026-12-02', '2026-12-02'))[0]?.counters).toEqual(
        countersOf(3),
      );
    });

    it('keeps names with #, %, ~, /, unicode, empty and long names apart as bucket keys', async () => {
      const long = (c: string, last: string) => c.repeat(199) + last;
      const keysUsed: UsageBucketKey[] = [
        // without escaping, these three would make one sort key `…#a#b#c`
        key('2026-12-07', 'a#b', 'c', 'm'),
        key('2026-12-07', 'a', 'b#c', 'm'),
        key('2026-12-07', 'a', 'b', 'c#m'),
        // an escape's own characters
        key('2026-12-07', 'a%23b', 'c', 'm'),
        key('2026-12-07', '~a', 'c', 'm'),
        key('2026-12-07', 'team/bot', 'ana.müller@example.org', 'anthropic/claude-sonnet-4-5'),
        key('2026-12-07', '🤖 reviewer', '李雷', 'gpt-5'),
        key('2026-12-07', '', '', ''),
        key('2026-12-07', 'claude-code', '', ''),
        key('2026-12-07', '', 'priya', ''),
        // 200 characters of three UTF-8 bytes each, differing in the last one only
        key('2026-12-07', long('漢', '字'), long('名', '前'), long('模', '型')),
        key('2026-12-07', long('漢', '語'), long('名', '前'), long('模', '型')),
        key('2026-12-07', long('#', '#'), long('%', '~'), '🤖'.repeat(100)),
      ];
      const deltas = keysUsed.map((k, i) => bucket(k, countersOf(i * 100)));
      const sid = newId('s');
      const w = newId('w');
      await store.applyWriterUsage('acme', sid, w, null, { next: recordOf(10, deltas), deltas });
      expect(sorted(await store.listUsageBuckets('acme', '2026-12-07', '2026-12-07'))).toEqual(
        sorted(deltas),
      );
      expect((await store.getWriterUsage('acme', sid, w))?.buckets).toEqual(deltas);
    });

    it("lists every writer record of a session by writer id, and no other session's", async () => {
      const [sid, other] = [newId('s'), newId('s')];
      const records = new Map<string, WriterUsage>();
      for (let i = 0; i < 3; i++) {
        const w = newId('w');
        const d = bucket(key('2026-12-07', `agent-${i}`), countersOf(i));
        const r = recordOf(10 * (i + 1), [d], i);
        records.set(w, r);
        await store.applyWriterUsage('acme', sid, w, null, { next: r, deltas: [d] });
      }
      await store.applyWriterUsage('acme', other, newId('w'), null, { next: recordOf(5, []), deltas: [] });
      // a writer's later record replaces its first in the listing
      const [w0] = records.keys();
      const later = recordOf(99, [], 9);
      await store.applyWriterUsage('acme', sid, w0!, 10, { next: later, deltas: [] });
      records.set(w0!, later);
      expect(await store.listWriterUsage('acme', sid)).toEqual(records);
      expect((await store.listWriterUsage('acme', other)).size).toBe(1);
    });

    it('reads several sessions counters at once, by sid, leaving out those without usage', async () => {
      const [s1, s2, none] = [newId('s'), newId('s'), newId('s')];
      const d1 = bucket(key('2026-12-07'), countersOf(1));
      const d2 = bucket(key('2026-12-07'), countersOf(2));
      await store.applyWriterUsage('acme', s1, newId('w'), null, { next: recordOf(1, [d1]), deltas: [d1] });
      await store.applyWriterUsage('acme', s2, newId('w'), null, { next: recordOf(1, [d2]), deltas: [d2] });
      const many = await store.getSessionUsageCountersMany('acme', [s1, none, s2, s1]);
      expect(many).toEqual(
        new Map([
          [s1, d1.counters],
          [s2, d2.counters],
        ]),
      );
      expect(await store.getSessionUsageCountersMany('acme', [])).toEqual(new Map());
    });
  });
}
