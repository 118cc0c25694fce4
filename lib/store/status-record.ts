/**
 * Encoding a `StatusRecord` for the adapters (one JSON text of its reports, counters and `state_since`, the
 * version beside it), and reading what an earlier hansard stored: the latest report alone (`state`, `note`,
 * `events`, `reported_by`, `reported_at`), read as a record of that one report at version 0 so that the
 * next report replaces it under the same condition as a missing one.
 */
import type { StatusEntry, StatusRecord } from './status.js';

/** The JSON text an adapter stores for `s` (everything but tenant, sid and version). */
export function encodeStatus(s: StatusRecord): string {
  return JSON.stringify({
    reports: s.reports,
    dropped_events: s.dropped_events,
    dropped_reports: s.dropped_reports,
    ...(s.state_since === undefined ? {} : { state_since: s.state_since }),
  });
}

/** `encodeStatus`'s text back, with its keys. @throws SyntaxError when the text is not what it wrote */
export function decodeStatus(tenant: string, sid: string, json: string, version: number): StatusRecord {
  const o = JSON.parse(json) as Pick<
    StatusRecord,
    'reports' | 'dropped_events' | 'dropped_reports' | 'state_since'
  >;
  return {
    tenant,
    sid,
    reports: o.reports,
    dropped_events: o.dropped_events,
    dropped_reports: o.dropped_reports,
    version,
    ...(typeof o.state_since === 'string' ? { state_since: o.state_since } : {}),
  };
}

/** A status stored by hansard before report history: its one report, at version 0. */
export function legacyStatus(
  tenant: string,
  sid: string,
  latest: Omit<StatusEntry, 'events_dropped'>,
): StatusRecord {
  return {
    tenant,
    sid,
    reports: [{ ...latest, events_dropped: 0 }],
    dropped_events: 0,
    dropped_reports: 0,
    version: 0,
  };
}
