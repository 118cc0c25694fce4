/**
 * The writer's field limit (DESIGN §7): no field of a line we write may encode to more than 1 MiB of
 * JSON, so no line can exceed the 5 MiB chunk limit. A field over it is cut and named in `truncated`.
 */

import { graphemeFloor } from './text-cut.js';

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
    if (!CUTTABLE.has(k) || v === null || (typeof v !== 'string' && typeof v !== 'object')) {
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
