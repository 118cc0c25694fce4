/**
 * The Claude Code stream-json importer (`hansard import claude-code FILE` when FILE is the output of
 * `claude -p --output-format stream-json --verbose`, DESIGN §6, issue 10): one JSON object a line, turned
 * into a v3 session (seed 001, DESIGN §3) through the shared vocabulary of lib/importers/mapping.ts. The
 * table is docs/import.md "Claude Code stream-json".
 *
 * The `assistant` and `user` records carry the same `message` content blocks as a transcript's, so they
 * are mapped by the transcript's own mapper (claude-code-records.ts): text → output, tool_use/tool_result
 * → action/result paired by id (`is_error` → `error`), thinking → a marked note. A subagent's records
 * name the call that launched it (`parent_tool_use_id`) and go to its own writer. What is the stream's
 * own: `system/init` and other `system` and `rate_limit_event` records are kept as `meta` notes, the
 * `result` record (cost, usage, duration, turns, is_error) as a `token_usage` note that ends the turn, and
 * the partial-message `stream_event` deltas and `system/status` pings are counted and not written (the
 * whole `assistant` record repeats them).
 *
 * `claude -p PROMPT` does not print its prompt: such a stream has no person's message, its turn is opened
 * with no context, and the result says so (`promptRecorded: false`, `notices`) rather than invent one.
 *
 * @example
 * const r = await importClaudeCodeStream('run.ndjson', './sessions');
 * console.log(r.dir, r.counts.turns, r.promptRecorded, r.notices);
 */
import { parseTs } from '../log/format/time.js';
import { type EmitOptions, openSession } from '../log/write/writer.js';
import { IMPORT_NOTE_AUTHOR, type ImportProblem, TranscriptMapper } from './claude-code-records.js';
import { UsageLookahead } from './claude-code-usage.js';
import { isObj, type Obj, str } from './json-line.js';
import type { MappingCounts } from './mapping.js';
import { readJsonLines } from './stream-lines.js';

/** What `importClaudeCodeStream` may be told. */
export interface ImportClaudeStreamOptions {
  /** `writer.start` `meta.agent`; default `claude-code` */
  agent?: string;
  /** the `user_id` of every prompt `message`; default `user` */
  userId?: string;
}

/** What a stream-json import wrote. */
export interface ClaudeStreamImportResult {
  sid: string;
  w: string;
  dir: string;
  path: string;
  /** events written over all the session's writers, by kind, plus what is the stream's own */
  counts: MappingCounts & {
    /** subagent writers opened (one per launching call named by `parent_tool_use_id`) */
    subagentWriters: number;
    /** of those, the ones linked to no Task/Agent call (docs/import.md) */
    unlinkedSubagents: number;
    /** `token_usage` notes: one per assistant message id and one per `result` record */
    tokenUsage: number;
    /** lines of a type this importer does not know, kept as `unknown_record` notes */
    unknown: number;
    /** lines read and deliberately not written, by `type` (`stream_event/<event type>`, `system/status`) */
    skipped: Record<string, number>;
  };
  /** the stream holds a person's prompt (`claude -p` output does not) */
  promptRecorded: boolean;
  /** the last `result` record's `subtype` and `is_error`, or null when the stream has none (cut off) */
  result: { subtype: string | null; isError: boolean } | null;
  /** what a reader of the session should know about what the stream could not say */
  notices: string[];
  /** lines that could not be taken as they are (each still recorded, as a note), 1-based */
  problems: ImportProblem[];
}

/** Said when a stream has turns but no prompt (docs/import.md). */
export const NO_PROMPT_NOTICE =
  'the stream holds no prompt: `claude -p` takes it as an argument and stream-json does not print it ' +
  '(--input-format stream-json --replay-user-messages does), so its turns are recorded without one';

/** Types only stream-json has (a transcript never does). */
const STREAM_ONLY_TYPES = new Set(['stream_event', 'result', 'rate_limit_event']);

/**
 * Whether a first JSON object is Claude Code stream-json output rather than a transcript record: a type
 * only the stream has, `system/init`, or a record with the stream's `session_id` (a transcript's is
 * `sessionId`).
 */
export function isClaudeStreamJson(obj: Obj): boolean {
  const type = str(obj.type) ?? '';
  if (STREAM_ONLY_TYPES.has(type) || (type === 'system' && obj.subtype === 'init')) return true;
  return (
    ['system', 'assistant', 'user'].includes(type) &&
    typeof obj.session_id === 'string' &&
    !('sessionId' in obj)
  );
}

/**
 * Imports a Claude Code stream-json file as a new session under `outDir` (DESIGN §6): one segment opened
 * with `openSession(outDir, { agent, app: 'hansard import claude-code' })` (its `extra` naming Claude
 * Code's `session_id`), plus one per subagent, each ended with `writer.end`.
 *
 * Times: a record's `timestamp` when it has one (stream-json puts it on `assistant`/`user` records only),
 * else the previous one's; records before the first take the first; a stream with none is stamped with
 * the current clock. A turn still open at the end (no `result` record after it: cut off) is interrupted:
 * calls still waiting get `cancelled` results and the turn ends `interrupted`.
 *
 * Never throws on content: a line that is not JSON or not a usable record becomes an `unknown_record`
 * note plus an entry in `problems`. Throws the file system's errors (ENOENT, then nothing is written) and
 * `WriterError` from `openSession`.
 */
export async function importClaudeCodeStream(
  streamPath: string,
  outDir: string,
  options: ImportClaudeStreamOptions = {},
): Promise<ClaudeStreamImportResult> {
  const scan = await prescan(streamPath);
  let at = scan.firstAt;
  let mono = 0;
  const clocks = scan.firstAt === null ? {} : { clock: () => at ?? 0, monoClock: () => mono };
  const agent = options.agent ?? 'claude-code';
  const writer = openSession(
    outDir,
    {
      agent,
      app: 'hansard import claude-code',
      provenance: 'harness',
      ...(scan.sessionId ? { extra: { claude_session_id: scan.sessionId } } : {}),
    },
    clocks,
  );
  const s = new StreamImporter(
    new TranscriptMapper(writer, options.userId ?? 'user', clocks, agent, undefined, scan.usage),
  );
  const stamp = (): EmitOptions => (scan.firstAt === null ? {} : { at: at!, mono });
  try {
    for await (const l of readJsonLines(streamPath)) {
      const ts = isObj(l.obj) && typeof l.obj.timestamp === 'string' ? parseTs(l.obj.timestamp) : null;
      if (isObj(l.obj) && l.obj.timestamp !== undefined && ts === null)
        s.mapper.problem(
          l.line,
          `timestamp ${JSON.stringify(l.obj.timestamp)} is not RFC 3339`,
          'read_in_part',
        );
      if (ts !== null && scan.firstAt !== null) {
        at = ts.micros;
        mono = Math.max(mono, (ts.micros - scan.firstAt) / 1e6);
      }
      if (!l.utf8) s.mapper.problem(l.line, 'line is not valid UTF-8', 'read_in_part');
      if (l.text.trim() === '') continue;
      s.take(l.line, l.text, l.obj, stamp());
    }
    s.finish(stamp());
  } catch (err) {
    writer.close();
    for (const sub of s.mapper.subagents.values()) sub.m.w.close();
    throw err;
  }
  const mapped = s.mapper.counts();
  const counts = {
    ...mapped,
    tokenUsage: mapped.tokenUsage + s.tokenUsage,
    unknown: s.unknown,
    skipped: s.skipped,
  };
  const promptRecorded = counts.prompts > 0;
  return {
    sid: writer.sid,
    w: writer.w,
    dir: writer.dir,
    path: writer.path,
    counts,
    promptRecorded,
    result: s.result,
    notices: !promptRecorded && counts.turns > 0 ? [NO_PROMPT_NOTICE] : [],
    problems: s.mapper.problems,
  };
}

/** The stream's own records around the transcript mapper. */
class StreamImporter {
  tokenUsage = 0;
  unknown = 0;
  readonly skipped: Record<string, number> = {};
  result: ClaudeStreamImportResult['result'] = null;

  constructor(readonly mapper: TranscriptMapper) {}

  /** Writes the events of one line (`obj`: its parse), stamped `o`. */
  take(line: number, text: string, obj: Obj | null | undefined, o: EmitOptions): void {
    if (!isObj(obj)) {
      this.mapper.problem(
        line,
        obj === undefined ? 'line is not valid JSON' : 'line is not a JSON object',
        'kept_as_note',
      );
      this.mapper.unknownLine(text, o);
      this.unknown += 1;
      return;
    }
    const type = str(obj.type);
    if (type === 'assistant' || type === 'user' || (type === 'system' && obj.subtype === 'compact_boundary'))
      this.mapper.take(line, text, asTranscriptRecord(obj), o);
    else if (type === 'system' && obj.subtype === 'status') this.skip('system/status');
    else if (type === 'stream_event') {
      // Not written (the assistant records repeat them), but a message_delta's usage is the message's last.
      this.mapper.usage.streamEvent(line, obj, o);
      this.skip(`stream_event/${isObj(obj.event) ? String(obj.event.type) : '?'}`);
    } else this.own(type, text, obj, o);
  }

  /** A record of the stream's own (not the transcript's): a `meta` note, the `result`, or unknown. */
  private own(type: string | null, text: string, obj: Obj, o: EmitOptions): void {
    const m = this.mapper.main.m;
    // Written after the compaction boundary the mapper may still hold (it waits for its summary).
    this.mapper.flushBoundaries();
    if (type === 'system' || type === 'rate_limit_event')
      // Settings, hooks, retries, rate limits: no v3 event says them, so they are kept exactly as written.
      m.marked('meta', IMPORT_NOTE_AUTHOR, text, o, {
        claude_type: obj.subtype ? `${type}/${String(obj.subtype)}` : type,
      });
    else if (type === 'result') this.resultRecord(obj, o);
    else {
      this.unknown += 1;
      m.marked('unknown_record', IMPORT_NOTE_AUTHOR, text, o);
    }
  }

  /** Ends turns the stream left open as interrupted (cut off), then every writer. */
  finish(o: EmitOptions): void {
    const reason = 'the stream ended before its result record';
    this.mapper.flushBoundaries();
    for (const sub of this.mapper.subagents.values()) if (sub.m.turnId !== null) sub.m.interrupt(reason, o);
    if (this.mapper.main.m.turnId !== null) this.mapper.main.m.interrupt(reason, o);
    this.mapper.finish(o);
  }

  /**
   * `result`: the run's end. Its figures become a `token_usage` note (the answer text it repeats is
   * left out: it is the last output already); an error result also an `error` note. Calls still waiting
   * get `cancelled` results; the main turn ends `completed` on success, `failed` on an error.
   */
  private resultRecord(r: Obj, o: EmitOptions): void {
    const m = this.mapper.main.m;
    // The run's messages are over: their notes go before the result's and before the turn ends.
    this.mapper.usage.flush();
    const isError = r.is_error === true || (typeof r.subtype === 'string' && r.subtype !== 'success');
    this.result = { subtype: str(r.subtype), isError };
    const u = isObj(r.usage) ? r.usage : {};
    const n = (v: unknown) => (typeof v === 'number' && Number.isFinite(v) ? v : 0);
    const text =
      `result ${str(r.subtype) ?? '?'}${isError ? ' (error)' : ''}: ${n(r.num_turns)} turns, ${n(r.duration_ms)} ms ` +
      `(API ${n(r.duration_api_ms)} ms), cost $${n(r.total_cost_usd)}; tokens: input ${n(u.input_tokens)} ` +
      `(cache read ${n(u.cache_read_input_tokens)}, cache write ${n(u.cache_creation_input_tokens)}), output ${n(u.output_tokens)}`;
    const extra: Record<string, unknown> = { claude_type: 'result', usage_source: 'claude_result' };
    for (const k of RESULT_FIGURES) if (r[k] !== undefined) extra[k] = r[k];
    if (Array.isArray(r.permission_denials)) extra.permission_denials = r.permission_denials.length;
    m.marked('token_usage', IMPORT_NOTE_AUTHOR, text, o, extra);
    this.tokenUsage += 1;
    if (isError) {
      const why = Array.isArray(r.errors) ? r.errors.map(String).join('\n') : (str(r.result) ?? '');
      m.marked(
        'error',
        'claude-code',
        `run ended with ${str(r.subtype) ?? 'an error'}${why ? `: ${why}` : ''}`,
        o,
      );
    }
    for (const [callId] of m.pendingCalls())
      m.result({ callId, status: 'cancelled', error: `the run ended (${str(r.subtype) ?? 'result'})` }, o);
    m.endTurn(isError ? 'failed' : 'completed', o);
  }

  private skip(what: string): void {
    this.skipped[what] = (this.skipped[what] ?? 0) + 1;
  }
}

/** The `result` fields kept in the note's `extra` (figures and states; not the answer text, not tool inputs). */
const RESULT_FIGURES = [
  'subtype',
  'is_error',
  'num_turns',
  'duration_ms',
  'duration_api_ms',
  'total_cost_usd',
  'usage',
  'modelUsage',
  'stop_reason',
  'terminal_reason',
  'session_id',
];

/**
 * A stream record in the transcript mapper's terms: a subagent's record (`parent_tool_use_id` set) is a
 * sidechain whose agent is the launching call (the mapper links it to that call's action), and a
 * `compact_boundary`'s `compact_metadata` is the transcript's `compactMetadata`.
 */
function asTranscriptRecord(obj: Obj): Obj {
  const rec: Obj = { ...obj };
  if (typeof obj.parent_tool_use_id === 'string') {
    rec.isSidechain = true;
    rec.agentId = obj.parent_tool_use_id;
  }
  if (obj.compact_metadata !== undefined && obj.compactMetadata === undefined)
    rec.compactMetadata = obj.compact_metadata;
  return rec;
}

/**
 * Before anything is written: the first record timestamp (µs since the epoch), Claude Code's session id,
 * and where each message's last usage record is (claude-code-usage.ts).
 */
async function prescan(
  path: string,
): Promise<{ firstAt: number | null; sessionId: string | null; usage: UsageLookahead }> {
  let firstAt: number | null = null;
  let sessionId: string | null = null;
  const usage = new UsageLookahead();
  for await (const l of readJsonLines(path)) {
    if (!isObj(l.obj)) continue;
    sessionId ??= str(l.obj.session_id);
    const ts = typeof l.obj.timestamp === 'string' ? parseTs(l.obj.timestamp) : null;
    if (firstAt === null && ts !== null) firstAt = ts.micros;
    if (UsageLookahead.mayMatter(l.text)) usage.observe(l.obj, l.line);
  }
  return { firstAt, sessionId, usage };
}
