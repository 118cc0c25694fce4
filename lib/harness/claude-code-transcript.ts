/**
 * The Claude Code transcript importer (`hansard import claude-code FILE`, DESIGN §6): turns a Claude Code
 * transcript (`~/.claude/projects/<project>/<session>.jsonl`) into a v3 session (seed 001,
 * DESIGN §3), every event stamped with the transcript's own time.
 *
 * Mapping (record by record, in file order; the table is docs/import.md, the code claude-code-records.ts):
 * only what a person typed becomes a `message` opening a turn; tool calls and results pair by call id;
 * a subagent's (`isSidechain`) records, and those of its own file (`<session>/subagents/agent-<id>.jsonl`,
 * merged in by time), go to its own writer in the same session, linked to the Task call that launched it
 * by what identifies the two (claude-code-links.ts); compaction, meta, command, interrupt and unknown
 * records become notes marked `extra.import_kind`. Nothing is dropped, and reading always goes on.
 *
 * @example
 * const r = await importClaudeCodeTranscript('~/.claude/projects/p/abc.jsonl', './sessions');
 * console.log(r.path, r.counts.turns, r.problems);
 */
import { createReadStream } from 'node:fs';
import { splitLines } from '../log/reader.js';
import { parseTs } from '../log/time.js';
import { openSession } from '../log/writer.js';
import { SubagentLinks } from './claude-code-links.js';
import { type ImportProblem, TranscriptMapper } from './claude-code-records.js';
import { type SubagentFile, subagentFiles } from './claude-code-sidefiles.js';
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
    /** subagent writers opened (one per subagent: its `agentId`, its own file, its record chain) */
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
 * 'hansard import claude-code' })`, one more per subagent, and ends each with `writer.end`.
 *
 * Subagents (issue 25 item 3; docs/import.md): their records are the transcript's `isSidechain` ones
 * and those of their own files (`subagentFiles`), read in with the transcript's in time order (a
 * subagent file's record after the transcript's of the same time). Everything is read once first, so
 * that each subagent is linked to the call that launched it by what ties them (`SubagentLinks`); one
 * nothing ties is a writer with `parent_action_id: null` whose first event is a note marked `meta` with
 * `extra.unlinked_subagent: true`.
 *
 * Times: each event's `ts` is its record's `timestamp` (µs precision, RFC 3339 UTC); a record without a
 * usable one takes the previous record's time. `mono` is seconds since the transcript's first timestamp,
 * never decreasing. `writer.start` carries the first timestamp and mono 0; `writer.end` the last. A
 * transcript with no timestamp at all is stamped with the current clock.
 *
 * Never throws on content: a line that is not JSON or not a usable record becomes a note holding its
 * text plus an entry in `problems` (`file` set for a subagent file's line), and reading goes on. The
 * last line is read whether or not it ends with a newline. Throws the file system's errors (ENOENT
 * reading `transcriptPath` — then nothing is written — EACCES, ENOSPC) and `WriterError` from
 * `openSession`.
 */
export async function importClaudeCodeTranscript(
  transcriptPath: string,
  outDir: string,
  options: ImportClaudeCodeOptions = {},
): Promise<ImportResult> {
  const links = new SubagentLinks();
  const firstAt = await prescan(transcriptPath, links);
  const files: SubagentFile[] = [];
  const firstOf = new Map<string, number | null>();
  // A subagent's own file may name the ids of the subagents it launched (their files are then looked
  // for too); each round reads at least one new file, so this ends.
  for (let fresh = true; fresh; ) {
    fresh = false;
    for (const f of await subagentFiles(transcriptPath, links.namedIds())) {
      if (firstOf.has(f.key)) continue;
      fresh = true;
      files.push(f);
      if (f.declared) links.declare(f.key, f.declared);
      firstOf.set(f.key, await prescan(f.path, links, f.key));
    }
  }
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
  const importer = new TranscriptMapper(writer, options.userId ?? 'user', clocks, agent, links);
  const sources = [
    mainSource(transcriptPath),
    ...files.map((f) => fileSource(f, firstOf.get(f.key) ?? null)),
  ];
  try {
    for await (const l of merged(sources)) {
      const { line, file, key } = l;
      if (l.badTime !== null) importer.problem(line, `timestamp ${l.badTime} is not RFC 3339`, file);
      if (l.ts !== null && firstAt !== null) {
        at = l.ts;
        mono = Math.max(mono, (l.ts - firstAt) / 1e6);
      }
      const o = firstAt === null ? {} : { at: at!, mono };
      if (!l.utf8) importer.problem(line, 'line is not valid UTF-8', file);
      if (l.text.trim() === '') continue; // a blank line carries nothing
      if (l.obj === undefined) importer.problem(line, 'line is not valid JSON', file);
      else if (l.obj === null) importer.problem(line, 'line is not a JSON object', file);
      if (l.obj && key !== undefined && links.isCopy(l.obj)) continue; // imported from the transcript
      if (l.obj) importer.take(line, l.text, l.obj, o, key);
      else importer.unknownLine(l.text, o, key);
    }
    importer.finish(firstAt === null ? {} : { at: at!, mono });
  } catch (err) {
    writer.close();
    for (const s of importer.subagents.values()) s.m.w.close();
    throw err;
  } finally {
    for (const s of sources) await s.lines?.return(undefined);
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

/** Reads a file once before anything is written: feeds `links`, returns its first timestamp (µs) or null. */
async function prescan(path: string, links: SubagentLinks, key?: string): Promise<number | null> {
  let first: number | null = null;
  for await (const l of readLines(path)) {
    const obj = parseObject(l.text);
    if (!obj) continue;
    first ??= recordTime(obj).micros;
    links.observe(obj, key);
  }
  return first;
}

/** One file being read into the import: the transcript, or a subagent's own file. */
interface Source {
  path: string;
  /** a subagent file's: the path its problems name, the subagent its records belong to */
  file?: string;
  key?: string;
  /** its first timestamp (µs): when it starts being read; null: none, after the transcript */
  first: number;
  /** the time of its last line read */
  last: number;
  lines?: AsyncGenerator<Line>;
  /** its next line, or null at its end */
  head?: Item | null;
}

/** A line of one of the files, parsed, with its record's time. */
interface Item extends Line {
  obj: Record<string, unknown> | null | undefined;
  /** the record's `timestamp` (µs), null when it has none usable */
  ts: number | null;
  /** a `timestamp` that is not RFC 3339, as JSON, else null */
  badTime: string | null;
  file?: string;
  key?: string;
}

function mainSource(path: string): Source {
  return { path, first: Number.NEGATIVE_INFINITY, last: Number.NEGATIVE_INFINITY };
}

function fileSource(f: SubagentFile, first: number | null): Source {
  const at = first ?? Number.POSITIVE_INFINITY;
  return { path: f.path, file: f.path, key: f.key, first: at, last: at };
}

/**
 * The lines of every source in time order: each file's own order kept, a line without a timestamp at
 * its file's last time, the earlier source first at equal times (the transcript before the subagents).
 * A subagent's file is opened when the import reaches its first time and closed at its end.
 */
async function* merged(sources: Source[]): AsyncGenerator<Item> {
  const advance = async (s: Source) => {
    const r = await s.lines!.next();
    if (r.done) {
      s.head = null;
      return;
    }
    const obj = parseObject(r.value.text);
    const t = recordTime(obj);
    s.head = { ...r.value, obj, ts: t.micros, badTime: t.bad, file: s.file, key: s.key };
  };
  const when = (s: Source): number | null =>
    s.lines === undefined ? s.first : s.head ? (s.head.ts ?? s.last) : null;
  for (;;) {
    let next: Source | undefined;
    let best = Number.POSITIVE_INFINITY;
    for (const s of sources) {
      const t = when(s);
      if (t !== null && (next === undefined || t < best)) [next, best] = [s, t];
    }
    if (next === undefined) return;
    if (next.lines === undefined) {
      next.lines = readLines(next.path);
      await advance(next);
      continue;
    }
    const item = next.head!;
    if (item.ts !== null) next.last = item.ts;
    yield item;
    await advance(next);
  }
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

/** The record's `timestamp` in µs since the epoch, or null (absent, or not RFC 3339: `bad` then holds it). */
function recordTime(obj: Record<string, unknown> | null | undefined): {
  micros: number | null;
  bad: string | null;
} {
  if (!obj || obj.timestamp === undefined) return { micros: null, bad: null };
  const parsed = typeof obj.timestamp === 'string' ? parseTs(obj.timestamp) : null;
  return parsed
    ? { micros: parsed.micros, bad: null }
    : { micros: null, bad: JSON.stringify(obj.timestamp) ?? 'null' };
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
