/**
 * lib/log/replay/id-table.ts: ids interned exactly (numbers dense, in order of first sight, each id given back as
 * the string it was added as) whatever their shape, and whatever the hash says: every id colliding (a
 * mask of 0), ids whose real FNV-1a hashes are equal, and ids past the pages' end.
 */
import { describe, expect, it } from 'vitest';
import { IdTable, Int32Column } from '../../lib/log/replay/id-table.js';

const CROCKFORD = '0123456789ABCDEFGHJKMNPQRSTVWXYZ';

/** A ULID-shaped id from `n` (deterministic): prefix letter, `_`, 26 Crockford digits, the first 0-7. */
function ulid(prefix: string, n: number): string {
  let s = '';
  let x = n;
  for (let i = 0; i < 25; i++) {
    s = CROCKFORD[x % 32] + s;
    x = Math.floor(x / 32);
  }
  return `${prefix}_${String(n % 8)}${s}`;
}

/** Ids of every shape the table treats apart, none equal to another. */
function oddShapes(): string[] {
  const u = ulid('m', 12345);
  return [
    '',
    '_',
    u,
    u.toLowerCase(), // not canonical Crockford: kept as its bytes, and apart from `u`
    `${u.slice(0, 2)}8${u.slice(3)}`, // first digit above 7: 130 bits, not packed
    `M${u.slice(1)}`, // upper-case prefix
    `${u.slice(0, 27)}I`, // a letter Crockford leaves out
    `${u}X`, // 29 characters
    u.slice(0, 27),
    'm_01KZ0000000001000000000007',
    'person-3',
    'ünïcødé',
    'emoji 🎉 id',
    'lone \ud800 high',
    'lone \udbff other high', // same UTF-8 as the one above (U+FFFD): must stay apart
    'lone \udc00 low',
    'a'.repeat(254),
    'a'.repeat(255),
    'é'.repeat(100), // 200 bytes
    'é'.repeat(128), // 256 bytes: over the length byte
    'x'.repeat(5000),
  ];
}

function checkAll(t: IdTable, ids: string[]): void {
  ids.forEach((id, k) => {
    expect(t.find(id)).toBe(k);
    expect(t.add(id)).toBe(k);
    expect(t.text(k)).toBe(id);
  });
  expect(t.size).toBe(ids.length);
}

describe('IdTable', () => {
  it('numbers distinct ids densely and gives each back exactly, whatever its shape', () => {
    const t = new IdTable();
    const ids = oddShapes();
    expect(new Set(ids).size).toBe(ids.length);
    expect(ids.map((id) => t.add(id))).toEqual(ids.map((_, k) => k));
    checkAll(t, ids);
    expect(t.find('never added')).toBe(-1);
    expect(t.find(ulid('m', 54321))).toBe(-1);
    expect(t.find('lone \udfff low')).toBe(-1);
  });

  it('keeps packed ULIDs apart from every other id, across many pages and index growths', () => {
    const t = new IdTable();
    const ids: string[] = [];
    for (let n = 0; n < 120_000; n++) {
      ids.push(ulid('mtae'[n % 4]!, n * 7919));
      if (n % 1000 === 0) ids.push(`plain-${n}`);
    }
    for (const id of ids) t.add(id);
    checkAll(t, ids);
    // the 128 bits are all used: ids differing only in their last or their first digit
    const last = ulid('m', 0);
    const first = `m_7${last.slice(3)}`;
    expect(t.find(`${last.slice(0, 27)}Z`)).toBe(-1);
    const k = t.add(first);
    expect(t.text(k)).toBe(first);
    expect(t.find(last)).not.toBe(k);
  });

  it('keeps ids apart when every hash is equal (a mask of 0) and when one hash in 4 is', () => {
    for (const mask of [0, 3]) {
      const t = new IdTable({ hashMask: mask });
      const ids = [...oddShapes()];
      for (let n = 0; n < 3000; n++) ids.push(n % 2 ? ulid('a', n) : `id-${n}`);
      for (const id of ids) t.add(id);
      checkAll(t, ids);
      expect(t.find('id-3000')).toBe(-1);
      expect(t.find(ulid('a', 3001))).toBe(-1);
    }
  });

  it('keeps ids apart whose real 32-bit FNV-1a hashes are equal', () => {
    // The table hashes an id's entry: its length byte, then its bytes. Among 200,000 such strings a few
    // pairs share all 32 bits (about 4.7 expected); find them, then intern both of each pair.
    const fnv = (s: string): number => {
      let h = Math.imul(0x811c9dc5 ^ s.length, 0x01000193);
      for (let i = 0; i < s.length; i++) h = Math.imul(h ^ s.charCodeAt(i), 0x01000193);
      return h >>> 0;
    };
    const byHash = new Map<number, string>();
    const pairs: [string, string][] = [];
    for (let n = 0; n < 400_000 && pairs.length < 2; n++) {
      const s = `k${n}`;
      const other = byHash.get(fnv(s));
      if (other !== undefined) pairs.push([other, s]);
      else byHash.set(fnv(s), s);
    }
    expect(pairs.length).toBeGreaterThan(0);
    const t = new IdTable();
    const ids = pairs.flat();
    for (const id of ids) t.add(id);
    checkAll(t, ids);
  });

  it('goes on past its last page, the ids after it kept beside the pages', () => {
    const t = new IdTable({ maxPages: 1 });
    const ids: string[] = [];
    // 18-byte entries: a 1 MiB page holds 58,254 of them
    for (let n = 0; n < 70_000; n++) ids.push(ulid('t', n));
    for (const id of ids) t.add(id);
    checkAll(t, ids);
    expect(t.find(ulid('t', 70_000))).toBe(-1);
  });
});

describe('Int32Column', () => {
  it('reads what was set and `fill` elsewhere, across pages', () => {
    const c = new Int32Column(-1);
    expect(c.get(0)).toBe(-1);
    c.set(5, 7);
    c.set(200_000, -42);
    c.set(65_536, 2 ** 31 - 1);
    expect([c.get(5), c.get(200_000), c.get(65_536), c.get(65_535), c.get(199_999), c.get(10 ** 7)]).toEqual([
      7,
      -42,
      2 ** 31 - 1,
      -1,
      -1,
      -1,
    ]);
    const z = new Int32Column();
    z.set(3, 1);
    expect([z.get(2), z.get(3), z.get(70_000)]).toEqual([0, 1, 0]);
  });
});
