/**
 * Status retention at the seed's exact limits (seed 000 "Retention": up to 128 events within 128 KiB,
 * subject to the status record's 256 KiB limit; issue 12 item 1): what stays, what drops, and the counts
 * the record keeps. The stores keep what this gives them (test/store/contract/status.contract.ts).
 */
import { describe, expect, it } from 'vitest';
import { appendReport, STATUS_RETENTION } from '../../../lib/service/status/retention.js';
import type { StatusRecord } from '../../../lib/store/index.js';
import { encodeStatus } from '../../../lib/store/status-record.js';

const key = { tenant: 'acme', sid: 's_01M8QD33333333333333333333' };
let clock = 0;
/** A report with `n` events, each about `pad` bytes of JSON. */
const report = (n: number, pad = 10, note = '') => ({
  state: 'working',
  note,
  events: Array.from({ length: n }, (_, i) => ({
    kind: 'plan',
    evidence: [],
    pad: `${i}:${'x'.repeat(pad)}`,
  })),
  reported_by: 'tok_A',
  reported_at: new Date(Date.UTC(2026, 0, 1) + ++clock * 1000).toISOString(),
});
const eventsOf = (s: StatusRecord) => s.reports.reduce((n, r) => n + r.events.length, 0);
const eventBytes = (s: StatusRecord) =>
  s.reports.reduce(
    (n, r) => n + r.events.reduce<number>((m, e) => m + Buffer.byteLength(JSON.stringify(e)), 0),
    0,
  );

function reportsOf(counts: number[], pad = 10): StatusRecord {
  let s: StatusRecord | null = null;
  for (const n of counts) s = appendReport(s, key, report(n, pad));
  return s!;
}

describe('appendReport', () => {
  it('keeps every report and event below the limits, version counting writes', () => {
    const s = reportsOf([4, 4, 0, 3]);
    expect(s.reports.map((r) => r.events.length)).toEqual([4, 4, 0, 3]);
    expect([s.dropped_events, s.dropped_reports, s.version]).toEqual([0, 0, 4]);
  });

  it('keeps exactly 128 events, and drops the oldest first at 129', () => {
    const at128 = reportsOf(Array(32).fill(4));
    expect(eventsOf(at128)).toBe(128);
    expect(at128.dropped_events).toBe(0);
    const at129 = appendReport(at128, key, report(1));
    expect(eventsOf(at129)).toBe(128);
    expect(at129.dropped_events).toBe(1);
    // The first report lost its first event; it is still there with the other three.
    expect(at129.reports[0]!.events.map((e) => (e as { pad: string }).pad.split(':')[0])).toEqual([
      '1',
      '2',
      '3',
    ]);
    expect(at129.reports[0]!.events_dropped).toBe(1);
    expect(at129.reports).toHaveLength(33);
    expect(at129.dropped_reports).toBe(0);
  });

  it('keeps events up to exactly 128 KiB of JSON, and drops the oldest past it', () => {
    // Size one event so that 64 of them are exactly 128 KiB.
    const target = (128 * 1024) / 64;
    const probe = Buffer.byteLength(JSON.stringify(report(1, 0).events[0]));
    // Event i's prefix is "i:" (2 or 3 characters): pad so every event is `target` bytes.
    const events = Array.from({ length: 64 }, (_, i) => {
      const prefix = `${i}:`.length - 2;
      return { kind: 'plan', evidence: [], pad: `${i}:${'x'.repeat(target - probe - prefix)}` };
    });
    expect(events.every((e) => Buffer.byteLength(JSON.stringify(e)) === target)).toBe(true);
    let s: StatusRecord | null = null;
    for (let i = 0; i < 64; i += 4)
      s = appendReport(s, key, { ...report(0), events: events.slice(i, i + 4) });
    expect(eventBytes(s!)).toBe(STATUS_RETENTION.maxEventBytes);
    expect(s!.dropped_events).toBe(0);
    const past = appendReport(s, key, report(1, 0));
    expect(past.dropped_events).toBe(1);
    expect(eventBytes(past)).toBeLessThanOrEqual(STATUS_RETENTION.maxEventBytes);
    expect(eventsOf(past)).toBe(64);
  });

  it('keeps the whole record within 256 KiB, dropping the oldest reports, never the newest', () => {
    // Reports with no events and a long note: only the record limit applies.
    let s: StatusRecord | null = null;
    for (let i = 0; i < 2000; i++) s = appendReport(s, key, report(0, 0, 'n'.repeat(200)));
    const bytes = Buffer.byteLength(encodeStatus(s!));
    expect(bytes).toBeLessThanOrEqual(STATUS_RETENTION.maxRecordBytes);
    // Full: within one report of the limit.
    expect(bytes).toBeGreaterThan(STATUS_RETENTION.maxRecordBytes - 400);
    expect(s!.dropped_reports + s!.reports.length).toBe(2000);
    expect(s!.dropped_reports).toBeGreaterThan(0);
    expect(s!.reports.at(-1)!.reported_at).toBe(new Date(Date.UTC(2026, 0, 1) + clock * 1000).toISOString());
    expect(s!.version).toBe(2000);
  });

  it('counts the events of dropped reports as dropped', () => {
    const limits = { maxEvents: 1000, maxEventBytes: 1 << 20, maxRecordBytes: 1500 };
    let s: StatusRecord | null = null;
    for (let i = 0; i < 10; i++) s = appendReport(s, key, report(2, 50), limits);
    expect(s!.dropped_reports).toBeGreaterThan(0);
    expect(s!.dropped_events).toBe(2 * s!.dropped_reports);
    expect(Buffer.byteLength(encodeStatus(s!))).toBeLessThanOrEqual(1500);
  });

  it('never drops the newest report, even alone over the limit', () => {
    const limits = { maxEvents: 1000, maxEventBytes: 1 << 20, maxRecordBytes: 10 };
    const s = appendReport(appendReport(null, key, report(1), limits), key, report(1), limits);
    expect(s.reports).toHaveLength(1);
    expect(s.dropped_reports).toBe(1);
  });
});
