/**
 * The Codex rollout importer (`hansard import codex FILE`, DESIGN §6, issue 10 item 2): turns a Codex CLI
 * session rollout (`~/.codex/sessions/**\/rollout-*.jsonl`, one `{timestamp, type, payload}` object a
 * line) into one writer's v3 segment (seed 001, DESIGN §3), every event stamped with the rollout's time,
 * through the shared vocabulary of lib/importers/mapping.ts. The mapping, line type by line type, is the
 * table in docs/import.md ("Codex").
 *
 * Codex writes each prompt twice (a `response_item` user `message`, then an `event_msg/user_message`) and
 * each answer twice (`response_item` assistant `message`, then `event_msg/agent_message`). The person's
 * prompt is the `user_message` event, so a `response_item` user message with the same text just before it
 * is dropped as its copy, and other `response_item` user messages (the AGENTS.md and
 * `<environment_context>` text Codex injects) become `meta` notes. A rollout with no `user_message` event
 * at all (older Codex) takes its `response_item` user messages as the prompts.
 *
 * A compaction (`compacted` with its `replacement_history`, `context_compacted`, an encrypted `compaction`
 * item) is one `compaction` note in the open turn; the prompts the history repeats are never new prompts
 * (issue 25 item 4). Line by line: lib/importers/codex-rollout.ts, codex-turn.ts, codex-kinds.ts.
 *
 * @example
 * const r = await importCodexRollout('~/.codex/sessions/2025/12/28/rollout-….jsonl', './sessions');
 * console.log(r.dir, r.counts.turns, r.problems);
 */
import { parseTs } from '../log/format/time.js';
import { type EmitOptions, openSession } from '../log/write/writer.js';
import type { ImportProblem } from './claude-code-transcript.js';
import { prescan, readLines } from './codex-records.js';
import { RolloutImporter } from './codex-rollout.js';
import type { CodexCounts } from './codex-turn.js';
import { isObj, parseObject } from './json-line.js';
import { WriterMapping } from './mapping.js';

export { CODEX_NOTE_AUTHOR } from './codex-kinds.js';
export { toolOutput } from './codex-records.js';

/** What `importCodexRollout` may be told. */
export interface ImportCodexOptions {
  /** `writer.start` `meta.agent`; default `codex` */
  agent?: string;
  /** the `user_id` of every prompt `message`; default `user` */
  userId?: string;
}

/** What a Codex import wrote. */
export interface CodexImportResult {
  sid: string;
  w: string;
  dir: string;
  path: string;
  /** events written by kind (`MappingCounts`), plus what is Codex's own */
  counts: CodexCounts;
  /** lines that could not be taken as they are (each still recorded, as a note), with 1-based line numbers */
  problems: ImportProblem[];
}

/**
 * Imports a Codex rollout as a new session under `outDir` (DESIGN §6 `hansard import codex`). Writes one
 * segment with `openSession(outDir, { agent, app: 'hansard import codex' })` and ends it with `writer.end`.
 * Times: each event's `ts` is its line's `timestamp`; a line without one takes the previous line's; mono is
 * seconds since the first timestamp, never decreasing. A turn still open at the end of the file (cut off
 * mid-turn: a call with no output, or no answer after the last prompt or result) ends `interrupted`, its
 * unanswered calls left without a result (the file does not say how they ended).
 *
 * Never throws on content: a line that is not JSON or not a usable record becomes an `unknown_record` note
 * holding its text plus an entry in `problems`, and reading goes on. Throws the file system's errors
 * (ENOENT reading `rolloutPath`, then nothing is written) and `WriterError` from `openSession`.
 */
export async function importCodexRollout(
  rolloutPath: string,
  outDir: string,
  options: ImportCodexOptions = {},
): Promise<CodexImportResult> {
  const scan = await prescan(rolloutPath);
  let at = scan.firstAt;
  let mono = 0;
  const writer = openSession(
    outDir,
    {
      agent: options.agent ?? 'codex',
      app: 'hansard import codex',
      provenance: 'transcript',
      ...(scan.codexSessionId ? { extra: { codex_session_id: scan.codexSessionId } } : {}),
    },
    scan.firstAt === null ? {} : { clock: () => at ?? 0, monoClock: () => mono },
  );
  const importer = new RolloutImporter(new WriterMapping(writer, options.userId ?? 'user'), scan);
  const stamp = (): EmitOptions => (scan.firstAt === null ? {} : { at: at!, mono });
  try {
    for await (const l of readLines(rolloutPath)) {
      const obj = parseObject(l.text);
      const ts = isObj(obj) && typeof obj.timestamp === 'string' ? parseTs(obj.timestamp) : null;
      if (isObj(obj) && obj.timestamp !== undefined && ts === null)
        importer.problem(
          l.line,
          `timestamp ${JSON.stringify(obj.timestamp)} is not RFC 3339`,
          'read_in_part',
        );
      if (ts !== null && scan.firstAt !== null) {
        at = ts.micros;
        mono = Math.max(mono, (ts.micros - scan.firstAt) / 1e6);
      }
      importer.take(l.line, l.text, obj, stamp());
    }
    importer.finish(stamp());
  } catch (err) {
    writer.close();
    throw err;
  }
  const { sid, w, dir, path } = writer;
  return { sid, w, dir, path, counts: importer.counts(), problems: importer.problems };
}
