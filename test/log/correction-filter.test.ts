/**
 * The replay's filter of corrected ids (issue 16: `CorrectionIndex.mayTarget` over `hashIdBytes`): the
 * replay with corrections asks it of every event before it makes the event's id a string, so a false
 * "no" would print a corrected event as written. Never false for a target, whatever the id's text; rarely
 * true for an id no correction names.
 */
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { hashIdBytes, hashIdText } from '../../lib/log/format/envelope-scan.js';
import { CorrectionIndex, type LogEvent, newId } from '../../lib/log/index.js';

function correction(target: string): LogEvent {
  return {
    v: 3,
    sid: newId('s'),
    w: newId('w'),
    seq: 1,
    id: newId('e'),
    ts: '2026-11-01T00:00:00.000000Z',
    mono: 0,
    type: 'correction',
    target_id: target,
    field: 'text',
    value: 'x',
    reason: 'r',
    redacted: [],
    extra: {},
  } as LogEvent;
}

describe('the corrected-id filter', () => {
  it('hashes an id from its UTF-8 bytes as from its text, inside a larger buffer', () => {
    fc.assert(
      fc.property(fc.string({ unit: 'grapheme' }), fc.nat(20), (id, pad) => {
        const bytes = Buffer.from(id, 'utf8');
        const buf = Buffer.concat([Buffer.alloc(pad, 0x22), bytes, Buffer.alloc(3, 0x22)]);
        expect(hashIdBytes(buf, pad, pad + bytes.length)).toBe(hashIdText(id));
      }),
    );
    expect(hashIdText('m_a')).not.toBe(hashIdText('m_b'));
  });

  it('never says no for a target, and says yes for few other ids', () => {
    fc.assert(
      fc.property(
        fc.uniqueArray(fc.string({ unit: 'grapheme', minLength: 1 }), { maxLength: 300 }),
        (ids) => {
          const index = CorrectionIndex.fromEvents(ids.map(correction));
          for (const id of ids) expect(index.mayTarget(hashIdText(id)), id).toBe(true);
        },
      ),
      { numRuns: 50 },
    );
    const targets = Array.from({ length: 10_000 }, () => newId('m'));
    const index = CorrectionIndex.fromEvents(targets.map(correction));
    for (const id of targets) expect(index.mayTarget(hashIdText(id))).toBe(true);
    let yes = 0;
    const others = 20_000;
    for (let i = 0; i < others; i++) if (index.mayTarget(hashIdText(newId('m')))) yes++;
    // About 64 filter bits a target: ~1.5% false positives; 5% would mean the filter does not filter.
    expect(yes / others).toBeLessThan(0.05);
  });

  it('says no to every id of a session without corrections', () => {
    const index = CorrectionIndex.fromEvents([]);
    for (let i = 0; i < 1000; i++) expect(index.mayTarget(hashIdText(newId('m')))).toBe(false);
  });
});
