/**
 * The one contract every `SegmentStore` adapter passes (DESIGN §1, STYLE §3): each adapter's test file
 * calls `runSegmentStoreContract` with a factory of fresh stores. What an adapter may do differently is an
 * option (`unacknowledged`), not a test of its name; a case an adapter does not run is listed in `skip`
 * with the reason, and shows as skipped with it.
 */
import { randomBytes } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { newId } from '../../lib/log/index.js';
import { ChunkConflictError, type SegmentKey, type SegmentStore } from '../../lib/store/index.js';

/** A fresh store and how to dispose of it. */
export interface StoreHandle {
  store: SegmentStore;
  cleanup: () => Promise<void>;
  /** requests made to the backend so far, when the adapter can count them (to show "before any I/O") */
  requests?: () => number;
}

export interface SegmentStoreContractOptions {
  name: string;
  newStore: () => Promise<StoreHandle>;
  /**
   * What the adapter does with other bytes at an offset past the indexed length (left by a crash, or by
   * a client that has not advanced the index yet): `replace` them at once (one process whose appends are
   * serialized), or `replace-when-stale`: refuse with ChunkConflictError while they are fresh and replace
   * them once stale; `newStaleStore` gives a store for which everything stored is already stale.
   */
  unacknowledged:
    | { policy: 'replace' }
    | { policy: 'replace-when-stale'; newStaleStore: () => Promise<StoreHandle> };
  /** case title → why this adapter does not run it (a sentence, never empty) */
  skip?: Record<string, string>;
}

/** Case titles, for `skip`. */
export const CASES = {
  roundTrip: 'reads back the exact bytes of a chunk',
  contiguous: 'reads several chunks as one contiguous stream',
  subRange: 'reads a sub-range [start, end) across and within chunks',
  emptyRange: 'yields nothing for an empty range',
  nothingStored: 'yields nothing for a writer with nothing stored',
  idempotent: 'accepts the same chunk twice at its offset (a retry)',
  invalidKey: 'throws TypeError for a key with an invalid id, before any I/O',
  tenants: 'keeps two tenants with the same session and writer ids apart',
  pastEnd: 'does not return bytes past end (an unacknowledged chunk)',
  freshUnacked: 'other bytes at a fresh unacknowledged offset: replaced or refused as the adapter says',
  staleUnacked: 'other bytes at a stale unacknowledged offset are replaced, acknowledged bytes untouched',
  concurrentSame: 'two concurrent puts of the same chunk both resolve',
  concurrentDifferent: 'two concurrent puts of different bytes at one offset leave one of them whole',
  binary: 'stores invalid UTF-8 and NUL bytes byte-exact',
  large: 'stores a 5 MiB chunk and streams it back in pieces',
  missing: 'throws naming the missing range when the stored bytes do not reach end',
} as const;

/** Registers the contract's cases for one adapter. */
export function runSegmentStoreContract(opts: SegmentStoreContractOptions): void {
  const skip = opts.skip ?? {};
  const titles = new Set<string>(Object.values(CASES));
  for (const [title, reason] of Object.entries(skip)) {
    if (!titles.has(title)) throw new Error(`skip names no contract case: ${title}`);
    if (reason.trim() === '') throw new Error(`skip of "${title}" gives no reason`);
  }

  /** One case, run against a fresh store (or skipped with its reason). */
  const contractCase = (
    title: string,
    body: (h: StoreHandle) => Promise<void>,
    factory: () => Promise<StoreHandle> = opts.newStore,
  ) => {
    it(title, async (ctx) => {
      const reason = skip[title];
      if (reason !== undefined) {
        ctx.skip(reason);
        return;
      }
      const h = await factory();
      try {
        await body(h);
      } finally {
        await h.cleanup();
      }
    });
  };

  describe(`SegmentStore contract: ${opts.name}`, () => {
    contractCase(CASES.roundTrip, async ({ store }) => {
      const key = newKey();
      const bytes = lines('{"v":3,"seq":1}', '{"v":3,"seq":2}');
      await store.putChunk(key, 0, bytes);
      expect(await read(store, key, bytes.length)).toEqual(bytes);
    });

    contractCase(CASES.contiguous, async ({ store }) => {
      const key = newKey();
      const parts = [lines('a'), lines('bb', 'ccc'), lines('dddd'), lines('e')];
      await putAll(store, key, parts);
      const all = Buffer.concat(parts);
      expect(await read(store, key, all.length)).toEqual(all);
    });

    contractCase(CASES.subRange, async ({ store }) => {
      const key = newKey();
      const parts = [lines('first line'), lines('second', 'third'), lines('fourth')];
      await putAll(store, key, parts);
      const all = Buffer.concat(parts);
      const p0 = parts[0]!.length;
      const p1 = p0 + parts[1]!.length;
      const ranges: [number, number][] = [
        [0, 1], // the first byte
        [3, 5], // inside the first chunk
        [p0, p1], // exactly the second chunk
        [p0 - 2, p1 + 2], // straddles both boundaries
        [1, all.length - 1], // all but the ends
        [p1, all.length], // the last chunk to the end
        [all.length - 1, all.length], // the last byte
      ];
      for (const [start, end] of ranges) {
        expect(await read(store, key, end, start), `[${start}, ${end})`).toEqual(all.subarray(start, end));
      }
    });

    contractCase(CASES.emptyRange, async ({ store }) => {
      const key = newKey();
      const bytes = lines('x', 'y');
      await store.putChunk(key, 0, bytes);
      for (const [start, end] of [
        [0, 0],
        [2, 2],
        [bytes.length, bytes.length],
        [3, 1],
      ] as const) {
        expect(await pieces(store, key, end, start), `[${start}, ${end})`).toEqual([]);
      }
    });

    contractCase(CASES.nothingStored, async ({ store }) => {
      expect(await pieces(store, newKey(), 0)).toEqual([]);
    });

    contractCase(CASES.idempotent, async ({ store }) => {
      const key = newKey();
      const a = lines('one');
      const b = lines('two', 'three');
      await store.putChunk(key, 0, a);
      await store.putChunk(key, 0, a);
      await store.putChunk(key, a.length, b);
      await store.putChunk(key, a.length, b);
      expect(await read(store, key, a.length + b.length)).toEqual(Buffer.concat([a, b]));
    });

    contractCase(CASES.invalidKey, async ({ store, requests }) => {
      const good = newKey();
      const bad: SegmentKey[] = [
        { ...good, tenant: '../other' },
        { ...good, tenant: 'Upper' },
        { ...good, tenant: '' },
        { ...good, sid: 'not-a-session' },
        { ...good, sid: newId('w') }, // a valid id of the wrong kind
        { ...good, sid: `${good.sid}/../x` },
        { ...good, w: 'w_../../etc' },
        { ...good, w: `${good.w}/nested` },
        { ...good, w: good.w.toLowerCase() },
      ];
      const before = requests?.();
      for (const key of bad) {
        await expect(store.putChunk(key, 0, lines('x')), JSON.stringify(key)).rejects.toThrow(TypeError);
        await expect(read(store, key, 2), JSON.stringify(key)).rejects.toThrow(TypeError);
      }
      if (requests) expect(requests()).toBe(before);
    });

    contractCase(CASES.tenants, async ({ store }) => {
      const a = newKey();
      const b = { ...a, tenant: `${a.tenant}-b` };
      const bytesA = lines('tenant a');
      const bytesB = lines('tenant b, longer');
      await store.putChunk(a, 0, bytesA);
      await store.putChunk(b, 0, bytesB);
      expect(await read(store, a, bytesA.length)).toEqual(bytesA);
      expect(await read(store, b, bytesB.length)).toEqual(bytesB);
    });

    contractCase(CASES.pastEnd, async ({ store }) => {
      const key = newKey();
      const acked = lines('acknowledged');
      const unacked = lines('never acknowledged');
      await store.putChunk(key, 0, acked);
      await store.putChunk(key, acked.length, unacked);
      expect(await read(store, key, acked.length)).toEqual(acked);
    });

    contractCase(CASES.freshUnacked, async ({ store }) => {
      const key = newKey();
      const acked = lines('acknowledged');
      const crashed = lines('left by a crash, longer than what replaces it');
      const other = lines('other bytes');
      await store.putChunk(key, 0, acked);
      await store.putChunk(key, acked.length, crashed);
      if (opts.unacknowledged.policy === 'replace') {
        await store.putChunk(key, acked.length, other);
        await expectAppendable(store, key, Buffer.concat([acked, other]));
      } else {
        await expect(store.putChunk(key, acked.length, other)).rejects.toThrow(ChunkConflictError);
        expect(await read(store, key, acked.length + crashed.length)).toEqual(
          Buffer.concat([acked, crashed]),
        );
      }
    });

    contractCase(
      CASES.staleUnacked,
      async ({ store }) => {
        const key = newKey();
        const acked = lines('acknowledged');
        const crashed = lines('left by a crash, longer than what replaces it');
        const other = lines('other bytes');
        await store.putChunk(key, 0, acked);
        await store.putChunk(key, acked.length, crashed);
        await store.putChunk(key, acked.length, other);
        await expectAppendable(store, key, Buffer.concat([acked, other]));
      },
      opts.unacknowledged.policy === 'replace-when-stale' ? opts.unacknowledged.newStaleStore : opts.newStore,
    );

    contractCase(CASES.concurrentSame, async ({ store }) => {
      const key = newKey();
      const first = lines('first');
      const next = lines('the next chunk', 'sent twice at once');
      await store.putChunk(key, 0, first);
      await Promise.all([store.putChunk(key, first.length, next), store.putChunk(key, first.length, next)]);
      expect(await read(store, key, first.length + next.length)).toEqual(Buffer.concat([first, next]));
    });

    contractCase(CASES.concurrentDifferent, async ({ store }) => {
      const key = newKey();
      const x = lines('xxxxxxxx');
      const y = lines('yyyyyyyy');
      const results = await Promise.allSettled([store.putChunk(key, 0, x), store.putChunk(key, 0, y)]);
      const stored = await read(store, key, x.length);
      expect([x.toString(), y.toString()]).toContain(stored.toString());
      if (opts.unacknowledged.policy === 'replace') {
        expect(results.map((r) => r.status)).toEqual(['fulfilled', 'fulfilled']);
      } else {
        const won = results.findIndex((r) => r.status === 'fulfilled');
        const lost = results.find((r) => r.status === 'rejected') as PromiseRejectedResult | undefined;
        expect(lost?.reason).toBeInstanceOf(ChunkConflictError);
        expect(stored).toEqual(won === 0 ? x : y);
      }
    });

    contractCase(CASES.binary, async ({ store }) => {
      const key = newKey();
      const bytes = Buffer.from([
        0x7b, 0xff, 0xfe, 0x00, 0x00, 0xc3, 0x28, 0xe2, 0x82, 0x0a, 0x00, 0x0a, 0xed, 0xa0, 0x80, 0x0a,
      ]);
      await store.putChunk(key, 0, bytes);
      const tail = Buffer.from([0x00, 0x00, 0x00, 0x0a]);
      await store.putChunk(key, bytes.length, tail);
      expect(await read(store, key, bytes.length + tail.length)).toEqual(Buffer.concat([bytes, tail]));
      expect(await read(store, key, bytes.length + 2, 3)).toEqual(
        Buffer.concat([bytes, tail]).subarray(3, bytes.length + 2),
      );
    });

    contractCase(CASES.large, async ({ store }) => {
      const key = newKey();
      const head = lines('head');
      const big = randomLines(5 * 1024 * 1024);
      await store.putChunk(key, 0, head);
      await store.putChunk(key, head.length, big);
      const got = await pieces(store, key, head.length + big.length);
      expect(got.length).toBeGreaterThan(1);
      expect(Buffer.concat(got).equals(Buffer.concat([head, big]))).toBe(true);
      const mid = head.length + 3 * 1024 * 1024;
      expect(
        (await read(store, key, mid + 10, mid - 10)).equals(
          big.subarray(mid - 10 - head.length, mid + 10 - head.length),
        ),
      ).toBe(true);
    });

    contractCase(CASES.missing, async ({ store }) => {
      const key = newKey();
      const bytes = lines('only this much');
      await store.putChunk(key, 0, bytes);
      await expect(read(store, key, bytes.length + 5)).rejects.toThrow(
        new RegExp(`missing bytes \\[${bytes.length}, ${bytes.length + 5}\\)`),
      );
      await expect(read(store, newKey(), 3)).rejects.toThrow(/missing bytes \[0, 3\)/);
    });
  });
}

/** A key with fresh ids (a fresh tenant name too), so cases may share one backend. */
function newKey(): SegmentKey {
  return { tenant: `contract-${randomBytes(4).toString('hex')}`, sid: newId('s'), w: newId('w') };
}

/** Each argument as one line, `\n`-terminated, as one buffer. */
function lines(...texts: string[]): Buffer {
  return Buffer.from(texts.map((t) => `${t}\n`).join(''), 'utf8');
}

/** `size` bytes of random lines (hex text, each ending in `\n`). */
function randomLines(size: number): Buffer {
  const b = Buffer.from(randomBytes(size / 2).toString('hex'), 'latin1');
  for (let i = 99; i < size; i += 100) b[i] = 0x0a;
  b[size - 1] = 0x0a;
  return b;
}

async function putAll(store: SegmentStore, key: SegmentKey, parts: Buffer[]): Promise<void> {
  let offset = 0;
  for (const p of parts) {
    await store.putChunk(key, offset, p);
    offset += p.length;
  }
}

/** What `readSegment` yields, each piece copied (and checked to be bytes). */
async function pieces(store: SegmentStore, key: SegmentKey, end: number, start?: number): Promise<Buffer[]> {
  const out: Buffer[] = [];
  for await (const piece of store.readSegment(key, end, start)) {
    expect(piece).toBeInstanceOf(Uint8Array);
    out.push(Buffer.from(piece));
  }
  return out;
}

async function read(store: SegmentStore, key: SegmentKey, end: number, start?: number): Promise<Buffer> {
  return Buffer.concat(await pieces(store, key, end, start));
}

/** The segment reads as `expected`, and the next chunk appends right after it (no leftover bytes). */
async function expectAppendable(store: SegmentStore, key: SegmentKey, expected: Buffer): Promise<void> {
  expect(await read(store, key, expected.length)).toEqual(expected);
  const next = lines('appended after');
  await store.putChunk(key, expected.length, next);
  expect(await read(store, key, expected.length + next.length)).toEqual(Buffer.concat([expected, next]));
}
