/**
 * The Claude Code transcript importer (`hansard import claude-code FILE`, DESIGN §6): turns a Claude Code
 * transcript (`~/.claude/projects/<project>/<session>.jsonl`) into a v3 session (seed 001,
 * DESIGN §3), every event stamped with the transcript's own time.
 *
 * Mapping (record by record, in file order; the table is docs/import.md, the code claude-code-records.ts):
 * only what a person typed becomes a `message` opening a turn; tool calls and results pair by call id;
 * a subagent's (`isSidechain`) records go to its own writer in the same session, linked to the Task
 * call; compaction, meta, command, interrupt and unknown records become notes marked
 * `extra.import_kind`. Nothing is dropped, and reading always goes on.
 *
 * @example
 * const r = await importClaudeCodeTranscript('~/.claude/projects/p/abc.jsonl', './sessions');
 * console.log(r.path, r.counts.turns, r.problems);
 */
import { createReadStream } from 'node:fs';
import { splitLines } from '../log/reader.js';
import { parseTs } from '../log/time.js';
import { openSession } from '../log/writer.js';
import { type ImportProblem, TranscriptMapper } from './claude-code-records.js';
import type { MappingCounts } from './mapping.js';

export { IMPORT_NOTE_AUTHOR, type ImportProblem } from './claude-code-records.js';

/** What `importClaudeCodeTranscript` may be told. */
export interface ImportClaudeCodeOptions {
  /** `writer.start` `meta.agent`; default `claude-code` */
  agent?: string;
  /** the `user_id` of every prompt `message`; default `user` */
  userId?: string;
}

/** What an import wrote. */
export interface ImportResult {
  /** the session id `s_…` */
  sid: string;
  /** the writer id `w_…` */
  w: string;
  /** the session directory */
  dir: string;
  /** the segment file written */
  path: string;
  /** events written over all the session's writers, by kind (`writer.*` and `turn.end` not counted) */
  counts: MappingCounts & {
    /** subagent writers opened (one per `agentId` of the `isSidechain` records) */
    subagentWriters: number;
  };
  problems: ImportProblem[];
}

/** One transcript line as text. */
interface Line {
  line: number;
  text: string;
  /** false when the bytes are not valid UTF-8 (`text` is then a lossy decoding) */
  utf8: boolean;
}

/**
 * Imports a Claude Code transcript as a new session under `outDir` (DESIGN §6 `hansard import
 * claude-code`; format: seed 001, DESIGN §3). Writes one segment with `openSession(outDir, { agent, app:
 * 'hansard import claude-code' })` and ends it with `writer.end`.
 *
 * Times: each event's `ts` is its record's `timestamp` (µs precision, RFC 3339 UTC); a record without a
 * usable one takes the previous record's time. `mono` is seconds since the transcript's first timestamp,
 * never decreasing. `writer.start` carries the first timestamp and mono 0; `writer.end` the last. A
 * transcript with no timestamp at all is stamped with the current clock.
 *
 * Never throws on content: a line that is not JSON or not a usable record becomes a note holding its
 * text plus an entry in `problems`, and reading goes on. The last line is read whether or not it ends
 * with a newline. Throws the file system's errors (ENOENT reading `transcriptPath` — then nothing is
 * written — EACCES, ENOSPC) and `WriterError` from `openSession`.
 */
export async function importClaudeCodeTranscript(
  transcriptPath: string,
  outDir: string,
  options: ImportClaudeCodeOptions = {},
): Promise<ImportResult> {
  const firstAt = await firstTimestamp(transcriptPath);
  // The writer's clocks stand at the record being imported, so `writer.start` carries the transcript's
  // first time (mono 0) and nothing falls back to the importer's own clock.
  let at = firstAt;
  let mono = 0;
  const clocks = firstAt === null ? {} : { clock: () => at ?? 0, monoClock: () => mono };
  const writer = openSession(
    outDir,
    { agent: options.agent ?? 'claude-code', app: 'hansard import claude-code', provenance: 'transcript' },
    clocks,
  );
  const agent = options.agent ?? 'claude-code';
  const importer = new TranscriptMapper(writer, options.userId ?? 'user', clocks, agent);
  try {
    for await (const l of readLines(transcriptPath)) {
      const obj = parseObject(l.text);
      const ts = recordTime(l.line, obj, importer);
      if (ts !== null && firstAt !== null) {
        at = ts;
        mono = Math.max(mono, (ts - firstAt) / 1e6);
      }
      const o = firstAt === null ? {} : { at: at!, mono };
      if (!l.utf8) importer.problem(l.line, 'line is not valid UTF-8');
      if (l.text.trim() === '') continue; // a blank line carries nothing
      if (obj === undefined) importer.problem(l.line, 'line is not valid JSON');
      else if (obj === null) importer.problem(l.line, 'line is not a JSON object');
      if (obj) importer.take(l.line, l.text, obj, o);
      else importer.unknownLine(l.text, o);
    }
    importer.finish(firstAt === null ? {} : { at: at!, mono });
  } catch (err) {
    writer.close();
    for (const s of importer.subagents.values()) s.m.w.close();
    throw err;
  }
  return {
    sid: writer.sid,
    w: writer.w,
    dir: writer.dir,
    path: writer.path,
    counts: importer.counts(),
    problems: importer.problems,
  };
}

/** The parsed line: an object, `null` for JSON that is not an object, `undefined` for text that is not JSON. */
function parseObject(text: string): Record<string, unknown> | null | undefined {
  let v: unknown;
  try {
    v = JSON.parse(text.charCodeAt(0) === 0xfeff ? text.slice(1) : text);
  } catch {
    return undefined;
  }
  return typeof v === 'object' && v !== null && !Array.isArray(v) ? (v as Record<string, unknown>) : null;
}

/** The record's `timestamp` in µs since the epoch, or null (absent, or not a timestamp: a problem). */
function recordTime(
  line: number,
  obj: Record<string, unknown> | null | undefined,
  importer?: TranscriptMapper,
): number | null {
  if (!obj || obj.timestamp === undefined) return null;
  const parsed = typeof obj.timestamp === 'string' ? parseTs(obj.timestamp) : null;
  if (parsed === null) importer?.problem(line, `timestamp ${JSON.stringify(obj.timestamp)} is not RFC 3339`);
  return parsed ? parsed.micros : null;
}

/** The first record timestamp of the transcript (µs since the epoch), or null when it has none. */
async function firstTimestamp(path: string): Promise<number | null> {
  for await (const l of readLines(path)) {
    const t = recordTime(l.line, parseObject(l.text));
    if (t !== null) return t;
  }
  return null;
}

const strictUtf8 = new TextDecoder('utf-8', { fatal: true });
const lossyUtf8 = new TextDecoder('utf-8');

/** The transcript's lines, the last one included whether or not a newline ends it. */
async function* readLines(path: string): AsyncGenerator<Line> {
  for await (const l of splitLines(createReadStream(path, { highWaterMark: 256 * 1024 }))) {
    let text: string;
    let utf8 = true;
    try {
      text = strictUtf8.decode(l.bytes);
    } catch {
      text = lossyUtf8.decode(l.bytes);
      utf8 = false;
    }
    yield { line: l.line, text, utf8 };
  }
}
