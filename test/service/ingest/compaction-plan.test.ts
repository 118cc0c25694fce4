/**
 * The compaction plan (issue 17.2, lib/service/ingest/compaction.ts) and the tiling reads use
 * (lib/store/segment-objects.ts), on listings made by hand: the fewest objects that tile a range, the
 * objects a compaction explains and those it does not, runs of small objects cut at the run size, and
 * what is left alone.
 */
import { describe, expect, it } from 'vitest';
import { isSettled, planCompaction } from '../../../lib/service/ingest/compaction.js';
import type { WriterRecord } from '../../../lib/store/index.js';
import { fewestObjectTiling, type StoredSegmentObject, supersededObjects } from '../../../lib/store/index.js';

const chunk = (offset: number, size: number): StoredSegmentObject => ({
  name: `${offset}`,
  offset,
  size,
  compacted: false,
});
const run = (offset: number, end: number): StoredSegmentObject => ({
  name: `${offset}-${end}`,
  offset,
  size: end - offset,
  compacted: true,
});
const sorted = (xs: StoredSegmentObject[]) => [...xs].sort((a, b) => a.offset - b.offset || b.size - a.size);
const names = (xs: StoredSegmentObject[] | null | undefined) => xs?.map((x) => x.name);

describe('fewestObjectTiling', () => {
  it('takes a run instead of the chunks it holds, wherever they are listed', () => {
    const chunks = [0, 10, 20, 30, 40].map((o) => chunk(o, 10));
    expect(names(fewestObjectTiling(chunks, 50))).toEqual(['0', '10', '20', '30', '40']);
    const during = sorted([...chunks, run(10, 40)]);
    expect(names(fewestObjectTiling(during, 50))).toEqual(['0', '10-40', '40']);
    // some of its chunks deleted
    expect(
      names(fewestObjectTiling(sorted([chunk(0, 10), run(10, 40), chunk(30, 10), chunk(40, 10)]), 50)),
    ).toEqual(['0', '10-40', '40']);
    // a longer run over a shorter one (a late chunk compacted with the run before it)
    expect(names(fewestObjectTiling(sorted([run(0, 40), run(0, 50), chunk(40, 10)]), 50))).toEqual(['0-50']);
    // a reader whose end is older than the run: the run reaches past it
    expect(names(fewestObjectTiling([run(0, 50)], 35))).toEqual(['0-50']);
    expect(fewestObjectTiling([], 0)).toEqual([]);
  });

  it('with preferChunks (reads), takes a run only where the chunk objects it holds are gone', () => {
    const chunks = [0, 10, 20, 30, 40].map((o) => chunk(o, 10));
    const prefer = { preferChunks: true };
    const during = sorted([...chunks, run(10, 40)]);
    expect(names(fewestObjectTiling(during, 50, prefer))).toEqual(['0', '10', '20', '30', '40']);
    // the run beside its chunk objects is explained (shadowed), not a fault
    const t = fewestObjectTiling(during, 50, prefer)!;
    expect(names(supersededObjects(during, t).shadowed)).toEqual(['10-40']);
    expect(supersededObjects(during, t).unexplained).toEqual([]);
    // one of them deleted: the run
    const some = sorted([chunk(0, 10), run(10, 40), chunk(10, 10), chunk(30, 10), chunk(40, 10)]);
    expect(names(fewestObjectTiling(some, 50, prefer))).toEqual(['0', '10-40', '40']);
    // a read that ends inside the run reads the chunk objects, the run reaching past it explained
    const short = sorted([chunk(0, 10), chunk(10, 10), chunk(20, 10), run(10, 40)]);
    const ts = fewestObjectTiling(short, 25, prefer)!;
    expect(names(ts)).toEqual(['0', '10', '20']);
    expect(supersededObjects(short, ts).unexplained).toEqual([]);
    // two runs overlapping with different starts are a fault even beside their chunk objects
    const two = sorted([...chunks, run(0, 30), run(20, 50)]);
    expect(names(supersededObjects(two, fewestObjectTiling(two, 50, prefer)!).unexplained)).toEqual([
      '0-30',
      '20-50',
    ]);
  });

  it('is null when no chain of objects reaches the end, even when their union does', () => {
    expect(fewestObjectTiling([chunk(0, 10), chunk(20, 10)], 30)).toBeNull();
    // [0,15) and [10,30) cover [0,30) but neither starts where the other ends
    expect(fewestObjectTiling([chunk(0, 15), chunk(10, 20)], 30)).toBeNull();
  });
});

describe('supersededObjects', () => {
  it('explains objects inside a compacted object of the tiling, and no others', () => {
    const listed = sorted([chunk(0, 10), run(0, 30), chunk(10, 10), chunk(20, 10), chunk(30, 10)]);
    const tiling = fewestObjectTiling(listed, 40)!;
    const { superseded, unexplained } = supersededObjects(listed, tiling);
    expect(names(superseded)).toEqual(['0', '10', '20']);
    expect(unexplained).toEqual([]);
    // an object inside a chunk object is a fault no compaction explains
    const odd = sorted([chunk(0, 10), chunk(2, 3)]);
    expect(names(supersededObjects(odd, fewestObjectTiling(odd, 10)!).unexplained)).toEqual(['2']);
  });
});

describe('planCompaction', () => {
  const limits = { smallObjectBytes: 100, maxRunBytes: 250 };

  it('cuts runs of consecutive small objects at the run size, each of two objects at least', () => {
    // 7 small (60 B), then a large one, then 1 small, then 3 small
    const objects = [
      ...Array.from({ length: 7 }, (_, i) => chunk(i * 60, 60)),
      chunk(420, 500),
      chunk(920, 60),
    ];
    const plan = planCompaction(objects, 980, limits)!;
    expect(plan.runs.map((r) => [r.start, r.end, r.objects.length])).toEqual([
      [0, 240, 4],
      [240, 420, 3],
    ]);
    expect(plan.leftovers).toEqual([]);
    expect(plan).toMatchObject({ objects: 9, tiling: 9 });
  });

  it('takes a small run with the chunks after it, and the leftovers of a stopped compaction', () => {
    const objects = sorted([run(0, 60), chunk(0, 30), chunk(30, 30), chunk(60, 20), chunk(80, 20)]);
    const plan = planCompaction(objects, 100, limits)!;
    expect(plan.leftovers.map((l) => [l.holder.name, names(l.objects)])).toEqual([['0-60', ['0', '30']]]);
    expect(plan.runs.map((r) => [r.start, r.end, names(r.objects)])).toEqual([
      [0, 100, ['0-60', '60', '80']],
    ]);
  });

  it('plans nothing for a layout it cannot explain, or a segment with one small object', () => {
    expect(planCompaction([chunk(0, 10), chunk(20, 10)], 30, limits)).toBeNull();
    expect(planCompaction(sorted([chunk(0, 10), chunk(2, 3)]), 10, limits)).toBeNull();
    expect(planCompaction([chunk(0, 10)], 10, limits)!.runs).toEqual([]);
  });
});

describe('isSettled', () => {
  const w = (ended: boolean, updated_at: string) => ({ ended, updated_at }) as WriterRecord;
  it('is true for an ended writer, or one without a chunk for an hour', () => {
    const now = new Date('2030-01-01T12:00:00Z');
    expect(isSettled(w(true, '2030-01-01T11:59:59Z'), now)).toBe(true);
    expect(isSettled(w(false, '2030-01-01T11:00:01Z'), now)).toBe(false);
    expect(isSettled(w(false, '2030-01-01T11:00:00Z'), now)).toBe(true);
  });
});
