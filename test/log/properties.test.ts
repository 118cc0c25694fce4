/**
 * Property tests of the format (issue 3): lossless reading of any event with extra fields and of any
 * unknown type, and the merge's order for any interleaving of any number of segments, by the reference
 * merge and by the replay's fast merge.
 */
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import {
  decodeEvent,
  FIELD_ORDER,
  formatTs,
  KNOWN_TYPES,
  type KnownType,
  mergeSegments,
  parseLine,
  readSegment,
  replayBytes,
  serializeEvent,
} from '../../lib/log/index.js';

const ULID = '0123456789ABCDEFGHJKMNPQRSTVWXYZ';
const ulid = fc.string({ unit: fc.constantFrom(...ULID.split('')), minLength: 26, maxLength: 26 });
const id = (p: string) => ulid.map((u) => `${p}_${u}`);
const jsonValue = fc.jsonValue({ maxDepth: 3 });
const idList = fc.oneof(fc.constant(null), fc.array(id('m'), { maxLength: 3 }));
/** Names that are neither envelope nor type fields, nor `__proto__` (JSON.parse would define it as a key). */
const reserved = new Set([
  'v',
  'sid',
  'w',
  'seq',
  'id',
  'ts',
  'mono',
  'type',
  'truncated',
  '__proto__',
  'corrected',
]);

/** Each known type's fields, generated with values of the types the format gives them. */
const FIELD_ARBS: Record<string, fc.Arbitrary<unknown>> = {
  writer_id: id('w'),
  meta: fc.record({
    agent: fc.oneof(fc.constant(null), fc.string()),
    app: fc.oneof(fc.constant(null), fc.string()),
    hansard_version: fc.oneof(fc.constant(null), fc.string()),
    host: fc.oneof(fc.constant(null), fc.string()),
    pid: fc.oneof(fc.constant(null), fc.nat()),
  }),
  redacted: fc.array(fc.constantFrom('text', 'input', 'output'), { maxLength: 2 }),
  user_id: fc.string(),
  display_name: fc.oneof(fc.constant(null), fc.string()),
  text: fc.string({ unit: 'grapheme' }),
  client_ts: fc.oneof(fc.constant(null), fc.string()),
  turn_id: id('t'),
  context_message_ids: idList,
  tool: fc.string(),
  input: jsonValue,
  call_id: fc.oneof(fc.constant(null), fc.string()),
  caused_by: idList,
  action_id: id('a'),
  status: fc.constantFrom('ok', 'error', 'cancelled', 'completed', 'failed'),
  output: jsonValue,
  error: fc.oneof(fc.constant(null), fc.string()),
  exit_code: fc.oneof(fc.constant(null), fc.integer({ min: -255, max: 255 })),
  author: fc.string(),
  target_id: id('e'),
  field: fc.string(),
  value: jsonValue,
  reason: fc.string(),
};

const extraFields = fc
  .uniqueArray(
    fc.tuple(
      fc.string({ minLength: 1, maxLength: 12 }).filter((k) => !reserved.has(k) && !(k in FIELD_ARBS)),
      jsonValue,
    ),
    { maxLength: 4, selector: ([k]) => k },
  )
  .map((pairs) => pairs);

const envelope = fc.record({
  sid: id('s'),
  w: id('w'),
  seq: fc.integer({ min: 1, max: 1_000_000 }),
  id: id('e'),
  ts: fc.integer({ min: Date.UTC(2000, 0, 1) * 1000, max: Date.UTC(2100, 0, 1) * 1000 }).map(formatTs),
  mono: fc.double({ min: 0, max: 1e6, noNaN: true, noDefaultInfinity: true }),
});

/** A line of a known type written in the format's key order, followed by extra fields. */
const knownLine = fc
  .tuple(envelope, fc.constantFrom(...KNOWN_TYPES), extraFields)
  .chain(([env, type, extra]) => {
    const arbs = Object.fromEntries(
      FIELD_ORDER[type as KnownType].map((f) => [
        f,
        type === 'writer.end' && f === 'reason' ? fc.oneof(fc.constant(null), fc.string()) : FIELD_ARBS[f]!,
      ]),
    );
    return fc.record(arbs).map((vals) => {
      const o: Record<string, unknown> = { v: 3, ...env, type };
      for (const f of FIELD_ORDER[type as KnownType]) o[f] = vals[f];
      for (const [k, v] of extra) o[k] = v;
      return { line: JSON.stringify(o) };
    });
  });

/** A line of a type this build does not know, with any fields. */
const unknownLine = fc
  .tuple(
    envelope,
    fc.string({ minLength: 1, maxLength: 20 }).filter((t) => !(KNOWN_TYPES as string[]).includes(t)),
    extraFields,
  )
  .map(([env, type, extra]) => {
    const o: Record<string, unknown> = { v: 3, ...env, type };
    for (const [k, v] of extra) o[k] = v;
    return JSON.stringify(o);
  });

describe('lossless reading', () => {
  it('any event of a known type with random extra fields serializes back to the bytes it was read from', () => {
    fc.assert(
      fc.property(knownLine, ({ line }) => {
        const p = parseLine(Buffer.from(line), 1, 0);
        expect(p.ok).toBe(true);
        if (!p.ok) return;
        const ev = decodeEvent(p.event);
        expect('unknown' in ev).toBe(false);
        expect(serializeEvent(ev)).toBe(line);
      }),
      { numRuns: 400 },
    );
  });

  it('any event of an unknown type is kept whole and serializes back to its bytes', () => {
    fc.assert(
      fc.property(unknownLine, (line) => {
        const p = parseLine(Buffer.from(line), 1, 0);
        expect(p.ok).toBe(true);
        if (!p.ok) return;
        const ev = decodeEvent(p.event);
        expect('unknown' in ev).toBe(true);
        expect(serializeEvent(ev)).toBe(line);
      }),
      { numRuns: 300 },
    );
  });
});

describe('merge order', () => {
  /** Per writer: a list of ts steps (µs, may be negative: a clock stepping back) and chunk cut points. */
  const writerArb = fc.record({
    // Whole milliseconds, so that writers often tie and the tie-breaks are exercised too.
    steps: fc.array(
      fc.integer({ min: -3, max: 5 }).map((ms) => ms * 1000),
      { minLength: 0, maxLength: 25 },
    ),
    start: fc.integer({ min: 0, max: 20 }).map((ms) => ms * 1000),
    cut: fc.integer({ min: 1, max: 97 }),
  });

  it('any interleaving of any number of segments merges like a reference sort that keeps each writer in seq order', async () => {
    await fc.assert(
      fc.asyncProperty(fc.array(writerArb, { minLength: 1, maxLength: 8 }), async (writers) => {
        const T0 = Date.UTC(2026, 0, 1) * 1000;
        const segments = writers.map((wr, i) => {
          const w = `w_${String(i).padStart(26, '0')}`;
          let t = T0 + wr.start;
          const lines = wr.steps.map((step, k) => {
            t += step;
            return JSON.stringify({
              v: 3,
              sid: 's_X',
              w,
              seq: k + 1,
              id: `e_${i}_${k}`,
              ts: formatTs(t),
              mono: k,
              type: 'note',
            });
          });
          const bytes = Buffer.from(lines.map((l) => `${l}\n`).join(''));
          // Feed the bytes in chunks of `cut` bytes: line boundaries fall anywhere.
          const chunks: Buffer[] = [];
          for (let o = 0; o < bytes.length; o += wr.cut) chunks.push(bytes.subarray(o, o + wr.cut));
          return { w, lines, chunks };
        });
        // Reference: each writer's running-max ts as its key (DESIGN §3, docs/adr/0001), a stable sort
        // by (key, w) that keeps each writer's own order.
        const ref: Array<{ key: number; w: string; k: number; id: string }> = [];
        for (const seg of segments) {
          let max = -Infinity;
          seg.lines.forEach((l, k) => {
            const o = JSON.parse(l) as { ts: string; id: string };
            const ms = Date.parse(o.ts);
            const micros = ms * 1000 + Number(o.ts.slice(23, 26));
            max = Math.max(max, micros);
            ref.push({ key: max, w: seg.w, k, id: o.id });
          });
        }
        ref.sort((a, b) => a.key - b.key || (a.w < b.w ? -1 : a.w > b.w ? 1 : a.k - b.k));
        const got: string[] = [];
        for await (const m of mergeSegments(
          segments.map((s) => ({ w: s.w, items: readSegment(s.chunks) })),
        )) {
          got.push(m.event.id);
        }
        expect(got).toEqual(ref.map((r) => r.id));
        // The fast merge (issue 16: replayBytes over line cursors, blocks cut at the same points, and a
        // block budget so small that a writer's block holds a few lines): the same order, every mode.
        const replaySegments = segments.map((s) => ({ w: s.w, open: () => s.chunks }));
        for (const mode of ['raw', 'ndjson'] as const) {
          const parts: Buffer[] = [];
          for await (const b of replayBytes(replaySegments, mode, { readBudgetBytes: 1 }))
            parts.push(Buffer.from(b));
          const fastIds = Buffer.concat(parts)
            .toString('utf8')
            .split('\n')
            .filter(Boolean)
            .map((l) => (JSON.parse(l) as { id: string }).id);
          expect(fastIds, mode).toEqual(ref.map((r) => r.id));
        }
      }),
      { numRuns: 150 },
    );
  });
});
