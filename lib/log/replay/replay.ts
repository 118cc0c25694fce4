/**
 * Replay: a merged session as NDJSON or as readable text (seed 001 "replay", DESIGN §3), with corrections
 * applied; and the raw replay, the bytes as written.
 *
 * NDJSON gives each event's line exactly as its writer wrote it, in merged order, one per line, except an
 * event a correction changed: that one is `serializeEvent` of its effective view with its provenance as a
 * last key, `"corrected":[{"by","field","was","reason"},…]` (see `lib/log/replay/corrections`), so no consumer
 * sees a modified value without knowing. Text gives one line per event: time, who, what, with the effective
 * values and a ` [corrected: <field> by <correction id>, …]` suffix on a corrected event. A text line is
 * always one line whatever the events hold (issue 8.4, `lib/log/format/escape`): ids and names (user ids, agents,
 * tools, types, ts) show a control character as `\n`, `\x1b`, `\u202e`; free text (a message, an output,
 * a tool's input and result) shows a newline as ` ⏎ `, a tab as a space, and the other controls escaped
 * the same way, so nothing a writer wrote can start a line of its own or reach a terminal raw. Both skip
 * quarantined lines (they are in the raw segments, and verify reports them). The same function serves the
 * CLI on a local directory and the server, so the two give the same bytes for the same segments.
 *
 * Corrections usually come after their target in merged order, so replay reads a session twice with bounded
 * memory: pass 1 (`CorrectionIndex.scan`) collects the corrections from the segments' bytes without parsing
 * the other lines, pass 2 merges and applies them. Hence its input is `ReplaySegment`s, which can be opened
 * more than once.
 */
import { statSync } from 'node:fs';
import { decodeEvent, parseLine } from '../format/codec.js';
import { readLineFields } from '../format/line-fields.js';
import { mergeToBuffers, mergeToText } from '../read/fast-merge.js';
import type { LineCursor } from '../read/line-cursor.js';
import {
  type MergedEvent,
  type MergeOptions,
  type MergeSource,
  mergeSegmentBatches,
  mergeSegmentBatchesKeepingProblems,
} from '../read/merge.js';
import { type ReadOptions, readSegmentBatches } from '../read/reader.js';
import { openSegmentBlocks } from '../read/segment-blocks.js';
import { listSegments, type ReplaySegment, readFileRange } from '../read/session-dir.js';
import type { TextOut } from '../read/text-out.js';
import { CorrectionIndex, type CorrectionProblem } from './corrections.js';
import { EventLines } from './replay-text.js';

export type ReplayFormat = 'ndjson' | 'text';

export interface ReplayOptions extends MergeOptions {
  /**
   * Called after the last line for each correction that changed nothing (target missing, forbidden field,
   * invalid value), in the merged order of the corrections.
   */
  onCorrectionProblem?: (problem: CorrectionProblem) => void;
  /**
   * Pass 1 already done: `CorrectionIndex.scan` of these same segments (a server runs it under its scan
   * gate, lib/service/shared/scan-gate.ts). Used once: an index tracks what has passed.
   */
  corrections?: CorrectionIndex;
}

/**
 * Bytes each segment reads at a time in a merge of `writers` segments: `total` (1 MiB) in flight in all,
 * between 16 KiB and 256 KiB per segment. Memory then stays flat however many writers there are (measured
 * in docs/benchmarks.md: larger reads keep more parsed events alive and cost more than they save). A
 * server, which holds one merge per response, asks for less (lib/service/shared/sources.ts).
 */
export function mergeChunkBytes(writers: number, total = 1024 * 1024): number {
  return Math.min(256 * 1024, Math.max(16 * 1024, Math.floor(total / Math.max(1, writers))));
}

/**
 * The segments of a session directory as `ReplaySegment`s. Each segment's length is taken now, so both
 * passes of a replay read the same bytes even while a writer is still appending. Throws the file system's
 * error (ENOENT) when `dir` cannot be read.
 */
export function sessionDirSegments(dir: string): ReplaySegment[] {
  const files = listSegments(dir);
  const defaultChunk = mergeChunkBytes(files.length);
  return files.map(({ w, path }) => {
    const size = statSync(path).size;
    return {
      w,
      open: (chunkBytes = defaultChunk, signal?: AbortSignal, start = 0) =>
        start >= size ? [] : readFileRange(path, start, size, chunkBytes, signal),
    };
  });
}

/** Fresh merge sources for `segments` (each opened once more; `signal` is passed to every `open`). */
export function segmentSources(
  segments: readonly ReplaySegment[],
  options: ReadOptions & { signal?: AbortSignal | undefined } = {},
): MergeSource[] {
  return segments.map((s) => ({
    w: s.w,
    batches: readSegmentBatches(s.open(undefined, options.signal), options),
  }));
}

function isReopenable(x: readonly ReplaySegment[] | readonly MergeSource[]): x is readonly ReplaySegment[] {
  return x.every((s) => typeof (s as Partial<ReplaySegment>).open === 'function');
}

/**
 * The merged replay of a session as lines of text, each ending with `\n`, with corrections applied.
 *
 * @param segments the session's segments, which replay opens twice (streaming; memory grows with the
 *   number of writers and of corrections only). `MergeSource`s, which can be read only once, are accepted
 *   too, for callers that have nothing else: their merged events are then held in memory for the second
 *   pass, so memory grows with the session.
 * @param format `ndjson` (default) or `text`
 * @param options.signal stops the replay: it throws the signal's reason (an `AbortError`) instead of
 *   reading on. However it ends (done, failed, aborted, or closed early by its consumer), every segment
 *   stream it opened is closed.
 * Errors of the segments' streams propagate.
 */
export async function* replayLines(
  segments: readonly ReplaySegment[] | MergeSource[],
  format: ReplayFormat = 'ndjson',
  options: ReplayOptions = {},
): AsyncGenerator<string> {
  for await (const chunk of replayChunks(segments, format, options)) {
    // A replay line never holds a newline of its own (NDJSON escapes it, text shows it as ⏎).
    let start = 0;
    while (start < chunk.length) {
      const nl = chunk.indexOf('\n', start);
      yield chunk.slice(start, nl + 1);
      start = nl + 1;
    }
  }
}

/**
 * `replayLines` as text chunks of many complete lines each (about 1 MiB): for callers that need strings
 * (the server's text replay, which puts the declared rows in). Same arguments and bytes as `replayLines`;
 * from `ReplaySegment`s it runs the fast merge (`replayBytes`), whose NDJSON is decoded here (lossless: an
 * event's line is valid UTF-8).
 */
export async function* replayChunks(
  segments: readonly ReplaySegment[] | MergeSource[],
  format: ReplayFormat = 'ndjson',
  options: ReplayOptions = {},
): AsyncGenerator<string> {
  if (!isReopenable(segments)) {
    for await (const lines of replayBatches(segments, format, options)) yield lines.join('');
    return;
  }
  if (format === 'text') {
    // Whole lines of valid UTF-8 in each buffer: decoded without loss.
    for await (const b of replayText(segments, options))
      yield Buffer.from(b.buffer, b.byteOffset, b.byteLength).toString('utf8');
    return;
  }
  for await (const b of replayBytes(segments, 'ndjson', options)) {
    yield Buffer.from(b.buffer, b.byteOffset, b.byteLength).toString('utf8');
  }
}

export interface ReplayBytesOptions extends ReplayOptions {
  /**
   * Bytes of segment blocks in memory in all, spread over the writers (default 16 MiB, the CLI's; a
   * server, which holds one merge per response, passes less). A block is between 16 KiB and 1 MiB, and
   * at most 128 segments are open at once (lib/log/read/segment-blocks.ts).
   */
  readBudgetBytes?: number;
  /** Bytes of each output buffer (default 1 MiB); a line longer than that gets a buffer of its own. */
  outputBytes?: number;
}

/**
 * The replay as bytes, the fast path of the CLI and the server (issue 16): `raw` (every complete line as
 * written, quarantined ones included, corrections not applied: `replayRaw`), `ndjson` (events only, with
 * corrections: `replayLines`' NDJSON) or `text` (`replayLines`' text, UTF-8). Byte for byte what those give.
 *
 * Lines are read in large blocks (`readBudgetBytes` spread over the writers), found and scanned in place
 * (`scanLine`: the envelope only), and copied into output buffers of `outputBytes` as the bytes they were;
 * only an event some correction names is parsed, and text parses each event. Each yielded buffer is a
 * fresh one, the consumer's to keep. Memory: the blocks, one output buffer, the corrections (pass 1 as
 * `replayLines`: `CorrectionIndex.scan`, or `options.corrections`), and for text the attribution state.
 *
 * `options.onProblem` hears of every line that is not an event (as `mergeSegments` reports them);
 * `options.onCorrectionProblem` (ndjson, text) of every correction that changed nothing, after the last
 * line. `options.signal` stops it with the signal's reason; however it ends, every segment it opened is
 * closed. Errors of the segments' streams propagate.
 */
export async function* replayBytes(
  segments: readonly ReplaySegment[],
  mode: 'raw' | ReplayFormat,
  options: ReplayBytesOptions = {},
): AsyncGenerator<Uint8Array> {
  if (mode === 'text') {
    yield* replayText(segments, options);
    return;
  }
  const signal = options.signal;
  signal?.throwIfAborted();
  const index =
    mode === 'ndjson' ? (options.corrections ?? (await CorrectionIndex.scan(segments, signal))) : null;
  const lines = index !== null && index.size > 0 ? new EventLines('ndjson', index) : null;
  // Only an event a correction names is parsed; every other line is copied as it is.
  const render =
    lines === null
      ? undefined
      : (c: LineCursor): string | null => {
          if (c.isCorrection) index!.passed(c.idText()!);
          // Most events are no target: the id's hash, read from its bytes, says so without a string.
          if (!index!.mayTarget(c.idHash) || !index!.targets(c.idText()!)) return null;
          const p = parseLine(c.lb.subarray(c.ls, c.le), c.lineNo, c.lineOffset, true);
          return p.ok ? lines.line(p.event) : null;
        };
  yield* mergeToBuffers(openSegmentBlocks(segments, { budgetBytes: options.readBudgetBytes, signal }), {
    keepProblems: mode === 'raw',
    wantId: lines !== null,
    render,
    onProblem: options.onProblem,
    outputBytes: options.outputBytes,
    signal,
  });
  if (index !== null && options.onCorrectionProblem)
    for (const p of index.problems()) options.onCorrectionProblem(p);
}

/**
 * The text replay from `ReplaySegment`s: each event parsed once and its line written as UTF-8 into output
 * buffers of about `options.outputBytes` (default 1 MiB) of whole lines (`mergeToText`).
 */
async function* replayText(
  segments: readonly ReplaySegment[],
  options: ReplayBytesOptions,
): AsyncGenerator<Uint8Array> {
  const signal = options.signal;
  signal?.throwIfAborted();
  const index = options.corrections ?? (await CorrectionIndex.scan(segments, signal));
  const lines = new EventLines('text', index, true, true);
  const corrections = index.size > 0;
  const render = (c: LineCursor, out: TextOut): void => {
    // The cursor's block was checked as UTF-8 (or the line was, by its scan), and the scan took the line
    // as an event (parseLine's verdict: a JSON object of at most MAX_LINE_DEPTH levels with every envelope
    // field of its type): the fields the text shows are read from its bytes, or it is parsed once.
    const may = corrections && index.mayTarget(c.idHash);
    const f = readLineFields(c.lb, c.ls, c.le);
    if (f !== null) {
      lines.textLine(f, c, out, may);
      return;
    }
    const o = JSON.parse(c.lb.toString('utf8', c.ls, c.le)) as Record<string, unknown>;
    if (
      typeof o.type !== 'string' ||
      typeof o.id !== 'string' ||
      typeof o.w !== 'string' ||
      typeof o.ts !== 'string'
    )
      throw new Error(`line ${c.lineNo} of ${c.w}: the scan took a line the parser refuses`);
    // Most events are no correction's target: the id's hash, read from its bytes, says so (no map lookup).
    lines.textLine(o, c, out, may);
  };
  yield* mergeToText(openSegmentBlocks(segments, { budgetBytes: options.readBudgetBytes, signal }), {
    render,
    wantId: corrections,
    onProblem: options.onProblem,
    outputBytes: options.outputBytes,
    signal,
  });
  if (options.onCorrectionProblem) for (const p of index.problems()) options.onCorrectionProblem(p);
}

/**
 * The replay as it was before the fast merge (issue 16), kept as the reference the fast path is tested
 * against (test/log/fast-replay.test.ts) and for `MergeSource`s: `mergeSegmentBatches` of parsed events,
 * batches of output lines. Same arguments as `replayLines`.
 */
export async function* replayBatches(
  segments: readonly ReplaySegment[] | MergeSource[],
  format: ReplayFormat,
  options: ReplayOptions,
): AsyncGenerator<string[]> {
  let index: CorrectionIndex;
  let merged: AsyncIterable<MergedEvent[]> | Iterable<MergedEvent[]>;
  if (isReopenable(segments)) {
    index = options.corrections ?? (await CorrectionIndex.scan(segments, options.signal));
    // NDJSON needs only the envelope and the raw line: let the parsed trees die young.
    const sources = segmentSources(segments, { retainParsed: format !== 'ndjson', signal: options.signal });
    merged = mergeSegmentBatches(sources, options);
  } else {
    const all: MergedEvent[] = [];
    for await (const batch of mergeSegmentBatches(segments as MergeSource[], options)) all.push(...batch);
    index = CorrectionIndex.fromEvents(
      all.filter((m) => m.event.type === 'correction').map((m) => decodeEvent(m.event)),
    );
    merged = [all];
  }
  const lines = new EventLines(format, index);
  const anyCorrections = index.size > 0;
  for await (const batch of merged) {
    if (format === 'ndjson' && !anyCorrections) {
      // The common case: lines as written, one string per batch.
      let text = '';
      for (let i = 0; i < batch.length; i++) text += `${batch[i]!.event.raw}\n`;
      yield [text];
      continue;
    }
    const out: string[] = new Array(batch.length);
    for (let i = 0; i < batch.length; i++) out[i] = lines.line(batch[i]!.event);
    yield out;
  }
  if (options.onCorrectionProblem) for (const p of index.problems()) options.onCorrectionProblem(p);
}

/**
 * The raw replay: every complete line as written, quarantined ones included (DESIGN §5), in merged order,
 * each followed by `\n`, corrections not applied. Bytes, because a quarantined line may not be valid UTF-8.
 * From `ReplaySegment`s it is `replayBytes(segments, 'raw')`; `MergeSource`s take the reference merge
 * (`replayRawReference`).
 */
export function replayRaw(
  segments: readonly ReplaySegment[] | MergeSource[],
  options: MergeOptions = {},
): AsyncGenerator<Uint8Array> {
  return isReopenable(segments)
    ? replayBytes(segments, 'raw', options)
    : replayRawReference(segments, options);
}

/** The raw replay over the reference merge (`mergeSegmentBatchesKeepingProblems`), as before issue 16. */
export async function* replayRawReference(
  segments: readonly ReplaySegment[] | MergeSource[],
  options: MergeOptions = {},
): AsyncGenerator<Uint8Array> {
  const NL = Buffer.from('\n');
  const sources = isReopenable(segments)
    ? segmentSources(segments, { signal: options.signal })
    : (segments as MergeSource[]);
  // One buffer per merged batch, not per line: a line each was most of a raw replay's garbage.
  for await (const batch of mergeSegmentBatchesKeepingProblems(sources, options)) {
    const parts: Uint8Array[] = [];
    let text = '';
    for (const item of batch) {
      if ('event' in item) {
        text += `${item.event.raw}\n`;
        continue;
      }
      if (text) parts.push(Buffer.from(text, 'utf8'));
      text = '';
      parts.push(item.problem.bytes, NL);
    }
    if (text) parts.push(Buffer.from(text, 'utf8'));
    yield parts.length === 1 ? parts[0]! : Buffer.concat(parts);
  }
}

export type { ReplaySegment } from '../read/session-dir.js';
export { attributionMark, EventLines, formatTextLine } from './replay-text.js';
