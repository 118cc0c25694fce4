/**
 * Compaction of small chunk objects (issue 17.2's last clause). On S3 every accepted chunk is an object,
 * and a hook-shipped session's chunks are ~1 KB: its replay costs ~1,100 GETs per MiB, a GB session a
 * million, more than the 15-minute builder can read. Once a writer has settled, runs of its consecutive
 * small objects are rewritten as one object each (at most `MAX_RUN_BYTES`), named by the range it holds,
 * and the small ones deleted; reads take the fewest objects that tile a range, so they read correctly
 * before, during and after (lib/store/segment-objects.ts).
 *
 * Settled: the writer recorded its `writer.end`, or nothing was appended to it for `SETTLED_AFTER_MS`
 * (a hook process that died never writes one). Its acknowledged bytes never change either way; a writer
 * still being written is left alone because its next chunks would leave a run of small objects behind
 * each compacted one, and its readers (the board's live view) read its newest chunks anyway. A chunk that
 * comes after a compaction is a small object after the run, compacted by a later pass with the chunks
 * after it; its retry is answered from the index (lib/service/ingest/ingest-chunk.ts `answerRetry`), which no
 * compaction touches.
 *
 * Never compacts bytes that do not match the index: each run's bytes are checked chunk by chunk against
 * the writer's chunk records (offset, length, SHA-256) before anything is written, and the store checks
 * the run's own SHA-256 as it receives it. A chunk object is deleted only once a compacted object
 * holding it is stored and checked. A run that does not match stops its writer (`mismatch`, for an
 * operator: `hansard verify` and the audit digests report what differs).
 */
import { createHash } from 'node:crypto';
import {
  CompactionConflictError,
  fewestObjectTiling,
  type SegmentCompactionStore,
  type SegmentKey,
  type StateStore,
  type StoredSegmentObject,
  supersededObjects,
  type WriterRecord,
} from '../../store/index.js';

/** An object under this many bytes is small: a run of them is worth rewriting as one. */
export const SMALL_OBJECT_BYTES = 1024 * 1024;
/** A compacted object holds at most this many bytes (held whole in memory while it is checked). */
export const MAX_RUN_BYTES = 64 * 1024 * 1024;
/** A run holds at least this many objects (one alone would only be renamed). */
export const MIN_RUN_OBJECTS = 2;
/** A writer with no chunk for this long is settled even without its `writer.end`. */
export const SETTLED_AFTER_MS = 60 * 60 * 1000;
/** Chunk records read per `listChunks` call. */
const RECORDS_PER_PAGE = 1000;

/** One run to rewrite: bytes `[start, end)`, held now by `objects` (consecutive). */
export interface CompactionRun {
  start: number;
  end: number;
  objects: StoredSegmentObject[];
}

/** What a writer's objects call for. */
export interface CompactionPlan {
  runs: CompactionRun[];
  /**
   * objects a compacted object already holds (a compaction that stopped between its put and its
   * deletes), grouped by that object: deleted once it is checked against the index
   */
  leftovers: { holder: StoredSegmentObject; objects: StoredSegmentObject[] }[];
  /** objects listed (chunk objects and compacted runs) */
  objects: number;
  /** objects a read of the whole segment GETs now */
  tiling: number;
}

export interface PlanLimits {
  smallObjectBytes?: number;
  maxRunBytes?: number;
}

/**
 * The plan for a writer whose objects (sorted by offset, each starting before `end`, its indexed
 * length) are `objects`: runs of consecutive small objects of the fewest-object tiling of `[0, end)`,
 * cut at `maxRunBytes`, and the leftovers of an earlier compaction. Null when the objects do not tile
 * `[0, end)` or overlap in a way no compaction explains: nothing is touched then (a read reports it).
 */
export function planCompaction(
  objects: readonly StoredSegmentObject[],
  end: number,
  limits: PlanLimits = {},
): CompactionPlan | null {
  const small = limits.smallObjectBytes ?? SMALL_OBJECT_BYTES;
  const maxRun = limits.maxRunBytes ?? MAX_RUN_BYTES;
  const tiling = fewestObjectTiling(objects, end);
  if (!tiling) return null;
  const { superseded, unexplained } = supersededObjects(objects, tiling);
  if (unexplained.length > 0) return null;
  const runs: CompactionRun[] = [];
  let run: StoredSegmentObject[] = [];
  let bytes = 0;
  const close = () => {
    if (run.length >= MIN_RUN_OBJECTS) {
      const last = run.at(-1)!;
      runs.push({ start: run[0]!.offset, end: last.offset + last.size, objects: run });
    }
    run = [];
    bytes = 0;
  };
  for (const o of tiling) {
    const fits = o.size < small && o.offset + o.size <= end;
    if (!fits) {
      close();
      continue;
    }
    if (bytes + o.size > maxRun) close();
    run.push(o);
    bytes += o.size;
  }
  close();
  const leftovers: CompactionPlan['leftovers'] = [];
  for (const o of superseded) {
    const holder = tiling.find((t) => t.offset <= o.offset && o.offset + o.size <= t.offset + t.size)!;
    const group = leftovers.at(-1);
    if (group?.holder === holder) group.objects.push(o);
    else leftovers.push({ holder, objects: [o] });
  }
  return { runs, leftovers, objects: objects.length, tiling: tiling.length };
}

/** Whether `w` is settled at `now`: ended, or no chunk for `settledAfterMs`. */
export function isSettled(w: WriterRecord, now: Date, settledAfterMs = SETTLED_AFTER_MS): boolean {
  return w.ended || now.getTime() - Date.parse(w.updated_at) >= settledAfterMs;
}

export interface CompactionDeps {
  state: Pick<StateStore, 'listWriters' | 'listChunks'>;
  store: SegmentCompactionStore;
  now: () => Date;
  /** ms since the epoch after which no new run is started (a Lambda ends at its timeout) */
  deadline?: number;
  settledAfterMs?: number;
  limits?: PlanLimits;
}

/** What became of one writer. */
export interface WriterCompaction {
  w: string;
  outcome:
    | 'live' // not settled: left alone
    | 'compacted' // runs written (or leftovers deleted)
    | 'nothing_to_do'
    | 'out_of_time' // some runs written, the rest for the next pass
    | 'mismatch' // bytes that do not match the index: nothing of the run written or deleted
    | 'conflict' // other bytes under a compacted object's name
    | 'layout'; // the objects do not tile the segment: left for a read (and an operator) to report
  /** objects listed before, and what a read of the whole segment GETs after */
  objects_before: number;
  objects_after: number;
  runs: number;
  deleted: number;
  /** for `mismatch`: the chunk whose bytes differ */
  offset?: number;
  message?: string;
}

/**
 * Compacts every settled writer of a session, in turn; never throws for one writer's fault. A writer not
 * reached by `deadline` is `out_of_time` (its runs written so far stay: the next pass goes on from them).
 */
export async function compactSession(
  deps: CompactionDeps,
  tenant: string,
  sid: string,
): Promise<WriterCompaction[]> {
  const writers = await deps.state.listWriters(tenant, sid);
  const out: WriterCompaction[] = [];
  for (const w of writers) {
    const none = { w: w.w, objects_before: 0, objects_after: 0, runs: 0, deleted: 0 };
    if (!isSettled(w, deps.now(), deps.settledAfterMs)) out.push({ ...none, outcome: 'live' });
    else if (deps.deadline !== undefined && Date.now() >= deps.deadline)
      out.push({ ...none, outcome: 'out_of_time' });
    else out.push(await compactWriter(deps, { tenant, sid, w: w.w }, w.length));
  }
  return out;
}

/**
 * Compacts one writer's `[0, length)` (`length` its indexed length): deletes the leftovers of an earlier
 * pass once their holder is checked, then writes each run (checked against the index) and deletes what
 * it replaced. Stops at the first fault of the writer.
 * @throws the stores' errors (nothing is deleted that a stored, checked object does not hold)
 */
export async function compactWriter(
  deps: CompactionDeps,
  key: SegmentKey,
  length: number,
): Promise<WriterCompaction> {
  const objects = await deps.store.listObjects(key, length);
  const result: WriterCompaction = {
    w: key.w,
    outcome: 'nothing_to_do',
    objects_before: objects.length,
    objects_after: objects.length,
    runs: 0,
    deleted: 0,
  };
  const plan = planCompaction(objects, length, deps.limits);
  if (!plan) {
    return { ...result, outcome: 'layout', message: 'the objects do not tile the indexed length' };
  }
  result.objects_after = plan.tiling;
  try {
    for (const { holder, objects: held } of plan.leftovers) {
      const bytes = await deps.store.readObjects(key, [holder], holder.offset, holder.offset + holder.size);
      const bad = await firstMismatch(deps.state, key, holder.offset, bytes);
      if (bad) return { ...result, outcome: 'mismatch', ...bad };
      result.deleted += await deps.store.deleteObjects(key, held);
      result.outcome = 'compacted';
    }
    for (const run of plan.runs) {
      if (deps.deadline !== undefined && Date.now() >= deps.deadline) {
        return { ...result, outcome: 'out_of_time' };
      }
      const bytes = await deps.store.readObjects(key, run.objects, run.start, run.end);
      const bad = await firstMismatch(deps.state, key, run.start, bytes);
      if (bad) return { ...result, outcome: 'mismatch', ...bad };
      const sha256 = createHash('sha256').update(bytes).digest('hex');
      await deps.store.putCompacted(key, run.start, bytes, sha256);
      result.runs += 1;
      result.objects_after -= run.objects.length - 1;
      result.deleted += await deps.store.deleteObjects(key, run.objects);
      result.outcome = 'compacted';
    }
  } catch (err) {
    if (err instanceof CompactionConflictError)
      return { ...result, outcome: 'conflict', message: err.message };
    throw err;
  }
  return result;
}

/**
 * The first chunk of `[start, start + bytes.length)` whose bytes are not its chunk record's (a record
 * missing, of another length, or of another SHA-256), or null when every chunk matches.
 */
async function firstMismatch(
  state: CompactionDeps['state'],
  key: SegmentKey,
  start: number,
  bytes: Uint8Array,
): Promise<{ offset: number; message: string } | null> {
  const end = start + bytes.length;
  let at = start;
  while (at < end) {
    const records = await state.listChunks(key.tenant, key.sid, key.w, at, RECORDS_PER_PAGE);
    if (records.length === 0) break;
    for (const r of records) {
      if (r.offset !== at) return { offset: at, message: `no chunk record starts at byte ${at}` };
      if (r.offset + r.length > end) {
        return { offset: at, message: `the chunk at byte ${at} ends past the run (at ${end})` };
      }
      const piece = bytes.subarray(at - start, at - start + r.length);
      if (createHash('sha256').update(piece).digest('hex') !== r.sha256) {
        return { offset: at, message: `the bytes of the chunk at byte ${at} do not match its SHA-256` };
      }
      at += r.length;
      if (at >= end) break;
    }
  }
  return at === end ? null : { offset: at, message: `no chunk record starts at byte ${at}` };
}
