/**
 * What lib/log/replay/attribution.ts reads of its input, leniently (its "Leniency" rules): a `LogEvent`, a
 * `RecordedEvent` (decoded), a `MergedEvent` or a plain event object as a typed view, an event's type
 * fields, id lists and strings. Split from attribution.ts for its size.
 */
import { decodeEvent, type RecordedEvent } from '../format/codec.js';
import type { LogEvent } from '../format/events.js';

/** A list of strings, deduplicated in order; null for anything else (a malformed list is not a record). */
export function idList(v: unknown): string[] | null {
  if (!Array.isArray(v) || !v.every((x) => typeof x === 'string')) return null;
  return [...new Set(v as string[])];
}

export const str = (v: unknown): string => (typeof v === 'string' ? v : '');

/** The event as a typed view; null when it cannot be one (not an object, no string type). */
export function toEvent(x: unknown): LogEvent | null {
  if (typeof x !== 'object' || x === null) return null;
  const o = x as Record<string, unknown>;
  if ('event' in o && 'orderMicros' in o) return toEvent(o.event);
  let ev: LogEvent;
  if ('obj' in o && 'raw' in o) {
    if (typeof o.obj !== 'object' || o.obj === null) return null;
    ev = decodeEvent(o as unknown as RecordedEvent);
  } else if (typeof o.extra === 'object' && o.extra !== null) {
    ev = o as unknown as LogEvent;
  } else {
    ev = decodeEvent(o);
  }
  return typeof ev.type === 'string' ? ev : null;
}

/** The event's type fields: the decoded ones, or `extra` when the fields did not decode. */
export function fieldsOf(ev: LogEvent): Record<string, unknown> {
  return 'unknown' in ev ? (ev.extra ?? {}) : (ev as unknown as Record<string, unknown>);
}
