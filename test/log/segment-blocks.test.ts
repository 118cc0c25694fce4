/**
 * lib/log/read/segment-blocks.ts: every reader gives exactly its segment's bytes, the descriptors open stay
 * within `maxOpen` whatever the number of writers (counted in /proc/self/fd), and an abort or closeAll
 * leaves none open. Real files, a real FsSegmentStore, and a real process under `ulimit -n`.
 */
import { spawnSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import { mkdirSync, readdirSync, readFileSync, truncateSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { newId } from '../../lib/log/format/ids.js';
import {
  openSegmentBlocks,
  type SegmentBlockReader,
  segmentBlockBytes,
  sessionDirFileSegments,
} from '../../lib/log/read/segment-blocks.js';
import { type ReplaySegment, sessionDirSegments } from '../../lib/log/replay/replay.js';
import { FsSegmentStore } from '../../lib/store/fs/segment-store.js';
import { tmpDirs } from '../support/tmp.js';

const tmp = tmpDirs('hansard-blocks-');

function openFds(): number {
  return readdirSync('/proc/self/fd').length;
}

/** A deterministic PRNG (mulberry32), so a failure can be replayed. */
function prng(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

/** 1 MiB of lines of mixed ASCII and multi-byte characters, from which the segments are cut. */
const TEXT = (() => {
  const rnd = prng(1);
  const alphabet = ['a', 'é', '€', '😀', '{"k":1}', '\n'];
  const parts: string[] = [];
  for (let n = 0; n < 1024 * 1024; ) {
    const s = alphabet[Math.floor(rnd() * alphabet.length)]!;
    parts.push(s);
    n += Buffer.byteLength(s);
  }
  return Buffer.from(parts.join(''));
})();

/** `bytes` bytes of text, cut anywhere (in the middle of a character too) from random places of TEXT. */
function text(bytes: number, rnd: () => number): Buffer {
  const pieces: Buffer[] = [];
  for (let n = 0; n < bytes; ) {
    const start = Math.floor(rnd() * TEXT.length);
    const piece = TEXT.subarray(start, Math.min(TEXT.length, start + bytes - n));
    pieces.push(piece);
    n += piece.length;
  }
  return Buffer.concat(pieces);
}

/** A session directory of `sizes.length` segments; returns it and each writer's bytes. */
function session(sizes: number[], rnd: () => number): { dir: string; bytes: Map<string, Buffer> } {
  const dir = join(tmp.make(), newId('s'));
  mkdirSync(dir);
  const bytes = new Map<string, Buffer>();
  for (const size of sizes) {
    const w = newId('w');
    const b = size === 0 ? Buffer.alloc(0) : text(size, rnd);
    writeFileSync(join(dir, `${w}.jsonl`), b);
    bytes.set(w, b);
  }
  return { dir, bytes };
}

/**
 * Reads every reader round-robin, `concurrency` readers' next() in flight at once, and returns each
 * writer's bytes and the most descriptors seen open above `base` (sampled as each block arrives).
 */
async function readRoundRobin(
  readers: SegmentBlockReader[],
  concurrency: number,
  base: number,
  rnd: () => number = Math.random,
): Promise<{ got: Map<string, Buffer>; peak: number }> {
  const got = new Map<string, Buffer[]>(readers.map((r) => [r.w, []]));
  let live = [...readers];
  let peak = 0;
  while (live.length > 0) {
    const ended = new Set<SegmentBlockReader>();
    for (let i = 0; i < live.length; i += concurrency) {
      const batch = live.slice(i, i + concurrency);
      await Promise.all(
        batch.map(async (r) => {
          const b = await r.next();
          peak = Math.max(peak, openFds() - base);
          if (b === null) ended.add(r);
          else got.get(r.w)!.push(Buffer.from(b)); // a copy: the reader reuses its buffer
        }),
      );
    }
    live = live.filter((r) => !ended.has(r));
    // Not always in the same order, so the least recently used is not always the next one.
    if (rnd() < 0.5) live.reverse();
  }
  return { got: new Map([...got].map(([w, bs]) => [w, Buffer.concat(bs)])), peak };
}

describe('openSegmentBlocks', () => {
  it('gives exactly each file’s bytes, for random sizes, budgets and limits, by position and by stream', async () => {
    const rnd = prng(16);
    for (let round = 0; round < 6; round++) {
      const writers = 1 + Math.floor(rnd() * 40);
      const sizes = Array.from({ length: writers }, () =>
        rnd() < 0.15 ? 0 : Math.floor(rnd() ** 3 * 3 * 1024 * 1024),
      );
      const { dir, bytes } = session(sizes, rnd);
      const budgetBytes = Math.floor(rnd() * 64 * 1024 * 1024);
      const maxOpen = 1 + Math.floor(rnd() * 10);
      const ways: [string, ReplaySegment[], boolean][] = [
        ['file', sessionDirFileSegments(dir), true],
        ['file async', sessionDirFileSegments(dir), false],
        ['stream', sessionDirSegments(dir), true],
      ];
      for (const [way, segments, syncFileReads] of ways) {
        const base = openFds();
        const blocks = openSegmentBlocks(segments, { budgetBytes, maxOpen, syncFileReads });
        expect(blocks.blockBytes).toBe(segmentBlockBytes(writers, budgetBytes));
        const { got, peak } = await readRoundRobin(blocks.readers, 1 + Math.floor(rnd() * 8), base, rnd);
        await blocks.closeAll();
        const label = `round ${round} ${way} writers ${writers} budget ${budgetBytes} maxOpen ${maxOpen}`;
        for (const [w, b] of bytes) expect(got.get(w)!.equals(b), `${label} ${w}`).toBe(true);
        // Positional reads hold exactly the pool; a stream's descriptor closes just after return().
        expect(peak, label).toBeLessThanOrEqual(way === 'stream' ? maxOpen + 2 : maxOpen);
        expect(openFds(), label).toBe(base);
      }
    }
  }, 60_000);

  it('2,000 writers read interleaved never hold more than maxOpen descriptors, and give every byte', async () => {
    const rnd = prng(2000);
    // A few lines each, and one writer in ten with three blocks' worth, so readers stay open across rounds.
    const sizes = Array.from({ length: 2000 }, (_, i) =>
      i % 10 === 0 ? 40 * 1024 : 200 + Math.floor(rnd() * 400),
    );
    const { dir, bytes } = session(sizes, rnd);
    for (const [maxOpen, syncFileReads] of [
      [16, true],
      [128, true],
      [128, false],
    ] as const) {
      const base = openFds();
      const blocks = openSegmentBlocks(sessionDirFileSegments(dir), {
        budgetBytes: 1,
        maxOpen,
        syncFileReads,
      });
      expect(blocks.blockBytes).toBe(16 * 1024);
      const { got, peak } = await readRoundRobin(blocks.readers, 64, base, rnd);
      await blocks.closeAll();
      expect(peak).toBeGreaterThan(0);
      expect(peak).toBeLessThanOrEqual(maxOpen);
      let total = 0;
      for (const [w, b] of bytes) {
        expect(got.get(w)!.equals(b), w).toBe(true);
        total += b.length;
      }
      expect([...got.values()].reduce((n, b) => n + b.length, 0)).toBe(total);
      expect(openFds()).toBe(base);
    }
  }, 60_000);

  it('reads a FsSegmentStore’s segments (the server’s) reopened at their offset, within the limit', async () => {
    const rnd = prng(7);
    const store = new FsSegmentStore(tmp.make());
    const sid = newId('s');
    const expected = new Map<string, Buffer>();
    const segments: ReplaySegment[] = [];
    for (let i = 0; i < 60; i++) {
      const w = newId('w');
      const key = { tenant: 'acme', sid, w };
      const a = text(Math.floor(rnd() * 50 * 1024), rnd);
      const b = text(Math.floor(rnd() * 50 * 1024), rnd);
      await store.putChunk(key, 0, a);
      await store.putChunk(key, a.length, b);
      const end = a.length + b.length;
      expected.set(w, Buffer.concat([a, b]));
      // as lib/service/shared/sources.ts builds them
      segments.push({
        w,
        open: (chunkBytes, signal, start = 0) => store.readSegment(key, end, start, chunkBytes, { signal }),
      });
    }
    const base = openFds();
    const blocks = openSegmentBlocks(segments, { budgetBytes: 256 * 1024, maxOpen: 6 });
    const { got, peak } = await readRoundRobin(blocks.readers, 8, base, rnd);
    await blocks.closeAll();
    for (const [w, b] of expected) expect(got.get(w)!.equals(b), w).toBe(true);
    expect(peak).toBeLessThanOrEqual(8);
    expect(openFds()).toBe(base);
  });

  it('an abort mid-read rejects next() with the reason and releases every descriptor', async () => {
    const rnd = prng(3);
    const { dir } = session(
      Array.from({ length: 200 }, () => 100 * 1024),
      rnd,
    );
    for (const [segments, syncFileReads] of [
      [sessionDirFileSegments(dir), true],
      [sessionDirFileSegments(dir), false],
      [sessionDirSegments(dir), true],
    ] as const) {
      const base = openFds();
      const ac = new AbortController();
      const blocks = openSegmentBlocks(segments, {
        budgetBytes: 1,
        maxOpen: 50,
        signal: ac.signal,
        syncFileReads,
      });
      // Every reader one block in, so 50 descriptors are open...
      for (const r of blocks.readers) expect(await r.next()).not.toBeNull();
      expect(openFds() - base).toBeGreaterThan(0);
      // ...then reads in flight on all of them when the abort comes.
      const inFlight = blocks.readers.map((r) => r.next());
      const reason = new Error('client gone');
      ac.abort(reason);
      const outcomes = await Promise.allSettled(inFlight);
      expect(outcomes.some((o) => o.status === 'rejected' && o.reason === reason)).toBe(true);
      await expect(blocks.readers[0]!.next()).rejects.toBe(reason);
      await blocks.closeAll();
      // A stream's descriptor closes in the next turns of the event loop.
      for (let i = 0; i < 50 && openFds() !== base; i++) await new Promise((r) => setTimeout(r, 10));
      expect(openFds()).toBe(base);
    }
  });

  it('closeAll after a partial read leaves no descriptor open', async () => {
    const { dir } = session(
      Array.from({ length: 30 }, () => 200 * 1024),
      prng(4),
    );
    const base = openFds();
    const blocks = openSegmentBlocks(sessionDirFileSegments(dir), { budgetBytes: 1, maxOpen: 10 });
    for (const r of blocks.readers.slice(0, 20)) await r.next();
    expect(openFds() - base).toBe(10);
    await blocks.closeAll();
    expect(openFds()).toBe(base);
    expect(await blocks.readers[0]!.next()).toBeNull();
  });

  it('a segment of size 0 gives null at once and opens nothing', async () => {
    const { dir } = session([0, 0], prng(5));
    const base = openFds();
    for (const segments of [sessionDirFileSegments(dir), sessionDirSegments(dir)]) {
      const blocks = openSegmentBlocks(segments, { maxOpen: 1 });
      for (const r of blocks.readers) {
        expect(await r.next()).toBeNull();
        expect(await r.next()).toBeNull();
      }
      expect(openFds()).toBe(base);
      await blocks.closeAll();
    }
  });

  it('gives exact bytes when a block ends in the middle of a multi-byte character', async () => {
    const dir = join(tmp.make(), newId('s'));
    mkdirSync(dir);
    const w = newId('w');
    // 'a' then 'é' (2 bytes) and '😀' (4): byte 16,384 is the second byte of an 'é'.
    const bytes = Buffer.from(`a${'é'.repeat(8200)}😀\n`);
    writeFileSync(join(dir, `${w}.jsonl`), bytes);
    for (const segments of [sessionDirFileSegments(dir), sessionDirSegments(dir)]) {
      const blocks = openSegmentBlocks(segments, { budgetBytes: 1 });
      const r = blocks.readers[0]!;
      const first = Buffer.from((await r.next())!);
      expect(first.length).toBe(16 * 1024);
      expect(first[first.length - 1]).toBe(0xc3); // the first byte of an 'é', its second in the next block
      const rest: Buffer[] = [];
      for (let b = await r.next(); b; b = await r.next()) rest.push(Buffer.from(b));
      expect(Buffer.concat([first, ...rest]).equals(bytes)).toBe(true);
      expect(Buffer.concat([first, ...rest]).toString('utf8')).toBe(bytes.toString('utf8'));
      await blocks.closeAll();
    }
  });

  it('keeps the size listed: bytes a writer appends afterwards are not read', async () => {
    const { dir, bytes } = session([30 * 1024], prng(6));
    const segments = sessionDirFileSegments(dir);
    const [w, b] = [...bytes][0]!;
    writeFileSync(join(dir, `${w}.jsonl`), Buffer.concat([b, Buffer.from('{"late":true}\n')]));
    const blocks = openSegmentBlocks(segments, { budgetBytes: 1 });
    const { got } = await readRoundRobin(blocks.readers, 1, openFds());
    await blocks.closeAll();
    expect(got.get(w)!.equals(b)).toBe(true);
    expect(readFileSync(join(dir, `${w}.jsonl`)).length).toBeGreaterThan(b.length);
  });
});

describe('a segment that changed under the reader', () => {
  it('a file cut below its listed size is an error, not a short segment, and its descriptor is closed', async () => {
    const { dir, bytes } = session([40 * 1024], prng(8));
    const segments = sessionDirFileSegments(dir);
    const [w] = [...bytes][0]!;
    const base = openFds();
    const blocks = openSegmentBlocks(segments, { budgetBytes: 1 });
    const r = blocks.readers[0]!;
    expect((await r.next())!.length).toBe(16 * 1024);
    truncateSync(join(dir, `${w}.jsonl`), 20 * 1024);
    await expect(r.next()).rejects.toThrow(`segment ${w} ends at byte ${20 * 1024}, listed as ${40 * 1024}`);
    expect(openFds()).toBe(base);
    await blocks.closeAll();
  });

  it('refuses a second next() on a reader while one is pending', async () => {
    const { dir } = session([40 * 1024], prng(9));
    const blocks = openSegmentBlocks(sessionDirFileSegments(dir), { budgetBytes: 1 });
    const r = blocks.readers[0]!;
    const first = r.next();
    await expect(r.next()).rejects.toThrow('next() while a read is pending');
    expect((await first)!.length).toBe(16 * 1024);
    await blocks.closeAll();
  });
});

describe('a process whose descriptor limit is below the number of writers', () => {
  const ROOT = join(import.meta.dirname, '../..');
  /** Reads the session in `dir` round-robin through the reader ('file', 'stream'), or opens every stream. */
  const SCRIPT = `
    import { createHash } from 'node:crypto';
    import { openSegmentBlocks, sessionDirFileSegments } from '${ROOT}/lib/log/read/segment-blocks.ts';
    import { sessionDirSegments } from '${ROOT}/lib/log/replay/replay.ts';
    const [dir, way] = process.argv.slice(-2);
    const segments = way === 'file' ? sessionDirFileSegments(dir) : sessionDirSegments(dir);
    if (way === 'all-at-once') {
      // what the merge did before: every segment's stream open at once
      const its = segments.map((s) => s.open(16 * 1024)[Symbol.asyncIterator]());
      await Promise.all(its.map((it) => it.next()));
      console.log('opened all');
      process.exit(0);
    }
    const blocks = openSegmentBlocks(segments, { budgetBytes: 16 * 1024 * 1024, maxOpen: 128 });
    const hashes = new Map(blocks.readers.map((r) => [r.w, createHash('sha256')]));
    let live = blocks.readers;
    while (live.length) {
      const next = [];
      for (const r of live) {
        const b = await r.next();
        if (b) { hashes.get(r.w).update(b); next.push(r); }
      }
      live = next;
    }
    await blocks.closeAll();
    const all = createHash('sha256');
    for (const s of segments) all.update(s.w + hashes.get(s.w).digest('hex'));
    console.log(all.digest('hex'));
  `;

  function run(script: string, dir: string, way: string) {
    return spawnSync(
      'bash',
      ['-c', `ulimit -n 512 && exec "${process.execPath}" --import tsx "${script}" "${dir}" ${way}`],
      { cwd: ROOT, encoding: 'utf8', timeout: 120_000 },
    );
  }

  it('reads 2,000 segments through the reader without EMFILE (and opening them all at once fails)', async () => {
    const rnd = prng(512);
    // Two blocks each at 2,000 writers (8 KiB blocks clamp to 16 KiB): every reader stays open after its first.
    const { dir, bytes } = session(
      Array.from({ length: 2000 }, () => 20 * 1024 + Math.floor(rnd() * 1024)),
      rnd,
    );
    const script = join(tmp.make(), 'read.mts');
    writeFileSync(script, SCRIPT);
    const all = createHash('sha256');
    for (const [w, b] of [...bytes].sort(([a], [b]) => (a < b ? -1 : 1)))
      all.update(w + createHash('sha256').update(b).digest('hex'));
    const expected = all.digest('hex');

    const control = run(script, dir, 'all-at-once');
    expect(control.status).not.toBe(0);
    expect(control.stderr).toContain('EMFILE');

    for (const way of ['file', 'stream']) {
      const r = run(script, dir, way);
      expect(r.stderr, way).not.toContain('EMFILE');
      expect(r.status, `${way}: ${r.stderr}`).toBe(0);
      expect(r.stdout.trim(), way).toBe(expected);
    }
  }, 120_000);
});
