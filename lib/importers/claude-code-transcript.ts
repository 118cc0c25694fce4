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
import { openSession } from '../log/write/writer.js';
import { SubagentLinks } from './claude-code-links.js';
import { LineMerge, readLineBatches, recordTime } from './claude-code-merge.js';
import { type ImportProblem, TranscriptMapper } from './claude-code-records.js';
import { type SubagentFile, subagentFiles } from './claude-code-sidefiles.js';
import { UsageLookahead } from './claude-code-usage.js';
import { parseObject } from './json-line.js';
import type { MappingCounts } from './mapping.js';

export { IMPORT_NOTE_AUTHOR, type ImportProblem, type ImportProblemKind } from './claude-code-records.js';

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
    /** of those, the ones linked to no Task/Agent call (docs/import.md) */
    unlinkedSubagents: number;
    /** `token_usage` notes: one per assistant message id (issue 27; `<synthetic>` placeholders have none) */
    tokenUsage: number;
  };
  problems: ImportProblem[];
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
  const usage = new UsageLookahead();
  const firstAt = await prescan(transcriptPath, links, usage);
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
      firstOf.set(f.key, await prescan(f.path, links, usage, f.key));
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
  const importer = new TranscriptMapper(writer, options.userId ?? 'user', clocks, agent, links, usage);
  const merge = new LineMerge([
    { path: transcriptPath, first: null },
    ...files.map((f) => ({ path: f.path, file: f.path, key: f.key, first: firstOf.get(f.key) ?? null })),
  ]);
  try {
    for (;;) {
      let l = merge.next();
      if (l instanceof Promise) l = await l;
      if (l === null) break;
      const { line, file, key } = l;
      if (l.badTime !== null)
        importer.problem(line, `timestamp ${l.badTime} is not RFC 3339`, 'read_in_part', file);
      if (l.ts !== null && firstAt !== null) {
        at = l.ts;
        mono = Math.max(mono, (l.ts - firstAt) / 1e6);
      }
      const o = firstAt === null ? {} : { at: at!, mono };
      if (!l.utf8) importer.problem(line, 'line is not valid UTF-8', 'read_in_part', file);
      if (l.text.trim() === '') continue; // a blank line carries nothing
      if (l.obj === undefined) importer.problem(line, 'line is not valid JSON', 'kept_as_note', file);
      else if (l.obj === null) importer.problem(line, 'line is not a JSON object', 'kept_as_note', file);
      if (l.obj && key !== undefined && links.isCopy(l.obj)) continue; // imported from the transcript
      if (l.obj) importer.take(line, l.text, l.obj, o, key);
      else importer.unknownLine(l.text, o, key);
    }
    importer.finish(firstAt === null ? {} : { at: at!, mono });
  } catch (err) {
    writer.close();
    for (const s of importer.subagents.values()) s.m.w.close();
    await merge.close();
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

/**
 * Reads a file once before anything is written: feeds `links` and `usage` (where each message's last
 * usage record is), returns its first timestamp (µs) or null.
 */
async function prescan(
  path: string,
  links: SubagentLinks,
  usage: UsageLookahead,
  key?: string,
): Promise<number | null> {
  let first: number | null = null;
  for await (const batch of readLineBatches(path))
    for (const l of batch) {
      const forLinks = first === null || links.mayMatter(l.text, key);
      const forUsage = UsageLookahead.mayMatter(l.text);
      if (!forLinks && !forUsage) continue;
      const obj = parseObject(l.text);
      if (!obj) continue;
      first ??= recordTime(obj).micros;
      if (forLinks) links.observe(obj, key);
      if (forUsage) usage.observe(obj, l.line, key);
    }
  return first;
}
