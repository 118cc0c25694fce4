/**
 * What only the SQLite adapter's alert tables have (issue 28, lib/store/sqlite/alerts.ts; the contract
 * for both adapters is test/store/contract/alerts.contract.ts): a database from before them opens with
 * them made empty; deliveries finished more than 30 days ago are pruned by a later fan-out (DynamoDB:
 * TTL); the worker's and the listings' queries go through the indexes made for them, not a scan; and a
 * row that does not parse (broken JSON, a record of the wrong shape) is left out of every listing.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import Database from 'better-sqlite3';
import { afterAll, describe, expect, it } from 'vitest';
import type { OutboxEvent } from '../../../lib/store/index.js';
import { ALERT_QUERIES } from '../../../lib/store/sqlite/alerts.js';
import { SqliteStateStore } from '../../../lib/store/sqlite/state-store.js';
import { delivered, deliveryOf, eventOf, targetOf } from '../contract/alert-records.js';
import { at } from '../contract/records.js';

const tmp = mkdtempSync(join(tmpdir(), 'hansard-alerts-'));
afterAll(() => rmSync(tmp, { recursive: true, force: true }));

const ALERT_TABLES = ['alert_deliveries', 'alert_outbox', 'alert_targets'];
const newPath = () => join(mkdtempSync(join(tmp, 'sqlite-')), 'state.sqlite');

/** The tables of the database at `path`, by name. */
function tables(path: string): string[] {
  const raw = new Database(path, { readonly: true });
  const rows = raw.prepare("SELECT name FROM sqlite_master WHERE type = 'table' ORDER BY name").all();
  raw.close();
  return (rows as Array<{ name: string }>).map((r) => r.name);
}

describe('SqliteStateStore alert tables', () => {
  it('adds them empty to a database from before them, its other records untouched', async () => {
    const path = newPath();
    const store = new SqliteStateStore(path);
    await store.claimKey('acme', 'scope', 'key', 'kept');
    await store.close();
    const raw = new Database(path);
    for (const t of ALERT_TABLES) raw.exec(`DROP TABLE ${t}`);
    raw.close();
    expect(tables(path).filter((t) => ALERT_TABLES.includes(t))).toEqual([]);

    const reopened = new SqliteStateStore(path);
    expect(tables(path).filter((t) => ALERT_TABLES.includes(t))).toEqual(ALERT_TABLES);
    expect(await reopened.readClaim('acme', 'scope', 'key')).toBe('kept');
    const target = targetOf('acme', 1);
    await reopened.putAlertTarget(target);
    await reopened.close();
    // opened again: nothing is made twice, nothing lost
    const again = new SqliteStateStore(path);
    expect(await again.listAlertTargets('acme')).toEqual([target]);
    await again.close();
  });

  it('prunes deliveries finished over 30 days ago at a later fan-out, and keeps the rest', async () => {
    const path = newPath();
    const store = new SqliteStateStore(path);
    const target = `at_${'A'.repeat(26)}`;
    const events = [1, 2, 3].map((w) => eventOf('acme', w));
    await store.putOutboxEvents(events);
    const [old, recent, pending] = events.map((e) => deliveryOf(e, target));
    for (const [i, e] of events.entries()) await store.fanOut(e, [[old, recent, pending][i]!]);
    await store.finishAttempt(old!, delivered(old!, 10));
    await store.finishAttempt(recent!, delivered(recent!, 10));
    await store.close();
    // the two finished 31 and 29 days ago (the store's clock is the system's)
    const raw = new Database(path);
    const finishedAt = (days: number) => new Date(Date.now() - days * 86_400_000).toISOString();
    const age = raw.prepare('UPDATE alert_deliveries SET final_at = ? WHERE event_id = ?');
    age.run(finishedAt(31), old!.event_id);
    age.run(finishedAt(29), recent!.event_id);
    raw.close();

    const reopened = new SqliteStateStore(path);
    const later = eventOf('acme', 50);
    await reopened.putOutboxEvents([later]);
    await reopened.fanOut(later, []);
    const left = await reopened.listDeliveries('acme', { target, limit: 10 });
    expect(left.map((d) => d.event_id).sort()).toEqual([recent!.event_id, pending!.event_id].sort());
    expect(left.find((d) => d.event_id === pending!.event_id)?.status).toBe('pending');
    await reopened.close();
  });

  it("answers the worker's and the listings' queries from their indexes", async () => {
    const path = newPath();
    const store = new SqliteStateStore(path);
    // a few rows, so that the planner has something to plan for
    const e = eventOf('acme', 1);
    await store.putOutboxEvents([e]);
    await store.fanOut(e, [deliveryOf(e, `at_${'B'.repeat(26)}`)]);
    await store.listDueDeliveries(at(100), 10);
    await store.close();
    const raw = new Database(path, { readonly: true });
    const params = {
      now: at(100),
      limit: 10,
      tenant: 'acme',
      target: 'at_x',
      sid: 's_x',
      perTarget: 5,
      exclude: '["acme/at_y"]',
    };
    const plan = (sql: string) =>
      (raw.prepare(`EXPLAIN QUERY PLAN ${sql}`).all(params) as Array<{ detail: string }>)
        .map((r) => r.detail)
        .join('\n');
    const due = plan(ALERT_QUERIES.dueDeliveries);
    expect(due).toMatch(/SEARCH d USING INDEX alert_deliveries_due/);
    expect(due).toMatch(/SEARCH e USING COVERING INDEX alert_deliveries_queue/);
    expect(plan(ALERT_QUERIES.dueEvents)).toMatch(/^SEARCH alert_outbox USING INDEX alert_outbox_due/);
    expect(plan(ALERT_QUERIES.byTarget)).toMatch(
      /^SEARCH alert_deliveries USING INDEX alert_deliveries_target/,
    );
    expect(plan(ALERT_QUERIES.byTargetAndSid)).toMatch(/^SEARCH alert_deliveries USING INDEX/);
    expect(plan(ALERT_QUERIES.bySid)).toMatch(/^SEARCH alert_deliveries USING INDEX alert_deliveries_sid/);
    // no table is scanned (the due listing's window reads its own subquery, and `exclude` is json_each's)
    for (const sql of Object.values(ALERT_QUERIES)) {
      expect(plan(sql)).not.toMatch(/\bSCAN (?!\(subquery-\d+\)|json_each\b)/);
    }
    raw.close();
  });

  it('leaves out of every listing a row that does not parse, and lists the others', async () => {
    const path = newPath();
    const store = new SqliteStateStore(path);
    const [good, bad] = [targetOf('acme', 1), targetOf('acme', 2)];
    await store.putAlertTarget(good);
    await store.putAlertTarget(bad);
    const sid = 's_01KBROKENROWS0000000000000';
    const events = [
      eventOf('acme', 10, { sid }),
      eventOf('acme', 11),
      eventOf('acme', 12),
      eventOf('acme', 13),
    ];
    await store.putOutboxEvents(events);
    const [e0, e1, e2, e3] = events as [OutboxEvent, OutboxEvent, OutboxEvent, OutboxEvent];
    await store.fanOut(e0, [deliveryOf(e0, good.id)]);
    await store.fanOut(e1, [deliveryOf(e1, good.id)]);
    const e4 = eventOf('acme', 20, { sid });
    await store.putOutboxEvents([e4]);
    await store.fanOut(e4, [deliveryOf(e4, good.id)]);
    await store.close();
    const raw = new Database(path);
    raw.prepare("UPDATE alert_targets SET target = '{broken' WHERE id = ?").run(bad.id);
    // JSON, but not an event: a kind of the wrong type
    raw
      .prepare('UPDATE alert_outbox SET event = ? WHERE id = ?')
      .run(JSON.stringify({ ...e2, kind: 7 }), e2.id);
    raw.prepare("UPDATE alert_outbox SET event = 'null' WHERE id = ?").run(e3.id);
    raw.prepare("UPDATE alert_deliveries SET delivery = '{broken' WHERE event_id = ?").run(e0.id);
    raw.close();

    const reopened = new SqliteStateStore(path);
    expect(await reopened.getAlertTarget('acme', bad.id)).toBeNull();
    expect(await reopened.getAlertTarget('acme', good.id)).toEqual(good);
    expect(await reopened.listAlertTargets('acme')).toEqual([good]);
    expect(await reopened.listDueEvents(at(100), 10)).toEqual([]);
    await reopened.putOutboxEvents([eventOf('acme', 30)]);
    expect((await reopened.listDueEvents(at(100), 10)).map((e) => e.at)).toEqual([at(30)]);
    // the broken delivery is not listed, and still heads its (target, session) queue: e4 waits behind it
    expect((await reopened.listDueDeliveries(at(100), 10)).map((d) => d.event_id)).toEqual([e1.id]);
    expect(
      (await reopened.listDeliveries('acme', { target: good.id, limit: 10 })).map((d) => d.event_id),
    ).toEqual([e4.id, e1.id]);
    expect((await reopened.listDeliveries('acme', { sid, limit: 10 })).map((d) => d.event_id)).toEqual([
      e4.id,
    ]);
    await reopened.close();
  });
});
