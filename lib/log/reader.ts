/**
 * The lenient streaming reader of one segment (seed 001, DESIGN §3 and §5).
 *
 * It splits bytes into lines itself (not with `readline`) because it must know each line's byte offset,
 * keep invalid UTF-8 as a problem rather than replace it, and tell a last line with no newline from a
 * complete one. Memory is bounded by the longest line, not by the segment.
 */
import { createReadStream } from 'node:fs';
import { type LineProblem, type ParsedLine, parseLine, type RecordedEvent } from './codec.js';

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

/**
 * Splits a byte stream into lines. Accepts any async iterable of byte chunks (a Node `Readable`, a web
 * `ReadableStream`, an array). Yields the last line with `complete: false` if the stream does not end with
 * a newline.
 */
export async function* splitLines(
  source: AsyncIterable<Uint8Array> | Iterable<Uint8Array>,
): AsyncGenerator<RawLine> {
  let pending: Uint8Array[] = [];
  let pendingLen = 0;
  let offset = 0; // offset of the first byte of the current line
  let line = 1;
  for await (const chunk of source) {
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
      yield { bytes, line, offset, complete: true };
      offset += bytes.length + 1;
      line += 1;
      start = nl + 1;
    }
    if (start < chunk.length) {
      pending.push(chunk.subarray(start));
      pendingLen += chunk.length - start;
    }
  }
  if (pendingLen > 0) yield { bytes: Buffer.concat(pending, pendingLen), line, offset, complete: false };
}

/** What reading a segment yields, in file order. */
export type SegmentItem = { kind: 'event'; event: RecordedEvent } | { kind: 'problem'; problem: LineProblem };

/**
 * Reads a segment leniently: every complete line that is a JSON object with a full envelope is an event;
 * any other line (torn, welded, NUL-padded, invalid UTF-8, no newline at the end) is a problem, and
 * reading goes on. Never throws on content; I/O errors of the source propagate.
 */
export async function* readSegment(
  source: AsyncIterable<Uint8Array> | Iterable<Uint8Array>,
): AsyncGenerator<SegmentItem> {
  for await (const l of splitLines(source)) yield toItem(parseLine(l.bytes, l.line, l.offset, l.complete));
}

function toItem(p: ParsedLine): SegmentItem {
  return p.ok ? { kind: 'event', event: p.event } : { kind: 'problem', problem: p.problem };
}

/** Reads a segment file from disk (see `readSegment`). */
export function readSegmentFile(path: string): AsyncGenerator<SegmentItem> {
  return readSegment(createReadStream(path, { highWaterMark: 256 * 1024 }));
}
