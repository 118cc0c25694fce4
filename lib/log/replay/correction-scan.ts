/**
 * Pass 1 of the replay (lib/log/replay/corrections.ts `CorrectionIndex.scan`, DESIGN §3 "Corrections"): the
 * corrections of a session's segments, read from their bytes, grouped by target in merged order, each
 * kept as only what applying it and reporting it need (`Correction`), not the whole decoded event (issue
 * 16: a decoded correction held ~1.1 KB, most of a merged replay's growth).
 */
import { decodeEvent, parseLine } from '../format/codec.js';
import { isType, type KnownEvent } from '../format/events.js';
import { readSegmentBatches } from '../read/reader.js';
import { openSegmentBlocks } from '../read/segment-blocks.js';
import type { ReplaySegment } from '../read/session-dir.js';

/** A decoded `correction` event. */
export type CorrectionEvent = Extract<KnownEvent, { type: 'correction' }>;

/** What a `CorrectionIndex` keeps of one correction event: its envelope's id, w, seq and its fields. */
export interface Correction {
  id: string;
  w: string;
  seq: number;
  target_id: string;
  field: string;
  value: unknown;
  reason: string;
}

/**
 * `ev`'s `Correction`. `shared` hands back one string for repeated writer ids and field names (a
 * session has few), so that thousands of corrections do not each hold copies.
 */
export function keepCorrection(ev: CorrectionEvent, shared: Map<string, string>): Correction {
  return {
    id: ev.id,
    w: sharedString(shared, ev.w),
    seq: ev.seq,
    target_id: ev.target_id,
    field: sharedString(shared, ev.field),
    value: ev.value,
    reason: ev.reason,
  };
}

function sharedString(shared: Map<string, string>, s: string): string {
  const known = shared.get(s);
  if (known !== undefined) return known;
  // The few distinct names only: a session whose every correction has a new one keeps them once anyway.
  if (shared.size < 4096) shared.set(s, s);
  return s;
}

/**
 * The corrections of `segments` by target id (in order of the first correction of each target found),
 * each target's list in merged order `(ts, w, seq)`, and how many there are in all.
 *
 * Cheap by construction: it never splits the segments into lines or parses them. It searches each chunk
 * for the bytes `"correction"` and parses only the complete lines that hold them (with `parseLine`, the
 * merge's own parser, so a line counts here exactly when the merge takes it). A type written with a JSON
 * escape (`"\u0063orrection"`) is not found; no writer does that to an ASCII word.
 *
 * Order within one segment is file order. Only when one target has corrections from several segments is
 * their merge key needed, the writer's running maximum ts at each of them; that segment is then read
 * again with the merge's parser up to its last such correction, so the order is exactly the merge's.
 * Memory: the corrections, plus one line at a time. I/O errors of `open()` propagate.
 *
 * `signal` stops the scan: it rejects with the signal's reason (an `AbortError`). When it rejects for
 * any reason, every segment it opened has been closed first, the concurrent scans' included.
 */
export async function scanCorrections(
  segments: readonly ReplaySegment[],
  signal?: AbortSignal,
): Promise<{ groups: Map<string, Correction[]>; count: number }> {
  // A few segments at a time: their reads overlap (the file system's thread pool has 4), and only a few
  // scan buffers are in memory at once. Results keep (segment, offset) order.
  const perSegment: Found[][] = segments.map(() => []);
  const shared = new Map<string, string>();
  // One scan failing (or the caller aborting) stops the others at their next chunk, and the scan
  // settles only once all have stopped: no read is left running after it rejects.
  signal?.throwIfAborted();
  const stop = new AbortController();
  const onAbort = () => stop.abort(signal!.reason);
  signal?.addEventListener('abort', onAbort, { once: true });
  // Blocks of 1 MiB from the merge's own reader (a file segment by positional reads into a reused
  // buffer, no stream machinery), at most SCAN_CONCURRENCY segments open.
  const blocks = openSegmentBlocks(segments, {
    budgetBytes: segments.length * SCAN_CHUNK_BYTES,
    maxOpen: SCAN_CONCURRENCY,
    signal: stop.signal,
  });
  let next = 0;
  const worker = async () => {
    for (let src = next++; src < segments.length; src = next++) {
      stop.signal.throwIfAborted();
      const seg = segments[src]!;
      const out = perSegment[src]!;
      const reader = blocks.readers[src]!;
      try {
        await findCandidateLines(reader, stop.signal, (line, offset) => {
          const p = parseLine(line, 0, offset, true);
          if (!p.ok || p.event.type !== 'correction') return;
          const ev = decodeEvent(p.event);
          if (isType(ev, 'correction'))
            out.push({ c: keepCorrection(ev, shared), src, w: seg.w, offset, key: 0 });
        });
      } finally {
        await reader.close();
      }
    }
  };
  try {
    const runs = Array.from({ length: Math.min(SCAN_CONCURRENCY, segments.length) }, () =>
      worker().catch((err: unknown) => {
        stop.abort(err);
        throw err;
      }),
    );
    const settled = await Promise.allSettled(runs);
    if (stop.signal.aborted) throw stop.signal.reason;
    const failed = settled.find((r): r is PromiseRejectedResult => r.status === 'rejected');
    if (failed) throw failed.reason;
  } finally {
    signal?.removeEventListener('abort', onAbort);
    await blocks.closeAll();
  }
  const found = perSegment.flat();
  const byTarget = new Map<string, Found[]>();
  for (const f of found) {
    const list = byTarget.get(f.c.target_id);
    if (list) list.push(f);
    else byTarget.set(f.c.target_id, [f]);
  }
  // Targets corrected from several segments need merge keys; `found` is already in (segment, offset) order.
  const needKeys = new Map<number, Found[]>();
  const mixed: Found[][] = [];
  for (const list of byTarget.values()) {
    if (list.every((f) => f.src === list[0]!.src)) continue;
    mixed.push(list);
    for (const f of list) {
      const l = needKeys.get(f.src);
      if (l) l.push(f);
      else needKeys.set(f.src, [f]);
    }
  }
  for (const [src, list] of needKeys) await assignMergeKeys(segments[src]!, list, signal);
  for (const list of mixed) list.sort(mergeOrder);
  const groups = new Map<string, Correction[]>();
  for (const [target, list] of byTarget) {
    groups.set(
      target,
      list.map((f) => f.c),
    );
  }
  return { groups, count: found.length };
}

/** A correction found by pass 1, with where it is (segment index, byte offset) and its merge key. */
interface Found {
  c: Correction;
  src: number;
  /** the segment's writer id (the merge's tie-break) */
  w: string;
  offset: number;
  /** the writer's running maximum ts (µs) at this line, as the merge computes it (set only when needed) */
  key: number;
}

/** The merge's order: key, then writer id, then segment index, then file order. */
function mergeOrder(a: Found, b: Found): number {
  if (a.key !== b.key) return a.key < b.key ? -1 : 1;
  if (a.w !== b.w) return a.w < b.w ? -1 : 1;
  if (a.src !== b.src) return a.src - b.src;
  return a.offset - b.offset;
}

/** Reads a segment again with the merge's parser, and sets each found correction's merge key. */
async function assignMergeKeys(seg: ReplaySegment, list: Found[], signal?: AbortSignal): Promise<void> {
  const byOffset = new Map(list.map((f) => [f.offset, f]));
  const last = Math.max(...list.map((f) => f.offset));
  let maxTs = Number.NEGATIVE_INFINITY;
  for await (const batch of readSegmentBatches(seg.open(undefined, signal))) {
    signal?.throwIfAborted();
    for (const item of batch) {
      if (item.kind !== 'event') continue;
      const ts = item.event.tsMicros;
      if (ts !== null && ts > maxTs) maxTs = ts;
      const f = byOffset.get(item.event.offset);
      if (f) f.key = maxTs;
      if (item.event.offset >= last) return;
    }
  }
}

const NL = 0x0a;
/** Pass 1 does little per byte, so it is bound by reads: it asks for large chunks. */
const SCAN_CHUNK_BYTES = 1024 * 1024;
/** Segments scanned at once in the corrections pass. */
const SCAN_CONCURRENCY = 4;
const NEEDLE = Buffer.from('"correction"');

function asBuffer(chunk: Uint8Array): Buffer {
  return Buffer.isBuffer(chunk) ? chunk : Buffer.from(chunk.buffer, chunk.byteOffset, chunk.byteLength);
}

/**
 * Calls `onLine(bytes, offset)` for every complete line (ended by a newline) of a byte stream that holds
 * `"correction"`, with the line's bytes (no newline) and the byte offset of its first byte — the same
 * bytes and offset `splitLines` gives. Lines without the needle are never cut out or copied. Throws the
 * reason of `signal` at the next chunk once it is aborted (the source is then closed by `for await`).
 */
async function findCandidateLines(
  reader: { next(): Promise<Uint8Array | null> },
  signal: AbortSignal,
  onLine: (bytes: Buffer, offset: number) => void,
): Promise<void> {
  // A block is the reader's until its next `next()`: what is kept across blocks (a cut line) is copied,
  // and `onLine` gets a copy of its line.
  let carry: Buffer[] = [];
  let carryLen = 0;
  let base = 0; // offset of the current block's first byte
  for (let chunk = await reader.next(); chunk !== null; chunk = await reader.next()) {
    signal.throwIfAborted();
    const buf = asBuffer(chunk);
    let start = 0;
    if (carryLen > 0) {
      const nl = buf.indexOf(NL);
      if (nl === -1) {
        carry.push(Buffer.from(buf));
        carryLen += buf.length;
        base += buf.length;
        continue;
      }
      const line = Buffer.concat([...carry, buf.subarray(0, nl)], carryLen + nl);
      if (line.includes(NEEDLE)) onLine(line, base - carryLen);
      carry = [];
      carryLen = 0;
      start = nl + 1;
    }
    const lastNl = buf.lastIndexOf(NL);
    if (lastNl >= start) {
      let p = start;
      for (;;) {
        const h = buf.indexOf(NEEDLE, p);
        if (h === -1 || h > lastNl) break;
        const ls = buf.lastIndexOf(NL, h) + 1;
        const le = buf.indexOf(NL, h);
        onLine(Buffer.from(buf.subarray(ls, le)), base + ls);
        p = le + 1;
      }
      start = lastNl + 1;
    }
    if (start < buf.length) {
      carry.push(Buffer.from(buf.subarray(start)));
      carryLen += buf.length - start;
    }
    base += buf.length;
  }
  // What is left has no newline: a line still being written, which the merge leaves out too.
}
