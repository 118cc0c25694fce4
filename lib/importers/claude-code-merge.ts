/**
 * Reading a Claude Code session's files as one sequence of records (docs/import.md "Subagents' own
 * files"): the transcript and its subagents' own files, merged by time. Lines come a chunk at a time and
 * are handed out one by one without an `await` each (`LineMerge.next`), as the segment reader does:
 * the import's hot path stays a plain loop.
 */
import { createReadStream } from 'node:fs';
import { stat } from 'node:fs/promises';
import { parseTs } from '../log/format/time.js';
import { splitLineBatches } from '../log/read/reader.js';
import { decodeLine, parseObject } from './json-line.js';

/** One line of a file as text. */
export interface Line {
  line: number;
  text: string;
  /** false when the bytes are not valid UTF-8 (`text` is then a lossy decoding) */
  utf8: boolean;
}

/** A line of one of the files, parsed, with its record's time. */
export interface Item extends Line {
  /** the parsed line: an object, null for JSON that is not one, undefined for text that is not JSON */
  obj: Record<string, unknown> | null | undefined;
  /** the record's `timestamp` (µs), null when it has none usable */
  ts: number | null;
  /** a `timestamp` that is not RFC 3339, as JSON, else null */
  badTime: string | null;
  /** a subagent file's: its path, and the subagent its records belong to */
  file?: string;
  key?: string;
}

/** One file read into the import: the transcript, or a subagent's own file. */
export interface MergeSource {
  path: string;
  /** a subagent file's path and subagent (absent for the transcript) */
  file?: string;
  key?: string;
  /** its first timestamp (µs): it is opened when the merge reaches it; null: after the transcript */
  first: number | null;
}

interface Open extends MergeSource {
  /** its place among the sources (the earlier first at equal times) */
  n: number;
  /** the time of its last line handed out */
  last: number;
  lines?: AsyncGenerator<Line[]>;
  batch: Item[];
  i: number;
}

/**
 * The lines of every source in time order: each file's own order kept, a line without a timestamp at
 * its file's last time, the earlier source first at equal times (the transcript before its subagents).
 * The transcript (the first source, `first: null`) starts at once; a subagent's file is opened when the
 * merge reaches its first time and closed at its end.
 */
export class LineMerge {
  /** the sources being read, in source order */
  private active: Open[] = [];
  /** the sources not opened yet, by first time then source order: only the head can come next */
  private readonly pending: Open[];

  constructor(sources: MergeSource[]) {
    const all = sources.map((s, n) => {
      const at = n === 0 ? Number.NEGATIVE_INFINITY : (s.first ?? Number.POSITIVE_INFINITY);
      return { ...s, n, first: at, last: at, batch: [], i: 0 };
    });
    this.pending = all.sort((a, b) => a.first - b.first || a.n - b.n);
  }

  /** The next line, or null after the last; a promise only when a file must be read further. */
  next(): Item | null | Promise<Item | null> {
    let best = this.pending[0];
    let bestAt = best?.first ?? 0;
    for (const s of this.active) {
      const head = s.batch[s.i];
      const at = head === undefined ? s.last : (head.ts ?? s.last);
      if (best === undefined || at < bestAt || (at === bestAt && s.n < best.n)) [best, bestAt] = [s, at];
    }
    if (best === undefined) return null;
    const head = best.batch[best.i];
    if (head === undefined) return this.load(best).then(() => this.next());
    best.i += 1;
    if (head.ts !== null) best.last = head.ts;
    return head;
  }

  /** Closes every file still open (after an error). */
  async close(): Promise<void> {
    for (const s of this.active) await s.lines?.return(undefined);
  }

  /** Reads a source's next chunk (opening it first); a source at its end leaves the merge. */
  private async load(s: Open): Promise<void> {
    if (s.lines === undefined) {
      this.pending.shift();
      this.active = [...this.active, s].sort((a, b) => a.n - b.n);
      s.lines = readLineBatches(s.path);
    }
    const r = await s.lines.next();
    s.i = 0;
    s.batch = r.done ? [] : r.value.map((l) => item(l, s));
    if (r.done) this.active = this.active.filter((x) => x !== s);
  }
}

function item(l: Line, s: MergeSource): Item {
  const obj = parseObject(l.text);
  const t = recordTime(obj);
  return { ...l, obj, ts: t.micros, badTime: t.bad, file: s.file, key: s.key };
}

/** The record's `timestamp` in µs since the epoch, or null (absent, or not RFC 3339: `bad` then holds it). */
export function recordTime(obj: Record<string, unknown> | null | undefined): {
  micros: number | null;
  bad: string | null;
} {
  if (!obj || obj.timestamp === undefined) return { micros: null, bad: null };
  const parsed = typeof obj.timestamp === 'string' ? parseTs(obj.timestamp) : null;
  return parsed
    ? { micros: parsed.micros, bad: null }
    : { micros: null, bad: JSON.stringify(obj.timestamp) ?? 'null' };
}

/** A file's lines a chunk at a time, the last one included whether or not a newline ends it. */
export async function* readLineBatches(path: string): AsyncGenerator<Line[]> {
  // Chunks of 256 KiB, or the size of a smaller file: a session's many small subagent files would
  // otherwise each take a 256 KiB buffer a read.
  const size = (await stat(path)).size;
  const highWaterMark = Math.max(16 * 1024, Math.min(256 * 1024, size + 1));
  for await (const batch of splitLineBatches(createReadStream(path, { highWaterMark }))) {
    const out: Line[] = [];
    for (const l of batch) {
      const { text, utf8 } = decodeLine(l.bytes);
      out.push({ line: l.line, text, utf8 });
    }
    yield out;
  }
}
