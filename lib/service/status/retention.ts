/**
 * What a session's status keeps (seed 000 "Retention": up to 128 events within 128 KiB, subject to the
 * status record's 256 KiB limit; issue 12 item 1). Every report is kept; when the declared events of all
 * kept reports pass 128 or 128 KiB, the oldest events drop out first (each report counts its own, the
 * record counts all); when the whole record would pass 256 KiB, the oldest reports drop out. The report
 * just made is never dropped. Pure functions: the service reads, appends and writes under the store's
 * version condition.
 */
import type { StatusEntry, StatusRecord } from '../../store/index.js';

/** The seed's retention limits, in events and UTF-8 bytes of JSON. */
export const STATUS_RETENTION = {
  maxEvents: 128,
  maxEventBytes: 128 * 1024,
  maxRecordBytes: 256 * 1024,
} as const;

export type StatusRetention = { [K in keyof typeof STATUS_RETENTION]: number };

const bytesOf = (v: unknown): number => Buffer.byteLength(JSON.stringify(v));

/**
 * `prev` (null: none yet) with `report` appended and the limits applied; version one more than `prev`'s.
 * Sizes are of each event's and report's JSON text, as the stores keep them.
 */
export function appendReport(
  prev: StatusRecord | null,
  key: { tenant: string; sid: string },
  report: Omit<StatusEntry, 'events_dropped'>,
  limits: StatusRetention = STATUS_RETENTION,
): StatusRecord {
  const reports: StatusEntry[] = [
    ...(prev?.reports ?? []).map((r) => ({ ...r, events: [...r.events] })),
    { ...report, events_dropped: 0 },
  ];
  let droppedEvents = prev?.dropped_events ?? 0;
  let droppedReports = prev?.dropped_reports ?? 0;

  // Events: oldest first, across reports.
  const sizes = reports.map((r) => r.events.map(bytesOf));
  let count = sizes.reduce((n, s) => n + s.length, 0);
  let bytes = sizes.reduce((n, s) => n + s.reduce((a, b) => a + b, 0), 0);
  for (let i = 0; i < reports.length && (count > limits.maxEvents || bytes > limits.maxEventBytes); i++) {
    const r = reports[i]!;
    while (r.events.length > 0 && (count > limits.maxEvents || bytes > limits.maxEventBytes)) {
      r.events.shift();
      bytes -= sizes[i]!.shift()!;
      count -= 1;
      r.events_dropped += 1;
      droppedEvents += 1;
    }
  }

  // The record: oldest reports first, the newest always kept. Sizes are summed, not re-serialised each time.
  const reportBytes = reports.map((r) => bytesOf(r) + 1);
  const overhead = bytesOf({
    reports: [],
    dropped_events: Number.MAX_SAFE_INTEGER,
    dropped_reports: Number.MAX_SAFE_INTEGER,
  });
  let total = overhead + reportBytes.reduce((a, b) => a + b, 0);
  let first = 0;
  while (total > limits.maxRecordBytes && first < reports.length - 1) {
    total -= reportBytes[first]!;
    droppedEvents += reports[first]!.events.length;
    droppedReports += 1;
    first += 1;
  }
  return {
    tenant: key.tenant,
    sid: key.sid,
    reports: reports.slice(first),
    dropped_events: droppedEvents,
    dropped_reports: droppedReports,
    version: (prev?.version ?? 0) + 1,
  };
}
