/**
 * Usage kept as chunks arrive (issue 27 item 5, lib/store/usage.ts): `projectChunk` folds a chunk's lines
 * (lib/log/analyse/usage/fold.ts) from the state its writer's usage record saved after the bytes before
 * it, and stores the new state and the bucket deltas in one conditional write. Ingest calls it after the
 * summary merge and BEFORE the writer index advances (lib/service/ingest/ingest-chunk.ts): a 2xx means
 * counted too; a failure fails the chunk (503, nothing indexed) and the client's retry counts it then.
 *
 * Cost per chunk:
 * - A chunk with no line the fold can act on (none names `"turn.start"`, `"turn.end"`, `"message"`,
 *   `"writer.start"`, `token_usage`, nor has a `\u` escape that could spell one) touches no store: the
 *   fold would only move its `last_at`. Its range and its last readable time are remembered in this
 *   process (`SKIPPED`), and the record's `upto` stays behind the segment's length, on purpose.
 * - Any other chunk: one read of the record, one conditional write. Bytes between the record's `upto` and
 *   the chunk (chunks skipped as above, a writer stored before usage was counted, chunks indexed by a
 *   process that did not count) are folded first: from the remembered range when this process skipped
 *   exactly them, else read back from the segment store (the same reader as the replay).
 * So on `hansard serve` (one process) the common chunk of tool output costs nothing, and a writer's
 * record is written once per chunk that counts; on Lambda a chunk that lands on another instance than
 * the skipped ones reads those bytes back once.
 * Only lines that can matter are parsed; the others only give their time (`last_at`), read from the last
 * valid line before each parsed one, so the state equals the one a whole-segment fold leaves and a
 * recompute (./recompute.ts) finds the same counters.
 */

import { type FoldState, foldEvent, newFoldState, type UsageDelta } from '../../log/analyse/usage/index.js';
import { parseLine } from '../../log/format/codec.js';
import { readSegmentBatches } from '../../log/read/reader.js';
import {
  type SegmentKey,
  type UsageBucket,
  UsageConflictError,
  type WriterUsage,
} from '../../store/index.js';
import { isoNow, type ServiceContext } from '../shared/context.js';
import { AppError } from '../shared/errors.js';
import { storageAppError } from '../shared/storage-faults.js';
import { diffBuckets, mergeDeltas } from './buckets.js';
import { noteCost } from './budget.js';

/** Tries of the conditional write when another process counted meanwhile. */
const CONFLICT_TRIES = 5;

/** What a line must hold (as bytes) for the fold to act on it; other lines only carry their time. */
const NEEDLES = ['"turn.start"', '"turn.end"', '"message"', '"writer.start"', 'token_usage', '\\u'];

/** A range of a writer's segment this process saw holds no line that counts. */
interface Skipped {
  start: number;
  end: number;
  /** the last readable time in it (µs) and the offset of its line; null: none */
  lastAt: number | null;
  lastAtPos: number;
}

/** Skipped ranges per segment store (tests open many) and writer; bounded, oldest dropped first. */
const SKIPPED = new WeakMap<object, Map<string, Skipped>>();
const SKIPPED_MAX = 10_000;

function skippedOf(ctx: ServiceContext): Map<string, Skipped> {
  let m = SKIPPED.get(ctx.segments);
  if (!m) {
    m = new Map();
    SKIPPED.set(ctx.segments, m);
  }
  return m;
}

/** The byte ranges of `body`'s complete lines, from `from` on. */
function linesOf(body: Buffer, from: number): [number, number][] {
  const out: [number, number][] = [];
  let start = from;
  for (let nl = body.indexOf(0x0a, start); nl !== -1; nl = body.indexOf(0x0a, start)) {
    out.push([start, nl]);
    start = nl + 1;
  }
  return out;
}

function relevant(bytes: Buffer): boolean {
  for (const n of NEEDLES) if (bytes.includes(n)) return true;
  return false;
}

/** The time (µs) of the last valid line of `lines[from, to)`, and its offset; null when none has one. */
function lastTime(
  body: Buffer,
  lines: [number, number][],
  from: number,
  to: number,
): [number, number] | null {
  for (let i = to - 1; i >= from; i--) {
    const [s, e] = lines[i]!;
    const p = parseLine(body.subarray(s, e), 0, 0, true);
    if (p.ok && p.event.tsMicros !== null) return [p.event.tsMicros, s];
  }
  return null;
}

/** `lastTime` of all of `body`'s lines, read from the last line back (most chunks: one line parsed). */
function lastTimeFromEnd(body: Buffer): [number, number] | null {
  let end = body.length - 1; // the newline ending the last line
  while (end >= 0) {
    const start = body.lastIndexOf(0x0a, end - 1) + 1;
    const p = parseLine(body.subarray(start, end), 0, 0, true);
    if (p.ok && p.event.tsMicros !== null) return [p.event.tsMicros, start];
    end = start - 1;
  }
  return null;
}

/** A stored state the fold can go on from (a record of another build's fold may not be one). */
function foldStateOf(v: unknown): FoldState | null {
  return v !== null && typeof v === 'object' && (v as { v?: unknown }).v === 1 ? (v as FoldState) : null;
}

/** The failure of a chunk whose counters could not be written: nothing of it was indexed. */
function notCounted(sid: string, offset: number, err: unknown): AppError {
  return (
    storageAppError(err, 'this chunk', { expected_offset: offset }) ??
    new AppError(
      'summary_not_updated',
      `the usage counters of session ${sid} could not be updated, so this chunk was not recorded: send the same chunk again (from offset ${offset})`,
      { expected_offset: offset },
      { cause: err },
    )
  );
}

/**
 * Counts the chunk `[offset, offset + body.length)` of writer `w` into its usage record, the session's
 * counters and the tenant's buckets, once: a chunk the record already counted (a retry) counts nothing.
 * Runs under ingest's writer lock, before the index advances.
 * @throws AppError `summary_not_updated` (503) or a storage fault (`storageAppError`), each with
 *   `expected_offset`, when the counters could not be written: the chunk must not be indexed then
 */
export async function projectChunk(
  ctx: ServiceContext,
  sid: string,
  w: string,
  offset: number,
  body: Uint8Array,
  /**
   * `foreign`: the chunk comes from another token than the one that started the writer (ingest's
   * `mixed_tokens`); `sha256`: the chunk's digest (hex), kept with the count so that a different chunk at
   * the same offset is not taken for counted
   */
  opts: { foreign?: boolean; sha256?: string } = {},
): Promise<void> {
  const buf = Buffer.from(body.buffer, body.byteOffset, body.byteLength);
  const end = offset + buf.length;
  const skipped = skippedOf(ctx);
  const id = `${ctx.tenant}/${sid}/${w}`;
  // A foreign chunk always reaches the record, so the point past which nothing counts is kept.
  if (!opts.foreign && !relevant(buf)) {
    // Nothing here counts: remember the range (joined to the one before it) instead of writing.
    const last = lastTimeFromEnd(buf);
    const prev = skipped.get(id);
    // joined to the range before it; a retry of a chunk already in it (its advance failed) keeps the range
    const joined = prev !== undefined && prev.start <= offset && offset <= prev.end;
    skipped.delete(id);
    if (skipped.size >= SKIPPED_MAX) skipped.delete(skipped.keys().next().value!);
    skipped.set(id, {
      start: joined ? prev.start : offset,
      end,
      lastAt: last ? last[0] : joined ? prev.lastAt : null,
      lastAtPos: last ? offset + last[1] : joined ? prev.lastAtPos : offset,
    });
    return;
  }
  let added = 0;
  for (let attempt = 1; ; attempt++) {
    let rec: WriterUsage | null;
    try {
      rec = await ctx.state.getWriterUsage(ctx.tenant, sid, w);
      // counted already: a retry of this chunk, or of one before the chunks counted since. A record whose
      // last counted chunk began at this offset but was other bytes counted a chunk never acknowledged
      // (its index advance failed, and another chunk took the offset): it is rebuilt from the stored bytes.
      const stale = rec !== null && countedOther(rec, offset, end, opts.sha256);
      if (rec && rec.upto >= end && !stale) return;
      const change = await foldChange(ctx, {
        rebuild: stale,
        sha256: opts.sha256,
        sid,
        w,
        offset,
        buf,
        rec,
        skipped: skipped.get(id),
        foreign: opts.foreign === true,
      });
      await ctx.state.applyWriterUsage(ctx.tenant, sid, w, rec?.upto ?? null, change);
      added = change.deltas.reduce((n, b) => n + b.counters.cost_micros, 0);
      break;
    } catch (err) {
      if (err instanceof UsageConflictError && attempt < CONFLICT_TRIES) continue; // another process counted: read again
      throw notCounted(sid, offset, err);
    }
  }
  skipped.delete(id);
  if (added > 0) await noteCost(ctx, added);
}

/** What counting the chunk changes, from the stored record `rec` (see `projectChunk`). */
async function foldChange(
  ctx: ServiceContext,
  a: {
    sid: string;
    w: string;
    offset: number;
    buf: Buffer;
    rec: WriterUsage | null;
    skipped: Skipped | undefined;
    foreign: boolean;
    /** the record counted bytes never acknowledged at this offset: rebuild it from the stored bytes */
    rebuild?: boolean;
    sha256?: string | undefined;
  },
): Promise<{ next: WriterUsage; deltas: UsageBucket[] }> {
  const { sid, w, offset, buf, rec } = a;
  if (a.rebuild && rec) return rebuildChange(ctx, { ...a, rec });
  const stored = rec ? foldStateOf(rec.state) : null;
  // A record whose state this build cannot go on from is rebuilt from the segment's start.
  const upto = stored ? rec!.upto : 0;
  const state = stored ? structuredClone(stored) : newFoldState();
  const out: UsageDelta[] = [];
  if (upto < offset) {
    const s = a.skipped;
    if (s && s.start <= upto && s.end === offset) {
      if (s.lastAt !== null && s.lastAtPos >= upto) state.last_at = s.lastAt;
    } else {
      await foldStored(ctx, { tenant: ctx.tenant, sid, w }, upto, offset, state, out);
    }
  }
  if (a.foreign) untrustFrom(state, Math.max(offset, upto));
  // A record that counted part of this chunk (a chunk cut otherwise before) goes on where it stopped.
  const lines = linesOf(buf, Math.max(0, upto - offset));
  let from = 0;
  for (let i = 0; i < lines.length; i++) {
    const [s, e] = lines[i]!;
    const bytes = buf.subarray(s, e);
    if (!relevant(bytes)) continue;
    const p = parseLine(bytes, 0, 0, true);
    if (!p.ok) continue;
    if (i > from) {
      const t = lastTime(buf, lines, from, i);
      if (t) state.last_at = t[0];
    }
    foldEvent(state, w, p.event.obj, out);
    from = i + 1;
  }
  const t = lastTime(buf, lines, from, lines.length);
  if (t) state.last_at = t[0];
  const base = stored ? rec!.buckets : [];
  const merged = mergeDeltas(base, out);
  markCounted(state, offset, offset + buf.length, a.sha256);
  return {
    next: { upto: offset + buf.length, state, buckets: merged.buckets, updated_at: isoNow(ctx) },
    // a rebuilt record replaces what was stored: its deltas are the difference
    deltas: stored || !rec ? merged.deltas : diffBuckets(rec.buckets, merged.buckets),
  };
}

/**
 * The fold state's mark of a writer appended to by another token than its first's (issue 24's rule,
 * applied to money: an agent must not write its own cost): from `mixed_from` (a byte offset) on, its
 * usage records count for nothing, as a declared writer's (fold.ts `declared`); what came before stands.
 * Kept in the state, so later chunks (of any token) and a recompute (./recompute.ts) cut at the same byte.
 */
export type MixedState = FoldState & { mixed_from?: number };

/** Marks `state` untrusted from byte `at` on, unless it is already. */
export function untrustFrom(state: MixedState, at: number): void {
  if (state.mixed_from !== undefined) return;
  state.mixed_from = at;
  state.declared = true;
}

/** The byte from which a stored state counts nothing (`untrustFrom`), or null. */
export function mixedFrom(state: unknown): number | null {
  const v = (state as { mixed_from?: unknown } | null)?.mixed_from;
  return typeof v === 'number' && Number.isInteger(v) && v >= 0 ? v : null;
}

/** The last chunk a record counted: its byte range and digest (hex), kept in the state. */
type CountedState = FoldState & { counted?: { offset: number; end: number; sha256: string } };

function markCounted(state: FoldState, offset: number, end: number, sha256: string | undefined): void {
  if (sha256 !== undefined) (state as CountedState).counted = { offset, end, sha256 };
  else delete (state as CountedState).counted;
}

/**
 * True when the last chunk `rec` counted began at `offset` and was not the chunk `[offset, end)` of digest
 * `sha256` (another length or digest); false when either digest is unknown.
 */
function countedOther(rec: WriterUsage, offset: number, end: number, sha256: string | undefined): boolean {
  const c = (rec.state as CountedState | null)?.counted;
  if (sha256 === undefined || c === undefined || c.end !== rec.upto || c.offset !== offset) return false;
  return c.end !== end || c.sha256 !== sha256;
}

/**
 * A writer's record rebuilt from its acknowledged bytes `[0, offset)` and this chunk: the stored record
 * counted other bytes at this offset (never acknowledged). The mark of another token's first byte stands
 * when it is before `offset` (the bytes it marked were acknowledged); one at `offset` or past it was the
 * unacknowledged chunk's. The deltas take the stored buckets to the rebuilt ones.
 */
async function rebuildChange(
  ctx: ServiceContext,
  a: {
    sid: string;
    w: string;
    offset: number;
    buf: Buffer;
    rec: WriterUsage;
    foreign: boolean;
    sha256?: string | undefined;
  },
): Promise<{ next: WriterUsage; deltas: UsageBucket[] }> {
  const { sid, w, offset, buf, rec } = a;
  const key = { tenant: ctx.tenant, sid, w };
  const state = newFoldState();
  const out: UsageDelta[] = [];
  const cut = mixedFrom(rec.state);
  if (cut !== null && cut < offset) {
    await foldStored(ctx, key, 0, cut, state, out);
    untrustFrom(state, cut);
    await foldStored(ctx, key, cut, offset, state, out);
  } else await foldStored(ctx, key, 0, offset, state, out);
  if (a.foreign) untrustFrom(state, offset);
  for (const [s, e] of linesOf(buf, 0)) {
    const p = parseLine(buf.subarray(s, e), 0, 0, true);
    if (p.ok) foldEvent(state, w, p.event.obj, out);
  }
  const fresh = mergeDeltas([], out).buckets;
  markCounted(state, offset, offset + buf.length, a.sha256);
  return {
    next: { upto: offset + buf.length, state, buckets: fresh, updated_at: isoNow(ctx) },
    deltas: diffBuckets(rec.buckets, fresh),
  };
}

/** Folds the stored bytes `[start, end)` of a segment (whole lines: chunk boundaries) into `state`. */
export async function foldStored(
  ctx: ServiceContext,
  key: SegmentKey,
  start: number,
  end: number,
  state: FoldState,
  out: UsageDelta[],
): Promise<void> {
  if (start >= end) return;
  for await (const batch of readSegmentBatches(ctx.segments.readSegment(key, end, start))) {
    for (const item of batch) if (item.kind === 'event') foldEvent(state, key.w, item.event.obj, out);
  }
}
