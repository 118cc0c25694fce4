import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import {
  type LineProblem,
  listSegments,
  type MergedEvent,
  type MergeSource,
  mergeSegmentBatches,
  mergeSegmentBatchesKeepingProblems,
  mergeSegments,
  newId,
  parseTs,
  readSegment,
  sessionDirSources,
} from '../../lib/log/index.js';

const FIXTURES = 'test/fixtures/multi-writer';

/** The committed multi-writer session (see its README.md). */
function fixtureDir(): string {
  const dirs = readdirSync(FIXTURES).filter((n) => n.startsWith('s_'));
  expect(dirs).toHaveLength(1);
  return join(FIXTURES, dirs[0]!);
}

async function merge(sources: MergeSource[], onProblem?: (w: string, p: LineProblem) => void) {
  const out: MergedEvent[] = [];
  for await (const m of mergeSegments(sources, { onProblem })) out.push(m);
  return out;
}

/** Every line of every segment of a session directory, with its writer, in file order. */
function segmentLines(dir: string): { w: string; lines: string[] }[] {
  return listSegments(dir).map((s) => ({
    w: s.w,
    lines: readFileSync(s.path, 'utf8').split('\n').filter(Boolean),
  }));
}

describe('merging the committed three-writer fixture', () => {
  it('is three segments written by three processes, one of whose clocks stepped back by about 5 s', () => {
    const segs = segmentLines(fixtureDir());
    expect(segs).toHaveLength(3);
    const stepped = segs.filter(({ lines }) => {
      const ts = lines.map((l) => parseTs((JSON.parse(l) as { ts: string }).ts)!.micros);
      return ts.some((t, i) => i > 0 && ts[i - 1]! - t > 4_000_000);
    });
    expect(stepped).toHaveLength(1);
  });

  it('gives every event of every segment exactly once', async () => {
    const dir = fixtureDir();
    const segs = segmentLines(dir);
    const all = segs.flatMap((s) => s.lines);
    const merged = await merge(sessionDirSources(dir));
    expect(merged).toHaveLength(all.length);
    expect(new Set(merged.map((m) => `${m.event.w}:${m.event.seq}`)).size).toBe(all.length);
    expect(merged.map((m) => m.event.raw).sort()).toEqual([...all].sort());
  });

  it('orders events by the merge key: running max ts, then writer id', async () => {
    const merged = await merge(sessionDirSources(fixtureDir()));
    for (let i = 1; i < merged.length; i++) {
      const a = merged[i - 1]!;
      const b = merged[i]!;
      expect(a.orderMicros).toBeLessThanOrEqual(b.orderMicros);
      if (a.orderMicros === b.orderMicros && a.event.w !== b.event.w) {
        expect(a.event.w < b.event.w).toBe(true);
      }
    }
    // the writers really interleave in this fixture
    let switches = 0;
    for (let i = 1; i < merged.length; i++) if (merged[i]!.event.w !== merged[i - 1]!.event.w) switches++;
    expect(switches).toBeGreaterThan(5);
  });

  it("keeps each writer's events in seq order, also for the writer whose clock stepped back", async () => {
    const merged = await merge(sessionDirSources(fixtureDir()));
    const byWriter = new Map<string, number[]>();
    for (const { event } of merged) byWriter.set(event.w, [...(byWriter.get(event.w) ?? []), event.seq]);
    expect(byWriter.size).toBe(3);
    for (const seqs of byWriter.values()) expect(seqs).toEqual(seqs.map((_, i) => i + 1));
    // the stepped-back writer's late events are merged under the latest instant it had reached
    const steppedBack = merged.filter((m) => m.event.tsMicros! < m.orderMicros);
    expect(steppedBack.length).toBeGreaterThan(0);
    expect(new Set(steppedBack.map((m) => m.event.w)).size).toBe(1);
  });

  it('equals a stable sort of all events by (running max ts of their writer, w)', async () => {
    const segs = segmentLines(fixtureDir());
    const reference = segs
      .flatMap(({ w, lines }) => {
        let max = Number.NEGATIVE_INFINITY;
        return lines.map((raw) => {
          max = Math.max(max, parseTs((JSON.parse(raw) as { ts: string }).ts)!.micros);
          return { w, key: max, raw };
        });
      })
      // Array.prototype.sort is stable: each writer's lines keep their file order
      .sort((a, b) => a.key - b.key || (a.w < b.w ? -1 : a.w > b.w ? 1 : 0));
    const merged = await merge(sessionDirSources(fixtureDir()));
    expect(merged.map((m) => m.event.raw)).toEqual(reference.map((r) => r.raw));
    expect(merged.map((m) => m.orderMicros)).toEqual(reference.map((r) => r.key));
  });
});

const SID = 's_01KZVVGRNR3D5V708Z4NPGG11H';
const W_A = 'w_01KZVVGRNR00000000000000AA';
const W_B = 'w_01KZVVGRNR00000000000000BB';

/** A hand-built segment line: a note of writer `w` at `ts`. */
function line(w: string, seq: number, ts: string): string {
  return JSON.stringify({
    v: 3,
    sid: SID,
    w,
    seq,
    id: newId('e'),
    ts,
    mono: seq / 1000,
    type: 'note',
    author: w,
    text: `${w} ${seq}`,
    redacted: [],
  });
}

/** A merge source from a segment's text. */
const source = (w: string, text: string): MergeSource => ({ w, items: readSegment([Buffer.from(text)]) });

const T1 = '2026-08-12T20:44:44.000001Z';
const T2 = '2026-08-12T20:44:45.000000Z';
const T3 = '2026-08-12T20:44:46.000000Z';
const key = (m: MergedEvent) => `${m.event.w === W_A ? 'A' : 'B'}${m.event.seq}`;

describe('mergeSegments on hand-built segments', () => {
  it('sorts events with identical ts by writer id, whatever order the sources are given in', async () => {
    const a = `${line(W_A, 1, T1)}\n${line(W_A, 2, T2)}\n${line(W_A, 3, T2)}\n`;
    const b = `${line(W_B, 1, T1)}\n${line(W_B, 2, T2)}\n`;
    const expected = ['A1', 'B1', 'A2', 'A3', 'B2'];
    expect((await merge([source(W_B, b), source(W_A, a)])).map(key)).toEqual(expected);
    expect((await merge([source(W_A, a), source(W_B, b)])).map(key)).toEqual(expected);
  });

  it('orders by the instant a ts denotes, not by its text', async () => {
    // 22:44:44.5+02:00 is 20:44:44.5Z: after T1, before T2
    const a = `${line(W_A, 1, T2)}\n`;
    const b = `${line(W_B, 1, '2026-08-12T22:44:44.5+02:00')}\n`;
    const merged = await merge([source(W_A, a), source(W_B, b), source(W_A, `${line(W_A, 1, T1)}\n`)]);
    expect(merged.map((m) => m.event.ts)).toEqual([T1, '2026-08-12T22:44:44.5+02:00', T2]);
  });

  it('keeps a writer whose clock steps back in seq order, right after the latest instant it reached', async () => {
    const a = `${line(W_A, 1, T1)}\n${line(W_A, 2, T3)}\n${line(W_A, 3, T1)}\n${line(W_A, 4, T2)}\n`;
    const b = `${line(W_B, 1, T2)}\n${line(W_B, 2, T3)}\n`;
    const merged = await merge([source(W_A, a), source(W_B, b)]);
    expect(merged.map(key)).toEqual(['A1', 'B1', 'A2', 'A3', 'A4', 'B2']);
    expect(merged.map((m) => m.orderMicros)).toEqual([T1, T2, T3, T3, T3, T3].map((t) => parseTs(t)!.micros));
  });

  it('sorts a ts that is not a timestamp first, or under its writer’s running max', async () => {
    const a = `${line(W_A, 1, 'garbage')}\n${line(W_A, 2, T2)}\n${line(W_A, 3, 'later')}\n`;
    const b = `${line(W_B, 1, T1)}\n${line(W_B, 2, T3)}\n`;
    const merged = await merge([source(W_A, a), source(W_B, b)]);
    expect(merged.map(key)).toEqual(['A1', 'B1', 'A2', 'A3', 'B2']);
  });

  it('passes problem lines to onProblem with their writer and leaves them out of the stream', async () => {
    const torn = line(W_A, 2, T2).slice(0, 50);
    const a = `${line(W_A, 1, T1)}\n${torn}\n[1,2]\n${line(W_A, 2, T2)}\n${line(W_A, 3, T3).slice(0, 40)}`;
    const b = `\0\0\0\0\n${line(W_B, 1, T1)}\n`;
    const seen: [string, string, number][] = [];
    const merged = await merge([source(W_A, a), source(W_B, b)], (w, p) => {
      seen.push([w, p.code, p.line]);
    });
    expect(merged.map(key)).toEqual(['A1', 'B1', 'A2']);
    expect(seen.sort()).toEqual(
      [
        [W_A, 'truncated_line', 2],
        [W_A, 'malformed_line', 3],
        [W_A, 'truncated_line', 5],
        [W_B, 'malformed_line', 1],
      ].sort(),
    );
  });

  it('gives nothing for no sources or empty segments', async () => {
    expect(await merge([])).toEqual([]);
    expect(await merge([source(W_A, ''), source(W_B, '\n')], () => {})).toEqual([]);
  });

  it('leaves problem lines out without an onProblem to tell', async () => {
    const a = `${line(W_A, 1, T1)}\n[1,2]\n${line(W_A, 2, T2)}\n`;
    const b = `not json\n${line(W_B, 1, T1)}\n`;
    expect((await merge([source(W_A, a), source(W_B, b)])).map(key)).toEqual(['A1', 'B1', 'A2']);
    const kept: string[] = [];
    for await (const batch of mergeSegmentBatchesKeepingProblems([source(W_A, a), source(W_B, b)])) {
      for (const m of batch)
        kept.push('event' in m ? key(m) : `${m.w === W_A ? 'A' : 'B'}!${m.problem.line}`);
    }
    // quarantined lines stay, each under its writer's previous event's key (first when there is none;
    // A's at T1 sorts before B1 at T1 by writer id)
    expect(kept).toEqual(['B!1', 'A1', 'A!2', 'B1', 'A2']);
  });
});

describe('the batches of a merge', () => {
  const many = (w: string, n: number, pad = 0) =>
    Array.from({ length: n }, (_, i) => {
      const l = line(w, i + 1, T1);
      return `${pad ? `${l.slice(0, -1)},"pad":"${'x'.repeat(pad)}"}` : l}\n`;
    }).join('');
  const batchesOf = async (sources: MergeSource[]) => {
    const sizes: Array<{ items: number; bytes: number }> = [];
    for await (const batch of mergeSegmentBatches(sources)) {
      sizes.push({ items: batch.length, bytes: batch.reduce((n, m) => n + m.event.raw.length, 0) });
    }
    return sizes;
  };

  it('hold about 64 KiB of lines (one line past it at most), none empty, in merge order', async () => {
    const sizes = await batchesOf([source(W_A, many(W_A, 1500)), source(W_B, many(W_B, 1500))]);
    expect(sizes.reduce((n, s) => n + s.items, 0)).toBe(3000);
    // ~280-byte lines: the byte bound comes first (the 1,024-item bound is for lines under 64 bytes)
    expect(sizes.length).toBeGreaterThanOrEqual(10);
    for (const s of sizes) {
      expect(s.items).toBeGreaterThan(0);
      expect(s.items).toBeLessThanOrEqual(1024);
      expect(s.bytes).toBeLessThan(64 * 1024 + 400);
    }
    for (const s of sizes.slice(0, -1)) expect(s.bytes).toBeGreaterThanOrEqual(64 * 1024);
  });

  it('hold about 64 KiB of long lines at most (one line past it), not 1,024 of them', async () => {
    const sizes = await batchesOf([source(W_A, many(W_A, 60, 10_000))]);
    expect(sizes.reduce((n, s) => n + s.items, 0)).toBe(60);
    expect(sizes.length).toBeGreaterThanOrEqual(8);
    const longest = 10_000 + 400;
    for (const s of sizes) expect(s.bytes).toBeLessThan(64 * 1024 + longest);
    expect(sizes[0]!.bytes).toBeGreaterThanOrEqual(64 * 1024);
  });
});
