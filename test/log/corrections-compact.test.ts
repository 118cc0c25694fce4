/**
 * The compact CorrectionIndex (issue 16, peak RSS: per correction only what applying and reporting it
 * need, targets and correction ids interned) applies, refuses and reports every correction exactly as
 * the CorrectionIndex of before did (test/log/corrections-oracle.ts), on any events drawn from small pools
 * of ids: targets named by several corrections or by none that passes, events sharing an id, corrections
 * sharing an id (one problem kept for both), forbidden fields, invalid values, corrections of corrections
 * and of unknown types. (test/log/corrections.test.ts checks that the scan of segments gives the index
 * `fromEvents` gives.)
 */
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { decodeEvent, type LogEvent } from '../../lib/log/index.js';
import { CorrectionIndex } from '../../lib/log/replay/corrections.js';
import { OracleCorrectionIndex } from './corrections-oracle.js';

const ulid = (p: string, n: number) => `${p}_01KZ${String(n).padStart(22, '0')}`;
const TARGETS = [ulid('m', 1), ulid('m', 2), ulid('e', 3), 'm-plain', 'm_\ud800'];
const CORRECTION_IDS = [ulid('e', 10), ulid('e', 11), ulid('e', 12), 'e-plain'];
const FIELDS = ['text', 'user_id', 'status', 'id', 'ts', 'type', 'truncated', 'nope', 'redacted', 'reason'];
const VALUES: unknown[] = ['new text', 'sam', 5, null, [], 'completed', { a: 1 }];

type Raw = Record<string, unknown>;

const raw: fc.Arbitrary<Raw> = fc.oneof(
  fc
    .record({ id: fc.constantFrom(...TARGETS), u: fc.constantFrom('priya', 'sam') })
    .map(({ id, u }) => ({ type: 'message', id, user_id: u, text: 'hi', client_ts: null, redacted: [] })),
  fc
    .record({ id: fc.constantFrom(...TARGETS) })
    .map(({ id }) => ({ type: 'turn.end', id, turn_id: 't_1', status: 'completed' })),
  fc.record({ id: fc.constantFrom(...TARGETS) }).map(({ id }) => ({ type: 'x.custom', id, what: 1 })),
  fc
    .record({
      id: fc.constantFrom(...CORRECTION_IDS, ...TARGETS),
      target: fc.constantFrom(...TARGETS, ...CORRECTION_IDS, 'm_missing'),
      field: fc.constantFrom(...FIELDS),
      value: fc.constantFrom(...VALUES),
      reason: fc.constantFrom('fix', 'typo'),
    })
    .map(({ id, target, field, value, reason }) => ({
      type: 'correction',
      id,
      target_id: target,
      field,
      value,
      reason,
      redacted: [],
    })),
);

/** Events in merged order, from writers w_1 and w_2, each with its own seq. */
const events = fc
  .array(fc.record({ w: fc.constantFrom('w_1', 'w_2'), e: raw }), {
    minLength: 1,
    maxLength: 60,
    size: 'max',
  })
  .map((xs) => {
    const seq = new Map<string, number>();
    return xs.map(({ w, e }, k): LogEvent => {
      const n = (seq.get(w) ?? 0) + 1;
      seq.set(w, n);
      const ts = `2026-11-01T00:00:${String(k % 60).padStart(2, '0')}.000000Z`;
      return decodeEvent({ v: 3, sid: 's_1', w, seq: n, ts, mono: k, ...e });
    });
  });

describe('the compact CorrectionIndex', () => {
  it('applies, refuses and reports as the CorrectionIndex of before', () => {
    fc.assert(
      fc.property(events, fc.boolean(), (evs, notePassed) => {
        const got = CorrectionIndex.fromEvents(evs);
        const want = OracleCorrectionIndex.fromEvents(evs);
        expect(got.size).toBe(want.size);
        for (const ev of evs) {
          for (const id of [...TARGETS, ...CORRECTION_IDS, 'm_missing'])
            expect(got.targets(id)).toBe(want.targets(id));
          // problems() orders by what passed() noted; without it, by writer and seq
          if (ev.type === 'correction' && notePassed) {
            got.passed(ev.id);
            want.passed(ev.id);
          }
          expect(got.apply(ev)).toEqual(want.apply(ev));
          for (const id of CORRECTION_IDS) expect(got.problemOf(id)).toEqual(want.problemOf(id));
        }
        expect(got.problems()).toEqual(want.problems());
      }),
      { numRuns: 500 },
    );
  });
});
