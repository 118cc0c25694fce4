/**
 * The line checks of `ingestChunk` (lib/service/ingest/ingest-chunk.ts; DESIGN §5 "What ingest refuses and what it
 * records"): a new segment's first line must be a parseable `writer.start` of the path's session and
 * writer, no parseable line may name another session or writer, and the index counts lines, the last
 * seq, whether the writer ended, its agent, what the chunk adds to the session's summary, and the emails
 * its joins claim (seen-emails.ts).
 *
 * `scanLines` reads most lines with the byte scan of lib/log/format/ingest-scan.ts (issue 16.3) and parses only
 * the lines the summary reads (`SUMMARY_TYPES`), a new segment's first line, and the lines the scan does
 * not decide (invalid UTF-8, torn or malformed lines, escapes in the envelope): those take the path of
 * `scanLinesReference`, the parse of every line this module had before, kept as the reference the
 * differential tests compare `scanLines` with (same `Scan`, or the same refusal).
 */
import { isUtf8 } from 'node:buffer';
import { parseLine } from '../../log/format/codec.js';
import { bytesEqual, newIngestLineScan, scanIngestLine } from '../../log/format/ingest-scan.js';
import { provenanceOf } from '../../log/format/provenance.js';
import { cutText } from '../../log/format/text-cut.js';
import { parseTs } from '../../log/format/time.js';
import type { SummaryDelta, WriterRecord } from '../../store/index.js';
import { AppError } from '../shared/errors.js';
import { type EmailClaim, emailClaimsOf } from './seen-emails.js';
import { SUMMARY_TYPES, type SummaryEvent, summarizeChunk } from './summary.js';

/** Longest agent name a writer record keeps, in UTF-16 units (the summary keeps less: `SUMMARY_NAME_CHARS`). */
const WRITER_AGENT_CHARS = 200;

/** What a chunk's lines add to the writer's index. */
export interface Scan {
  lines: number;
  lastSeq: number | null;
  ended: boolean;
  agent: string | null;
  /** a new segment's `meta.provenance` (lib/log/format/provenance.ts: a kind or `unknown`); null for a later chunk */
  provenance: string | null;
  /** what the chunk adds to the session's summary */
  summary: SummaryDelta;
  /** its joins' emails (issue 29 item 4, seen-emails.ts): recorded on person records once it is stored */
  emailClaims: EmailClaim[];
}

/** The state of one chunk's scan, shared by the fast and the parsing path. */
interface Lines {
  body: Uint8Array;
  sid: string;
  w: string;
  current: WriterRecord | null;
  firstLine: number;
  scan: Scan;
  /**
   * The merge key of a correction (lib/log/read/merge.ts): the writer's running maximum ts. Only this chunk's
   * events are at hand, so a chunk's leading event of unreadable ts sorts first (the writer record keeps
   * no maximum ts); its later events sort as the merge sorts them.
   */
  maxTs: number;
  /** `[at, end)` of the ts of scanned events not yet in `maxTs` (read only when a summary event needs it) */
  pendingTs: number[];
  forSummary: SummaryEvent[];
}

const SUMMARY_TYPE_BYTES = [...SUMMARY_TYPES].map((t) => Buffer.from(t, 'utf8'));
const WRITER_END = Buffer.from('writer.end', 'utf8');
const lineScan = newIngestLineScan();

/**
 * Checks what ingest refuses and counts what the index records (see the module doc).
 * @throws AppError `missing_writer_start` (with `line`), `misrouted_line` (with `line`, `path`, `line_names`)
 */
export function scanLines(body: Uint8Array, sid: string, w: string, current: WriterRecord | null): Scan {
  const st = begin(body, sid, w, current);
  // Split at newlines (ASCII), the lines of valid UTF-8 are valid UTF-8: one check for the whole body.
  const utf8 = isUtf8(body);
  const sidBytes = Buffer.from(sid, 'utf8');
  const wBytes = Buffer.from(w, 'utf8');
  const ls = lineScan;
  let start = 0;
  while (start < body.length) {
    const nl = body.indexOf(0x0a, start);
    if (
      utf8 &&
      !(current === null && st.scan.lines === 0) &&
      scanIngestLine(body, start, nl, sidBytes, wBytes, ls) &&
      ls.sidMatches &&
      ls.wMatches &&
      !SUMMARY_TYPE_BYTES.some((t) => bytesEqual(body, ls.typeAt, ls.typeEnd, t))
    ) {
      // An event of this writer that the summary does not read: its seq, its ts for later, writer.end.
      st.scan.lastSeq = ls.seq;
      st.pendingTs.push(ls.tsAt, ls.tsEnd);
      if (bytesEqual(body, ls.typeAt, ls.typeEnd, WRITER_END)) st.scan.ended = true;
      st.scan.lines += 1;
    } else parsedLine(st, start, nl);
    start = nl + 1;
  }
  return finish(st);
}

/** `scanLines` parsing every line with `parseLine`: the reference of the differential tests. */
export function scanLinesReference(
  body: Uint8Array,
  sid: string,
  w: string,
  current: WriterRecord | null,
): Scan {
  const st = begin(body, sid, w, current);
  for (let start = 0; start < body.length; ) {
    const nl = body.indexOf(0x0a, start);
    parsedLine(st, start, nl);
    start = nl + 1;
  }
  return finish(st);
}

function begin(body: Uint8Array, sid: string, w: string, current: WriterRecord | null): Lines {
  return {
    body,
    sid,
    w,
    current,
    firstLine: (current?.lines ?? 0) + 1,
    scan: {
      lines: 0,
      lastSeq: null,
      ended: false,
      agent: null,
      provenance: null,
      summary: { title: null, people: [], agents: [] },
      emailClaims: [],
    },
    maxTs: 0,
    pendingTs: [],
    forSummary: [],
  };
}

function finish(st: Lines): Scan {
  summarizeChunk(st.scan.summary, st.forSummary, st.w);
  st.scan.emailClaims = emailClaimsOf(st.forSummary);
  return st.scan;
}

let parsedLines = 0;

/** How many lines ingest has parsed with `parseLine` since the process started (tests, benchmarks). */
export function ingestParsedLines(): number {
  return parsedLines;
}

/** One line `body[start, nl)` through `parseLine`: the checks and counts of the module doc. */
function parsedLine(st: Lines, start: number, nl: number): void {
  parsedLines++;
  const { sid, w, scan } = st;
  const bytes = st.body.subarray(start, nl);
  const lineNo = st.firstLine + scan.lines;
  const parsed = parseLine(bytes, lineNo, start, true);
  if (st.current === null && scan.lines === 0) {
    if (
      !parsed.ok ||
      parsed.event.type !== 'writer.start' ||
      parsed.event.sid !== sid ||
      parsed.event.w !== w
    ) {
      throw new AppError(
        'missing_writer_start',
        `line 1 of a new segment must be a writer.start of session ${sid} and writer ${w}`,
        { line: 1 },
      );
    }
    const meta = parsed.event.obj.meta as Record<string, unknown> | undefined;
    if (meta && typeof meta.agent === 'string') scan.agent = cutText(meta.agent, WRITER_AGENT_CHARS);
    // Read from the bytes as written: a correction of `meta` never changes who recorded the writer.
    scan.provenance = provenanceOf(meta);
  }
  const named = parsed.ok ? parsed.event.obj : looseObject(bytes);
  if (
    named &&
    ((typeof named.sid === 'string' && named.sid !== sid) || (typeof named.w === 'string' && named.w !== w))
  ) {
    throw new AppError(
      'misrouted_line',
      `line ${lineNo} belongs to another session or writer than the path names`,
      {
        line: lineNo,
        path: { sid, w },
        line_names: { sid: named.sid, w: named.w },
      },
    );
  }
  if (parsed.ok) {
    scan.lastSeq = parsed.event.seq;
    foldPendingTs(st);
    const ts = parsed.event.tsMicros;
    if (ts !== null && ts > st.maxTs) st.maxTs = ts;
    if (parsed.event.type === 'writer.end') scan.ended = true;
    // kept for the summary, which applies the chunk's user_id corrections once all of it is read
    if (SUMMARY_TYPES.has(parsed.event.type)) {
      const { type, obj, tsMicros: at, seq } = parsed.event;
      st.forSummary.push({ type, obj, at, seq, mergeAt: st.maxTs });
    }
  }
  scan.lines += 1;
}

/** Adds the ts of the scanned events before this line to the running maximum (their bytes are their text). */
function foldPendingTs(st: Lines): void {
  const p = st.pendingTs;
  if (p.length === 0) return;
  const text = Buffer.from(st.body.buffer, st.body.byteOffset, st.body.byteLength);
  for (let k = 0; k < p.length; k += 2) {
    const micros = parseTs(text.toString('utf8', p[k], p[k + 1]))?.micros;
    if (micros !== undefined && micros > st.maxTs) st.maxTs = micros;
  }
  p.length = 0;
}

/** A line that is a JSON object but not a complete envelope still must not name another writer. */
function looseObject(bytes: Uint8Array): Record<string, unknown> | null {
  try {
    const v = JSON.parse(Buffer.from(bytes).toString('utf8')) as unknown;
    return typeof v === 'object' && v !== null && !Array.isArray(v) ? (v as Record<string, unknown>) : null;
  } catch {
    return null;
  }
}
