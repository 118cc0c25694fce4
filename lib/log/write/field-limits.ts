/**
 * The writer's field limits (DESIGN §7): no line we write may exceed the 5 MiB chunk limit, so that every
 * segment can be uploaded (a longer line is refused with 413 for ever). What is cut is named in the
 * event's `truncated`:
 * - free text and tool payloads (`text`, `input`, `output`, …): 1 MiB of JSON each;
 * - `writer.start`'s `meta` (issue 25 attack item 18): every string in it (agent, app, host, and every
 *   string of every other key, nested ones too) to 1,000 UTF-16 units, named `meta.<key>`; a meta still
 *   over 64 KiB keeps the writer's own keys, then the others in order while they fit, and names `meta`;
 * - any other string field (names and ids: `user_id`, `tool`, `author`, …) to 64 KiB of JSON, and a list
 *   (of ids) to 1 MiB: no real name or id is that long, so only a hostile or broken caller is cut;
 * - the event's `extra` keys: each to 1 MiB like a free-text field, and all of them together to 1 MiB
 *   (keys that do not fit are dropped), named by key.
 * So a line holds at most a few MiB whatever the caller gives.
 */

import { cutText, graphemeFloor } from '../format/text-cut.js';

/** Largest JSON encoding (UTF-8 bytes) a field may have before the writer cuts it and names it in `truncated` (DESIGN §7). */
export const MAX_FIELD_BYTES = 1024 * 1024;

/** Fields that hold free text or tool payloads: the only ones the writer may cut (ids and lists never). */
const CUTTABLE = new Set(['text', 'input', 'output', 'error', 'value', 'reason']);

/**
 * Cuts any cuttable field whose JSON encoding is over `MAX_FIELD_BYTES` UTF-8 bytes, so that no line we
 * write can exceed the chunk limit (DESIGN §7). A string keeps its longest prefix that fits and ends on a
 * grapheme-cluster boundary (never half a surrogate pair, a flag or a ZWJ emoji); any other value is replaced by the prefix of its JSON text.
 */
export function cutLongFields(fields: Record<string, unknown>): {
  fields: Record<string, unknown>;
  truncated: string[];
} {
  const truncated: string[] = [];
  const out: Record<string, unknown> = {};
  for (const [k, v] of Object.entries(fields)) {
    if (k === 'meta' && isPlainObject(v)) {
      const m = cutMeta(v);
      out[k] = m.meta;
      truncated.push(...m.truncated);
      continue;
    }
    if (!CUTTABLE.has(k)) {
      out[k] = cutName(v, (cut) => cut && truncated.push(k));
      continue;
    }
    if (v === null || (typeof v !== 'string' && typeof v !== 'object')) {
      out[k] = v;
      continue;
    }
    const text = typeof v === 'string' ? v : JSON.stringify(v);
    // Cheap exits first: a JSON-escaped character is at most 6 bytes.
    if (text.length * 6 + 2 <= MAX_FIELD_BYTES || jsonBytes(text) <= MAX_FIELD_BYTES) {
      out[k] = v;
      continue;
    }
    out[k] = cutToJsonBytes(text, MAX_FIELD_BYTES);
    truncated.push(k);
  }
  return { fields: out, truncated };
}

function jsonBytes(s: string): number {
  return Buffer.byteLength(JSON.stringify(s), 'utf8');
}

/** The longest prefix of `s` whose JSON string encoding fits in `max` bytes (binary search). */
function cutToJsonBytes(s: string, max: number): string {
  let lo = 0;
  let hi = s.length;
  while (lo < hi) {
    const mid = Math.ceil((lo + hi) / 2);
    if (jsonBytes(s.slice(0, mid)) <= max) lo = mid;
    else hi = mid - 1;
  }
  // on a grapheme-cluster boundary: never half a surrogate pair, a flag or a ZWJ emoji (issue 25.6)
  return s.slice(0, graphemeFloor(s, lo));
}

/** Longest string (UTF-16 units) kept anywhere in `writer.start`'s `meta`. */
export const MAX_META_STRING_UNITS = 1_000;
/** Largest JSON of a whole `meta` (UTF-8 bytes). */
export const MAX_META_BYTES = 64 * 1024;
/** Largest JSON of a name or id field (a string that is not free text), UTF-8 bytes. */
export const MAX_NAME_BYTES = 64 * 1024;
/** The keys `openSession` writes itself: kept first when a `meta` is over `MAX_META_BYTES`. */
const META_OWN = ['agent', 'app', 'hansard_version', 'host', 'pid', 'provenance'];
/** Nested values deeper than this are kept as they are (JSON.stringify bounds them anyway). */
const MAX_DEPTH = 64;

function isPlainObject(v: unknown): v is Record<string, unknown> {
  return v !== null && typeof v === 'object' && !Array.isArray(v);
}

/**
 * `writer.start`'s `meta` cut so that it always fits (issue 25 attack item 18: a 10 MB agent name made
 * line 1 of its segment too long for ingest, refused with 413 for ever): every string in it, nested ones
 * too, to `MAX_META_STRING_UNITS` on a grapheme boundary (`cutText`), each key with a cut named
 * `meta.<key>` (the first 16; past them `meta` once); then, when its JSON is still over `MAX_META_BYTES` (many keys, a long key, a long list),
 * the writer's own keys first and the others in order while they fit, and `meta` named.
 */
export function cutMeta(meta: Record<string, unknown>): {
  meta: Record<string, unknown>;
  truncated: string[];
} {
  const truncated: string[] = [];
  let out = meta;
  for (const [k, v] of Object.entries(meta)) {
    const c = cutStrings(v, 0);
    if (!c.cut) continue;
    // copied at the first cut only: a meta that fits is written as given
    if (out === meta) out = { ...meta };
    setOwn(out, k, c.value);
    name(truncated, `meta.${cutText(k, 64)}`, 'meta');
  }
  const json = JSON.stringify(out);
  if (json.length * 3 > MAX_META_BYTES && Buffer.byteLength(json, 'utf8') > MAX_META_BYTES) {
    const kept: Record<string, unknown> = {};
    let bytes = 2;
    const own = META_OWN.filter((k) => Object.hasOwn(out, k));
    for (const k of [...own, ...Object.keys(out)]) {
      if (Object.hasOwn(kept, k)) continue;
      const entry = Buffer.byteLength(`${JSON.stringify(k)}:${JSON.stringify(out[k]) ?? 'null'},`, 'utf8');
      // the writer's own keys are short (cut above); the others go in order until one does not fit
      if (bytes + entry > MAX_META_BYTES) {
        if (META_OWN.includes(k)) continue;
        break;
      }
      setOwn(kept, k, out[k]);
      bytes += entry;
    }
    out = kept;
    if (!truncated.includes('meta')) truncated.push('meta');
  }
  return { meta: out, truncated };
}

/** `v` with every string in it cut to `MAX_META_STRING_UNITS`; `cut` when one was. */
function cutStrings(v: unknown, depth: number): { value: unknown; cut: boolean } {
  if (typeof v === 'string')
    return v.length > MAX_META_STRING_UNITS
      ? { value: cutText(v, MAX_META_STRING_UNITS), cut: true }
      : { value: v, cut: false };
  if (v === null || typeof v !== 'object' || depth >= MAX_DEPTH) return { value: v, cut: false };
  let cut = false;
  if (Array.isArray(v)) {
    const arr = v.map((x) => {
      const c = cutStrings(x, depth + 1);
      cut ||= c.cut;
      return c.value;
    });
    return cut ? { value: arr, cut } : { value: v, cut };
  }
  const obj: Record<string, unknown> = {};
  for (const [k, x] of Object.entries(v)) {
    const c = cutStrings(x, depth + 1);
    cut ||= c.cut;
    setOwn(obj, k, c.value);
  }
  return cut ? { value: obj, cut } : { value: v, cut };
}

/**
 * A field that is not free text (a name, an id, a list of ids, a status): a string over `MAX_NAME_BYTES`
 * of JSON is cut to it, a list over `MAX_FIELD_BYTES` keeps the items that fit; `cut(true)` when cut.
 */
function cutName(v: unknown, cut: (was: boolean) => void): unknown {
  if (typeof v === 'string') {
    if (v.length * 6 + 2 <= MAX_NAME_BYTES || jsonBytes(v) <= MAX_NAME_BYTES) return v;
    cut(true);
    return cutToJsonBytes(v, MAX_NAME_BYTES);
  }
  if (!Array.isArray(v)) return v;
  const json = JSON.stringify(v);
  if (json === undefined || Buffer.byteLength(json, 'utf8') <= MAX_FIELD_BYTES) return v;
  const kept: unknown[] = [];
  let bytes = 2;
  for (const x of v) {
    const b = Buffer.byteLength(JSON.stringify(x) ?? 'null', 'utf8') + 1;
    if (bytes + b > MAX_FIELD_BYTES) break;
    kept.push(x);
    bytes += b;
  }
  cut(true);
  return kept;
}

/**
 * The event's `extra` (keys outside its type's fields) cut so that it cannot make its line too long: the
 * keys are kept in order while all of them fit in `MAX_FIELD_BYTES` of JSON; a string that does not fit
 * is cut to the room left (when at least 1 KiB is), anything else dropped. Each key cut or dropped is
 * named (the first 16; past them `extra` once). The same object when it fits (the common case costs one
 * JSON.stringify of a small object).
 */
export function cutExtra(extra: Record<string, unknown>): {
  extra: Record<string, unknown>;
  truncated: string[];
} {
  const json = JSON.stringify(extra);
  if (
    json === undefined ||
    json.length * 3 <= MAX_FIELD_BYTES ||
    Buffer.byteLength(json, 'utf8') <= MAX_FIELD_BYTES
  )
    return { extra, truncated: [] };
  const truncated: string[] = [];
  const out: Record<string, unknown> = {};
  let bytes = 2;
  for (const [k, v] of Object.entries(extra)) {
    // what one more key may take: its name, a colon and a comma, and its value
    const room = MAX_FIELD_BYTES - bytes - Buffer.byteLength(JSON.stringify(k), 'utf8') - 2;
    const size = Buffer.byteLength(JSON.stringify(v) ?? 'null', 'utf8');
    if (size <= room) {
      setOwn(out, k, v);
      bytes = MAX_FIELD_BYTES - room + size;
      continue;
    }
    name(truncated, cutText(k, 64), 'extra');
    // A string is cut to the room left when that is a useful head; anything else that does not fit is
    // dropped.
    if (typeof v === 'string' && room >= MIN_HEAD_BYTES) {
      const cut = cutToJsonBytes(v, room);
      setOwn(out, k, cut);
      bytes = MAX_FIELD_BYTES - room + jsonBytes(cut);
    }
  }
  return { extra: out, truncated };
}

/** The least room worth cutting an extra string into (below it, the key is dropped). */
const MIN_HEAD_BYTES = 1024;
/** At most this many keys are named one by one in `truncated`; past them, one catch-all name. */
const MAX_NAMED = 16;

/** Adds `what` to `truncated`, or `all` (once) when `MAX_NAMED` names are there: the list stays short. */
function name(truncated: string[], what: string, all: string): void {
  if (truncated.length < MAX_NAMED) truncated.push(what);
  else if (!truncated.includes(all)) truncated.push(all);
}

/** `obj[k] = v` as an own property, `__proto__` too (a key a line may carry). */
function setOwn(obj: Record<string, unknown>, k: string, v: unknown): void {
  if (k === '__proto__')
    Object.defineProperty(obj, k, { value: v, enumerable: true, writable: true, configurable: true });
  else obj[k] = v;
}
