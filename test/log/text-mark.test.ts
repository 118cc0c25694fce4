/**
 * lib/log/replay/text-mark.ts MarkRing: a kept mark reads back as written until 4 MiB of newer marks have gone
 * over it, then says null (the text replay makes it again); marks never straddle the ring's end; a mark
 * too long to keep is refused, nothing written. And Authors: the latest string user_id of an id.
 */
import { describe, expect, it } from 'vitest';
import { Authors, type MarkAt, MarkRing } from '../../lib/log/replay/text-mark.js';

const RING = 4 * 1024 * 1024;

describe('MarkRing', () => {
  it('gives each mark back until newer marks have been written over it', () => {
    const ring = new MarkRing();
    const head = Buffer.from(' [← ', 'utf8');
    const kept: { m: MarkAt; text: string }[] = [];
    let written = 0;
    for (let k = 0; written < 3 * RING; k++) {
      const text = `m_${k} `.repeat(1 + (k % 700)); // up to ~6 KB: the ring's end falls inside some marks
      const m = ring.put(head, text, k % 2 === 0)!;
      written += m.len;
      kept.push({ m, text });
      // the newest marks always read back whole; the oldest of those kept may be gone
      expect(ring.bytes(m)!.toString(k % 2 === 0 ? 'latin1' : 'utf8')).toBe(
        k % 2 === 0 ? `${head.toString('latin1')}${text}` : ` [← ${text}`,
      );
    }
    const newest = kept[kept.length - 1]!.m.at + kept[kept.length - 1]!.m.len;
    let gone = 0;
    for (const { m, text } of kept) {
      const b = ring.bytes(m);
      if (newest - m.at > RING) {
        expect(b).toBeNull();
        gone++;
      } else expect(b!.subarray(head.length).toString('latin1').length).toBe(text.length);
    }
    expect(gone).toBeGreaterThan(kept.length / 2);
  });

  it('refuses a mark longer than a sixteenth of the ring', () => {
    const ring = new MarkRing();
    expect(ring.put(null, 'x'.repeat(RING / 16 + 1), true)).toBeNull();
    expect(ring.put(null, 'é'.repeat(RING / 48 + 1), false)).toBeNull();
    const m = ring.put(null, 'ok', true)!;
    expect(m.at).toBe(0);
    expect(ring.bytes(m)!.toString()).toBe('ok');
  });
});

describe('Authors', () => {
  it('names an id by its latest string user_id, and says when that changes a name', () => {
    const a = new Authors();
    expect(a.pass('m_1', 7)).toBe(false); // no string user_id: unnamed
    expect(a.get('m_1')).toBeUndefined();
    expect(a.pass('m_1', 'priya')).toBe(true); // first name of an id that passed unnamed
    expect(a.pass('m_2', 'sam')).toBe(false);
    expect(a.pass('m_2', 'sam')).toBe(false);
    expect(a.pass('m_2', 7)).toBe(false); // keeps its name
    expect(a.pass('m_2', 'priya')).toBe(true);
    expect([a.get('m_1'), a.get('m_2'), a.get('m_3')]).toEqual(['priya', 'priya', undefined]);
  });
});
