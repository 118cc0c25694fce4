/**
 * The alerts contract (issue 28, `AlertStore` in lib/store/alerts.ts): targets written on condition of
 * their version; outbox events written with the change that fires them (`putStatus`, `putWork`,
 * `claimKey`, `advanceWriter`) and not when it fails, once per id; the worker's steps (due events, the
 * fan-out into deliveries, due heads of each (target, session) queue, at most so many of one target and
 * none of a busy one, exclusive claims, the outcome); the limit of targets as a condition of the write,
 * concurrent adds included; listings; tenants apart. Run on every adapter (./suite.ts), and by test/infra/dynamo-access.test.ts to
 * record what the DynamoDB adapter sends.
 */
import { expect } from 'vitest';
import { newId } from '../../../lib/log/format/ids.js';
import {
  type AlertDelivery,
  type AlertTarget,
  type AttemptResult,
  LimitReachedError,
  StateConflictError,
  type StateStore,
} from '../../../lib/store/index.js';
import { delivered, deliveryOf, eventOf, targetOf, ulid } from './alert-records.js';
import { advanceOf, at, statusOf, workOf } from './records.js';
import { type ContractOptions, runContract } from './suite.js';

/** Sorted by (target, event), for comparing listings whose order is not the point. */
const byKey = (list: AlertDelivery[]) =>
  [...list].sort((a, b) => (`${a.target_id}${a.event_id}` < `${b.target_id}${b.event_id}` ? -1 : 1));

const ids = (list: { id: string }[]) => list.map((x) => x.id);

export function runAlertsContract(opts: ContractOptions<StateStore>): void {
  runContract('alerts', opts, (contract) => {
    contract('writes targets on condition of their version; lists them oldest first; deletes', async (s) => {
      const a = targetOf('acme', 2);
      const b = targetOf('acme', 1, { format: 'slack', events: [], agents: [], label: null });
      await s.putAlertTarget(a);
      await s.putAlertTarget(b);
      expect(await s.getAlertTarget('acme', a.id)).toEqual(a);
      expect(await s.listAlertTargets('acme')).toEqual([b, a]);
      await expect(s.putAlertTarget(a)).rejects.toBeInstanceOf(StateConflictError);
      await expect(s.putAlertTarget({ ...a, version: 3 })).rejects.toBeInstanceOf(StateConflictError);
      const rotated: AlertTarget = {
        ...a,
        secrets: [
          { sealed: 'sealed:new', until: null },
          { sealed: 'sealed:abc', until: at(90) },
        ],
        version: 2,
      };
      await s.putAlertTarget(rotated);
      expect(await s.getAlertTarget('acme', a.id)).toEqual(rotated);
      await s.deleteAlertTarget('acme', a.id);
      await s.deleteAlertTarget('acme', a.id);
      expect(await s.getAlertTarget('acme', a.id)).toBeNull();
      expect(await s.listAlertTargets('acme')).toEqual([b]);
      // a target made again after its deletion starts at version 1
      await s.putAlertTarget(a);
      expect(await s.getAlertTarget('acme', a.id)).toEqual(a);
    });

    contract(
      'writes the events of a status report with it, and none when its version conflicts',
      async (s) => {
        const sid = newId('s');
        const e = eventOf('acme', 5, { sid });
        await s.putStatus(statusOf('acme', sid, 5), [e]);
        expect(await s.listDueEvents(at(5), 10)).toEqual([e]);
        const lost = eventOf('acme', 6, { sid });
        await expect(s.putStatus(statusOf('acme', sid, 6), [lost])).rejects.toBeInstanceOf(
          StateConflictError,
        );
        await s.putStatus(statusOf('acme', sid, 7, 2));
        expect(await s.listDueEvents(at(100), 10)).toEqual([e]);
        expect((await s.getStatus('acme', sid))?.version).toBe(2);
      },
    );

    contract('writes the events of a work item with it, and none when its version conflicts', async (s) => {
      const sid = newId('s');
      const item = workOf('acme', sid, 3);
      const watch = eventOf('acme', 3, {
        sid,
        kind: 'work.unknown',
        due_at: item.lease_expires_at,
        data: {},
        watch: { work_id: item.id },
      });
      await s.putWork(item, [watch]);
      expect(await s.getWork('acme', item.id)).toEqual(item);
      expect(await s.listDueEvents(at(3), 10)).toEqual([]);
      expect(await s.listDueEvents(item.lease_expires_at, 10)).toEqual([watch]);
      const lost = eventOf('acme', 4, { sid });
      await expect(s.putWork(item, [lost])).rejects.toBeInstanceOf(StateConflictError);
      expect(await s.listDueEvents(at(10_000), 10)).toEqual([watch]);
    });

    contract('writes the events of a key claim only with the call that claims it', async (s) => {
      const first = eventOf('acme', 1, { kind: 'quota.near', sid: null, data: { percent: 80 } });
      const second = eventOf('acme', 2, { kind: 'quota.near', sid: null, data: { percent: 80 } });
      expect(await s.claimKey('acme', 'alerts:quota', '2026-01:80', 'one', [first])).toBe('one');
      expect(await s.claimKey('acme', 'alerts:quota', '2026-01:80', 'two', [second])).toBe('one');
      expect(await s.listDueEvents(at(10), 10)).toEqual([first]);
      // of concurrent claims with events, only the winner's are written
      const racing = Array.from({ length: 5 }, (_, i) => eventOf('acme', 20 + i, { sid: null }));
      const answers = await Promise.all(
        racing.map((e, i) => s.claimKey('acme', 'alerts:quota', '2026-01:90', `c${i}`, [e])),
      );
      const winner = racing[Number(answers[0]!.slice(1))]!;
      expect(await s.listDueEvents(at(100), 10)).toEqual([first, winner]);
    });

    contract('writes the events of a writer advance with it, and none when it conflicts', async (s) => {
      const [sid, w] = [newId('s'), newId('w')];
      const damaged = eventOf('acme', 2, { kind: 'record.damaged', sid });
      await s.advanceWriter('acme', sid, w, 0, {
        ...advanceOf(0, 40, { lines: 2, when: 2 }),
        outbox: [damaged],
      });
      const lost = eventOf('acme', 3, { kind: 'record.damaged', sid });
      const stale = { ...advanceOf(0, 40, { lines: 2, when: 3 }), outbox: [lost] };
      await expect(s.advanceWriter('acme', sid, w, 0, stale)).rejects.toBeInstanceOf(StateConflictError);
      await s.advanceWriter('acme', sid, w, 40, advanceOf(40, 10, { lines: 3, when: 4 }));
      expect((await s.getWriter('acme', sid, w))?.length).toBe(50);
      expect(await s.listDueEvents(at(100), 10)).toEqual([damaged]);
    });

    contract('keeps one event per id, however often it is written', async (s) => {
      const sid = newId('s');
      const e = eventOf('acme', 1, { sid });
      await s.putOutboxEvents([e]);
      await s.putOutboxEvents([e]);
      await s.putStatus(statusOf('acme', sid, 1), [e]);
      expect(await s.listDueEvents(at(1), 10)).toEqual([e]);
      // an id twice in one change's events: written once, as first given
      const twice = eventOf('acme', 1, { sid });
      await s.putStatus(statusOf('acme', sid, 1, 2), [twice, { ...twice, data: { second: true } }]);
      expect(await s.listDueEvents(at(1), 10)).toEqual([e, twice].sort((a, b) => (a.id < b.id ? -1 : 1)));
      // the same id in another tenant is another event
      const other = { ...e, tenant: 'globex' };
      await s.putOutboxEvents([other]);
      expect(await s.listDueEvents(at(1), 10)).toEqual(
        [e, twice, other].sort((a, b) => (`${a.tenant} ${a.id}` < `${b.tenant} ${b.id}` ? -1 : 1)),
      );
    });

    contract('lists events due by now, of any tenant, earliest first, at most limit', async (s) => {
      const events = [
        eventOf('acme', 30),
        eventOf('globex', 10),
        eventOf('acme', 20, { due_at: at(50) }),
        eventOf('acme', 40),
      ];
      await s.putOutboxEvents(events);
      expect(ids(await s.listDueEvents(at(5), 10))).toEqual([]);
      expect(ids(await s.listDueEvents(at(30), 10))).toEqual(ids([events[1]!, events[0]!]));
      expect(ids(await s.listDueEvents(at(60), 10))).toEqual(
        ids([events[1]!, events[0]!, events[3]!, events[2]!]),
      );
      expect(ids(await s.listDueEvents(at(60), 2))).toEqual(ids([events[1]!, events[0]!]));
    });

    contract('reschedules an event; an absent one, or another tenant’s, is not made', async (s) => {
      const e = eventOf('acme', 10);
      await s.putOutboxEvents([e]);
      await s.rescheduleEvent('acme', e.id, at(70));
      expect(await s.listDueEvents(at(69), 10)).toEqual([]);
      expect(await s.listDueEvents(at(70), 10)).toEqual([{ ...e, due_at: at(70) }]);
      await s.rescheduleEvent('globex', e.id, at(5));
      await s.rescheduleEvent('acme', `msg_${ulid()}`, at(5));
      expect(await s.listDueEvents(at(69), 10)).toEqual([]);
      expect(await s.listDueEvents(at(1000), 10)).toHaveLength(1);
    });

    contract('fans an event out into deliveries and removes it, once', async (s) => {
      const [t1, t2] = [targetOf('acme', 1), targetOf('acme', 2)];
      const e = eventOf('acme', 10);
      await s.putOutboxEvents([e]);
      const ds = [deliveryOf(e, t1.id), deliveryOf(e, t2.id, 60)];
      // a pair given twice is made once, as first given
      await s.fanOut(e, [...ds, { ...ds[0]!, attempts: 9 }]);
      expect(await s.listDueEvents(at(1000), 10)).toEqual([]);
      expect(byKey(await s.listDeliveries('acme', { sid: e.sid!, limit: 10 }))).toEqual(byKey(ds));
      // again (another worker's fan-out of the same event): nothing changes
      await s.fanOut(e, [{ ...ds[0]!, attempts: 7 }]);
      expect(byKey(await s.listDeliveries('acme', { sid: e.sid!, limit: 10 }))).toEqual(byKey(ds));
      // the event written again (a retried change) fans out to a new target only; the existing pair stays
      const t3 = targetOf('acme', 3);
      await s.putOutboxEvents([e]);
      const more = [{ ...ds[0]!, attempts: 7 }, deliveryOf(e, t3.id)];
      await s.fanOut(e, more);
      expect(byKey(await s.listDeliveries('acme', { sid: e.sid!, limit: 10 }))).toEqual(
        byKey([...ds, more[1]!]),
      );
      expect(await s.listDueEvents(at(1000), 10)).toEqual([]);
      // an event with no matching target leaves none
      const quiet = eventOf('acme', 11);
      await s.putOutboxEvents([quiet]);
      await s.fanOut(quiet, []);
      expect(await s.listDueEvents(at(1000), 10)).toEqual([]);
    });

    contract(
      'lists due deliveries: the head of each (target, session) queue, due and unclaimed',
      async (s) => {
        const [t1, t2] = ['at_1'.padEnd(29, 'A'), 'at_2'.padEnd(29, 'B')];
        const sid = newId('s');
        const [e1, e2, e3] = [10, 20, 30].map((w) => eventOf('acme', w, { sid }));
        const tenantWide = eventOf('globex', 15, { sid: null, kind: 'budget.crossed' });
        for (const e of [e1!, e2!, e3!, tenantWide]) await s.putOutboxEvents([e]);
        // e2 to t1 and e3 to t2 fanned out before the older e1 (delivered in order all the same)
        await s.fanOut(e3!, [deliveryOf(e3!, t1), deliveryOf(e3!, t2)]);
        await s.fanOut(e2!, [deliveryOf(e2!, t1)]);
        await s.fanOut(e1!, [deliveryOf(e1!, t1), deliveryOf(e1!, t2, 100)]);
        await s.fanOut(tenantWide, [deliveryOf(tenantWide, t1)]);
        const key = (d: AlertDelivery) => `${d.target_id}:${d.event_id}`;
        // t1's queue: e1 first; t2's: e1, not due before 110, holds e3 back
        expect((await s.listDueDeliveries(at(5), 10)).map(key)).toEqual([]);
        expect((await s.listDueDeliveries(at(40), 10)).map(key)).toEqual([
          `${t1}:${e1!.id}`,
          `${t1}:${tenantWide.id}`,
        ]);
        expect((await s.listDueDeliveries(at(40), 1)).map(key)).toEqual([`${t1}:${e1!.id}`]);
        const heads = await s.listDueDeliveries(at(110), 10);
        expect(heads.map(key)).toEqual([`${t1}:${e1!.id}`, `${t1}:${tenantWide.id}`, `${t2}:${e1!.id}`]);
        expect(heads[0]).toEqual(deliveryOf(e1!, t1));
        // claimed: not listed until its claim ends
        const head = heads[0]!;
        expect(await s.claimDelivery(head, at(110), at(140))).toBe(true);
        expect((await s.listDueDeliveries(at(139), 10)).map(key)).not.toContain(key(head));
        expect((await s.listDueDeliveries(at(140), 10)).map(key)).toContain(key(head));
        // finished: the next of its queue is the head
        await s.finishAttempt(head, delivered(head, 111));
        expect((await s.listDueDeliveries(at(140), 10)).map(key)).toEqual([
          `${t1}:${tenantWide.id}`,
          `${t1}:${e2!.id}`,
          `${t2}:${e1!.id}`,
        ]);
        // a retry due later keeps its queue waiting
        const d2 = deliveryOf(e2!, t1);
        expect(await s.claimDelivery(d2, at(140), at(170))).toBe(true);
        await s.finishAttempt(d2, {
          status: 'pending',
          attempts: 1,
          next_at: at(300),
          last_status: 503,
          last_error: 'Service Unavailable',
          delivered_at: null,
          skipped_reason: null,
        });
        expect((await s.listDueDeliveries(at(299), 10)).map(key)).not.toContain(`${t1}:${e3!.id}`);
        const retried = (await s.listDueDeliveries(at(300), 10)).find((d) => d.event_id === e2!.id);
        expect(retried).toMatchObject({
          attempts: 1,
          next_at: at(300),
          last_status: 503,
          claimed_until: null,
        });
        // every queue finished: nothing is due, at any time after
        for (const d of await s.listDeliveries('acme', { sid, limit: 10 })) {
          if (d.status !== 'pending') continue;
          await s.finishAttempt(d, { ...delivered(d, 400), status: 'dead', delivered_at: null });
        }
        await s.finishAttempt(deliveryOf(tenantWide, t1), delivered(deliveryOf(tenantWide, t1), 400));
        expect(await s.listDueDeliveries(at(10_000), 10)).toEqual([]);
        expect(await s.listDueDeliveries(at(10_000), 10)).toEqual([]);
      },
    );

    contract(
      'lists at most perTarget due heads of one target and none of an excluded one: a backlog holds no one back',
      async (s) => {
        const [a, b] = [`at_${ulid()}`, `at_${ulid()}`];
        // a's backlog: 20 sessions due (more than the listing's limit), before b's 2 and globex's 1 (same id as a)
        const backlog = Array.from({ length: 20 }, (_, i) => eventOf('acme', 10 + i));
        const later = [eventOf('acme', 50), eventOf('acme', 51)];
        const theirs = eventOf('globex', 5);
        await s.putOutboxEvents([...backlog, ...later, theirs]);
        for (const e of backlog) await s.fanOut(e, [deliveryOf(e, a)]);
        for (const e of later) await s.fanOut(e, [deliveryOf(e, b)]);
        await s.fanOut(theirs, [deliveryOf(theirs, a)]);
        const key = (d: AlertDelivery) => `${d.tenant}/${d.target_id}:${d.event_id}`;
        const of = (tenant: string, target: string, es: { id: string }[]) =>
          es.map((e) => `${tenant}/${target}:${e.id}`);
        // without options: the earliest 10, all but one of them a's
        expect((await s.listDueDeliveries(at(100), 10)).map(key)).toEqual([
          ...of('globex', a, [theirs]),
          ...of('acme', a, backlog.slice(0, 9)),
        ]);
        // at most 3 of one target (the earliest 3), in the listing's order
        expect((await s.listDueDeliveries(at(100), 10, { perTarget: 3 })).map(key)).toEqual([
          ...of('globex', a, [theirs]),
          ...of('acme', a, backlog.slice(0, 3)),
          ...of('acme', b, later),
        ]);
        expect((await s.listDueDeliveries(at(100), 3, { perTarget: 3 })).map(key)).toEqual([
          ...of('globex', a, [theirs]),
          ...of('acme', a, backlog.slice(0, 2)),
        ]);
        // a busy target left out: acme's only, not globex's target of the same id
        expect((await s.listDueDeliveries(at(100), 10, { exclude: [`acme/${a}`] })).map(key)).toEqual([
          ...of('globex', a, [theirs]),
          ...of('acme', b, later),
        ]);
        expect(
          (
            await s.listDueDeliveries(at(100), 10, { perTarget: 1, exclude: [`acme/${a}`, 'acme/at_other'] })
          ).map(key),
        ).toEqual([...of('globex', a, [theirs]), ...of('acme', b, later.slice(0, 1))]);
        expect(
          await s.listDueDeliveries(at(100), 10, { exclude: [`acme/${a}`, `acme/${b}`, `globex/${a}`] }),
        ).toEqual([]);
        // a claimed head takes no place: the next of a's backlog is listed in its stead
        const first = deliveryOf(backlog[0]!, a);
        expect(await s.claimDelivery(first, at(100), at(200))).toBe(true);
        expect((await s.listDueDeliveries(at(100), 10, { perTarget: 2 })).map(key)).toEqual([
          ...of('globex', a, [theirs]),
          ...of('acme', a, backlog.slice(1, 3)),
          ...of('acme', b, later),
        ]);
      },
    );

    contract(
      'writes a new target only while its tenant has fewer than maxTargets, counted with the write',
      async (s) => {
        const made = [targetOf('acme', 1), targetOf('acme', 2)];
        // made without a limit: counted all the same
        await s.putAlertTarget(made[0]!);
        await s.putAlertTarget(made[1]!, { maxTargets: 3 });
        const third = targetOf('acme', 3);
        await s.putAlertTarget(third, { maxTargets: 3 });
        const fourth = targetOf('acme', 4);
        const refused = await s.putAlertTarget(fourth, { maxTargets: 3 }).catch((e: unknown) => e);
        expect(refused).toBeInstanceOf(LimitReachedError);
        expect((refused as LimitReachedError).limit).toBe(3);
        expect(await s.getAlertTarget('acme', fourth.id)).toBeNull();
        // a conflict is a conflict, full or not; a change of a target is no new one
        await expect(s.putAlertTarget(third, { maxTargets: 3 })).rejects.toBeInstanceOf(StateConflictError);
        await s.putAlertTarget({ ...third, label: 'changed', version: 2 }, { maxTargets: 3 });
        // another tenant has its own count
        await s.putAlertTarget(targetOf('globex', 1), { maxTargets: 1 });
        // a deletion makes room, once: deleting it again, or an absent one, makes none
        await s.deleteAlertTarget('acme', made[0]!.id);
        await s.deleteAlertTarget('acme', made[0]!.id);
        await s.deleteAlertTarget('acme', `at_${ulid()}`);
        await s.putAlertTarget(fourth, { maxTargets: 3 });
        await expect(s.putAlertTarget(targetOf('acme', 5), { maxTargets: 3 })).rejects.toBeInstanceOf(
          LimitReachedError,
        );
        expect(ids(await s.listAlertTargets('acme'))).toEqual(ids([made[1]!, third, fourth]));
        await expect(s.putAlertTarget(targetOf('acme', 6), { maxTargets: 0 })).rejects.toBeInstanceOf(
          LimitReachedError,
        );
      },
    );

    contract('of twenty concurrent adds under a limit of twelve, exactly twelve are made', async (s) => {
      const adds = Array.from({ length: 20 }, (_, i) => targetOf('race', i));
      const answers = await Promise.allSettled(adds.map((t) => s.putAlertTarget(t, { maxTargets: 12 })));
      const made = answers.filter((a) => a.status === 'fulfilled');
      const refused = answers.flatMap((a) => (a.status === 'rejected' ? [a.reason] : []));
      expect(made).toHaveLength(12);
      expect(refused).toHaveLength(8);
      for (const r of refused) expect(r).toBeInstanceOf(LimitReachedError);
      expect(await s.listAlertTargets('race')).toHaveLength(12);
    });

    contract('claims a delivery for one worker: of two concurrent claims exactly one wins', async (s) => {
      const e = eventOf('acme', 10);
      await s.putOutboxEvents([e]);
      const d = deliveryOf(e, `at_${ulid()}`);
      await s.fanOut(e, [d]);
      const wins = await Promise.all([1, 2].map(() => s.claimDelivery(d, at(10), at(40))));
      expect(wins.filter(Boolean)).toHaveLength(1);
      expect(await s.claimDelivery(d, at(39), at(70))).toBe(false);
      // a worker killed mid-send: the next takes it after the claim
      expect(await s.claimDelivery(d, at(40), at(70))).toBe(true);
      const [held] = await s.listDeliveries('acme', { sid: e.sid!, limit: 1 });
      expect(held?.claimed_until).toBe(at(70));
      // a stale copy (at other attempts) or a finished one is not claimed
      await s.finishAttempt(d, {
        ...delivered(d, 41),
        status: 'pending',
        next_at: at(50),
        delivered_at: null,
      });
      expect(await s.claimDelivery(d, at(80), at(90))).toBe(false);
      const now = { ...d, attempts: 1 };
      expect(await s.claimDelivery(now, at(80), at(90))).toBe(true);
      await s.finishAttempt(now, delivered(now, 81));
      expect(await s.claimDelivery({ ...d, attempts: 2 }, at(100), at(110))).toBe(false);
    });

    contract('records an attempt under its claim; a stale one is refused', async (s) => {
      const e = eventOf('acme', 10);
      await s.putOutboxEvents([e]);
      const d = deliveryOf(e, `at_${ulid()}`, 30);
      await s.fanOut(e, [d]);
      expect(await s.claimDelivery(d, at(40), at(70))).toBe(true);
      const skipped: AttemptResult = {
        status: 'skipped',
        attempts: 0,
        next_at: null,
        last_status: null,
        last_error: null,
        delivered_at: null,
        skipped_reason: 'the state changed before after_seconds',
      };
      await s.finishAttempt(d, skipped);
      expect(await s.listDeliveries('acme', { target: d.target_id, limit: 5 })).toEqual([
        { ...d, ...skipped, claimed_until: null },
      ]);
      await expect(s.finishAttempt(d, delivered(d, 50))).rejects.toBeInstanceOf(StateConflictError);
      expect((await s.listDeliveries('acme', { target: d.target_id, limit: 5 }))[0]?.status).toBe('skipped');
    });

    contract('lists deliveries of a target or of a session, newest first, at most limit', async (s) => {
      const [t1, t2] = [`at_${ulid()}`, `at_${ulid()}`];
      const [s1, s2] = [newId('s'), newId('s')];
      const events = [
        eventOf('acme', 10, { sid: s1 }),
        eventOf('acme', 20, { sid: s2 }),
        eventOf('acme', 30, { sid: s1 }),
      ];
      await s.putOutboxEvents(events);
      for (const e of events) await s.fanOut(e, [deliveryOf(e, t1), deliveryOf(e, t2)]);
      const pairs = (list: AlertDelivery[]) => list.map((d) => `${d.target_id}:${d.event_id}`);
      const [a, b, c] = events.map((e) => e.id);
      expect(pairs(await s.listDeliveries('acme', { target: t1, limit: 10 }))).toEqual(
        [c, b, a].map((id) => `${t1}:${id}`),
      );
      expect(pairs(await s.listDeliveries('acme', { target: t2, limit: 2 }))).toEqual(
        [c, b].map((id) => `${t2}:${id}`),
      );
      const [first, second] = [t1, t2].sort();
      expect(pairs(await s.listDeliveries('acme', { sid: s1, limit: 10 }))).toEqual([
        `${first}:${c}`,
        `${second}:${c}`,
        `${first}:${a}`,
        `${second}:${a}`,
      ]);
      expect(pairs(await s.listDeliveries('acme', { sid: s1, limit: 1 }))).toEqual([`${first}:${c}`]);
      expect(pairs(await s.listDeliveries('acme', { sid: s1, target: t2, limit: 10 }))).toEqual([
        `${t2}:${c}`,
        `${t2}:${a}`,
      ]);
      // a deleted target's deliveries go with it
      await s.deleteAlertTarget('acme', t1);
      expect(await s.listDeliveries('acme', { target: t1, limit: 10 })).toEqual([]);
      expect(pairs(await s.listDeliveries('acme', { sid: s1, limit: 10 }))).toEqual([
        `${t2}:${c}`,
        `${t2}:${a}`,
      ]);
      expect((await s.listDueDeliveries(at(1000), 10)).map((d) => d.target_id)).toEqual([t2, t2]);
    });

    contract('keeps tenants apart', async (s) => {
      const t = targetOf('acme', 1);
      await s.putAlertTarget(t);
      const e = eventOf('acme', 10);
      await s.putOutboxEvents([e]);
      await s.fanOut(e, [deliveryOf(e, t.id)]);
      expect(await s.getAlertTarget('globex', t.id)).toBeNull();
      expect(await s.listAlertTargets('globex')).toEqual([]);
      expect(await s.listDeliveries('globex', { target: t.id, limit: 10 })).toEqual([]);
      expect(await s.listDeliveries('globex', { sid: e.sid!, limit: 10 })).toEqual([]);
      // another tenant's fan-out of the same ids, deletion and claims touch nothing of acme's
      const theirs = { ...e, tenant: 'globex' };
      await s.fanOut(theirs, [{ ...deliveryOf(e, t.id), tenant: 'globex' }]);
      await s.deleteAlertTarget('globex', t.id);
      expect(await s.getAlertTarget('acme', t.id)).toEqual(t);
      const [d] = await s.listDeliveries('acme', { target: t.id, limit: 10 });
      expect(d).toEqual(deliveryOf(e, t.id));
      expect(await s.claimDelivery({ ...d!, tenant: 'globex' }, at(10), at(40))).toBe(false);
      expect(await s.claimDelivery(d!, at(10), at(40))).toBe(true);
    });
  });
}
