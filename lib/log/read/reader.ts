/**
 * The lenient streaming reader of one segment (seed 001, DESIGN §3 and §5).
 *
 * It splits bytes into lines itself (not with `readline`) because it must know each line's byte offset,
 * keep invalid UTF-8 as a problem rather than replace it, and tell a last line with no newline from a
 * complete one. Memory is bounded by the longest line, not by the segment.
 */

import { isUtf8 } from 'node:buffer';
import { createReadStream } from 'node:fs';
import {
  type LineProblem,
  type ParsedLine,
  parseLine,
  parseLineText,
  type RecordedEvent,
} from '../format/codec.js';

/** One line of a segment: its bytes without the newline. */
export interface RawLine {
  bytes: Uint8Array;
  /** 1-based line number */
  line: number;
  /** byte offset of the first byte */
  offset: number;
  /** false for a last line that has no newline (a writer may still be writing it) */
  complete: boolean;
}

const NL = 0x0a;
/** Lines parsed per batch the reader yields. */
const PARSE_BATCH = 16;

/**
 * Splits a byte stream into lines, a batch per chunk of input: the lines that end in that chunk. A last
 * line with no newline comes at the end with `complete: false`. Batching keeps the per-line cost of the
 * replay hot path to plain loops, with one `await` per chunk rather than per line.
 */
export async function* splitLineBatches(
  source: AsyncIterable<Uint8Array> | Iterable<Uint8Array>,
): AsyncGenerator<RawLine[]> {
  let pending: Uint8Array[] = [];
  let pendingLen = 0;
  let offset = 0; // offset of the first byte of the current line
  let line = 1;
  for await (const chunk of source) {
    const batch: RawLine[] = [];
    let start = 0;
    for (;;) {
      const nl = chunk.indexOf(NL, start);
      if (nl === -1) break;
      let bytes: Uint8Array;
      if (pendingLen === 0) bytes = chunk.subarray(start, nl);
      else {
        pending.push(chunk.subarray(start, nl));
        bytes = Buffer.concat(pending, pendingLen + (nl - start));
        pending = [];
        pendingLen = 0;
      }
      batch.push({ bytes, line, offset, complete: true });
      offset += bytes.length + 1;
      line += 1;
      start = nl + 1;
    }
    if (start < chunk.length) {
      pending.push(chunk.subarray(start));
      pendingLen += chunk.length - start;
    }
    if (batch.length > 0) yield batch;
  }
  if (pendingLen > 0) yield [{ bytes: Buffer.concat(pending, pendingLen), line, offset, complete: false }];
}

/**
 * Splits a byte stream into lines. Accepts any async iterable of byte chunks (a Node `Readable`, a web
 * `ReadableStream`, an array). Yields the last line with `complete: false` if the stream does not end with
 * a newline.
 */
export async function* splitLines(
  source: AsyncIterable<Uint8Array> | Iterable<Uint8Array>,
): AsyncGenerator<RawLine> {
  for await (const batch of splitLineBatches(source)) yield* batch;
}

export interface ReadOptions {
  /**
   * Keep each event's parsed object (default true). False saves memory when only the envelope and the
   * raw line are needed (the NDJSON replay); `obj` then parses the line again if asked.
   */
  retainParsed?: boolean;
}

/** What reading a segment yields, in file order. */
export type SegmentItem = { kind: 'event'; event: RecordedEvent } | { kind: 'problem'; problem: LineProblem };

/**
 * Reads a segment leniently, a batch of items per chunk of input (see `readSegment`). The replay's hot
 * path: the complete lines of a chunk are checked for UTF-8 and decoded in one call and split as a string;
 * only a chunk that is not valid UTF-8 is handled line by line.
 */
export async function* readSegmentBatches(
  source: AsyncIterable<Uint8Array> | Iterable<Uint8Array>,
  options: ReadOptions = {},
): AsyncGenerator<SegmentItem[]> {
  const retain = options.retainParsed ?? true;
  let carry: Uint8Array[] = [];
  let carryLen = 0;
  let offset = 0; // byte offset of the next line
  let line = 1;
  for await (const input of source) {
    const lastNl = input.lastIndexOf(NL);
    if (lastNl === -1) {
      carry.push(input);
      carryLen += input.length;
      continue;
    }
    const head = input.subarray(0, lastNl + 1);
    const body = carryLen === 0 ? asBuffer(head) : Buffer.concat([...carry, head], carryLen + head.length);
    carry = lastNl + 1 < input.length ? [input.subarray(lastNl + 1)] : [];
    carryLen = input.length - lastNl - 1;
    let items: SegmentItem[] = [];
    if (isUtf8(body)) {
      const text = body.toString('utf8');
      const ascii = text.length === body.length; // then char offsets are byte offsets
      let pos = 0;
      let bytePos = 0;
      while (pos < text.length) {
        const nl = text.indexOf('\n', pos);
        const lineText = text.slice(pos, nl);
        const byteLen = ascii ? lineText.length : Buffer.byteLength(lineText, 'utf8');
        items.push(toItem(parseLineText(lineText, line, offset, body, bytePos, byteLen, retain)));
        offset += byteLen + 1;
        bytePos += byteLen + 1;
        line += 1;
        pos = nl + 1;
        // Small batches, parsed only when the merge asks for them: parsed events then live briefly
        // and die young, which keeps the heap flat when many writers are merged (docs/benchmarks.md).
        if (items.length === PARSE_BATCH && pos < text.length) {
          yield items;
          items = [];
        }
      }
    } else {
      let start = 0;
      while (start < body.length) {
        const nl = body.indexOf(NL, start);
        items.push(toItem(parseLine(body.subarray(start, nl), line, offset, true)));
        offset += nl - start + 1;
        line += 1;
        start = nl + 1;
      }
    }
    if (items.length > 0) yield items;
  }
  if (carryLen > 0) yield [toItem(parseLine(Buffer.concat(carry, carryLen), line, offset, false))];
}

function asBuffer(b: Uint8Array): Buffer {
  return Buffer.isBuffer(b) ? b : Buffer.from(b.buffer, b.byteOffset, b.byteLength);
}

/**
 * Reads a segment leniently: every complete line that is a JSON object with a full envelope is an event;
 * any other line (torn, welded, NUL-padded, invalid UTF-8, no newline at the end) is a problem, and
 * reading goes on. Never throws on content; I/O errors of the source propagate.
 */
export async function* readSegment(
  source: AsyncIterable<Uint8Array> | Iterable<Uint8Array>,
): AsyncGenerator<SegmentItem> {
  for await (const batch of readSegmentBatches(source)) yield* batch;
}

function toItem(p: ParsedLine): SegmentItem {
  return p.ok ? { kind: 'event', event: p.event } : { kind: 'problem', problem: p.problem };
}

/** Reads a segment file from disk (see `readSegment`). */
export function readSegmentFile(path: string): AsyncGenerator<SegmentItem> {
  return readSegment(createReadStream(path, { highWaterMark: 256 * 1024 }));
}

/** Reads a segment file from disk in batches (see `readSegmentBatches`). */
export function readSegmentFileBatches(path: string): AsyncGenerator<SegmentItem[]> {
  return readSegmentBatches(createReadStream(path, { highWaterMark: 64 * 1024 }));
}
