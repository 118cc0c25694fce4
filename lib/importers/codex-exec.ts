/**
 * The `codex exec --json` importer (`hansard import codex FILE` when FILE is Codex's exec event stream,
 * DESIGN §6, issue 10): one thread event a line (`thread.started`, `turn.started`, `item.started` /
 * `item.updated` / `item.completed`, `turn.completed`, `turn.failed`, `error`), turned into one writer's
 * v3 segment (seed 001, DESIGN §3) through the shared vocabulary of lib/importers/mapping.ts. The table is
 * docs/import.md "Codex exec --json".
 *
 * A turn per `turn.started` … `turn.completed`; `command_execution` → action + result (exit code, `error`
 * when the command failed), `file_change`, `mcp_tool_call` and `web_search` → action + result,
 * `agent_message` → output, `reasoning` → a `thinking` note, an `error` item or event and `turn.failed`
 * → `error` notes, `turn.completed` usage → a `token_usage` note, `todo_list` → a `meta` note, anything
 * else → an `unknown_record` note. The stream carries no timestamps (events take the import's clock) and
 * does not print the prompt `codex exec PROMPT` was given: the result says so rather than invent one.
 *
 * @example
 * const r = await importCodexExec('exec.ndjson', './sessions');
 * console.log(r.dir, r.counts.actions, r.interrupted, r.notices);
 */
import type { ActionStatus } from '../log/format/events.js';
import { type EmitOptions, openSession } from '../log/write/writer.js';
import { IMPORT_NOTE_AUTHOR, type ImportProblem, type ImportProblemKind } from './claude-code-records.js';
import { isObj, type Obj, str } from './json-line.js';
import { type MappingCounts, WriterMapping } from './mapping.js';
import { readJsonLines } from './stream-lines.js';

/** Author of the notes holding what Codex itself said (reasoning, errors, usage). */
const CODEX = 'codex';

/** What `importCodexExec` may be told. */
export interface ImportCodexExecOptions {
  /** `writer.start` `meta.agent`; default `codex` */
  agent?: string;
  /** the `user_id` of prompt `message`s (the stream has none today); default `user` */
  userId?: string;
}

/** What an exec-stream import wrote. */
export interface CodexExecImportResult {
  sid: string;
  w: string;
  dir: string;
  path: string;
  counts: MappingCounts & {
    /** `thinking` notes holding a `reasoning` item */
    reasoning: number;
    /** `token_usage` notes: one per `turn.completed` with usage */
    tokenUsage: number;
    /** `error` notes: `error` items and events, `turn.failed` */
    errors: number;
    /** lines or items of a type this importer does not know, kept as `unknown_record` notes */
    unknown: number;
    /** lines read and deliberately not written, by type (`item.updated`, a message's `item.started`) */
    skipped: Record<string, number>;
  };
  /** the stream ended with a turn open (no `turn.completed`): that turn ended `interrupted` */
  interrupted: boolean;
  /** what a reader of the session should know about what the stream could not say */
  notices: string[];
  /** lines that could not be taken as they are (each still recorded, as a note), 1-based */
  problems: ImportProblem[];
}

/** Said when the stream has turns but no prompt (docs/import.md). */
export const NO_EXEC_PROMPT_NOTICE =
  'the stream holds no prompt: `codex exec --json` does not print the prompt it was given, so its turns are recorded without one';

/** Whether a first JSON object is a `codex exec --json` event rather than a rollout line (`{timestamp, type, payload}`). */
export function isCodexExecJson(obj: Obj): boolean {
  const type = str(obj.type) ?? '';
  if (obj.payload !== undefined) return false;
  return /^(thread|turn|item)\./.test(type) || (type === 'error' && typeof obj.message === 'string');
}

/** Items that are calls: an action when started (or completed unseen), a result when completed. */
const CALL_ITEMS = new Set(['command_execution', 'file_change', 'mcp_tool_call', 'web_search']);

/**
 * Imports a `codex exec --json` stream as a new session under `outDir` (DESIGN §6): one segment opened
 * with `openSession(outDir, { agent, app: 'hansard import codex' })` (its `extra` naming the first
 * `thread.started`'s `thread_id`), ended with `writer.end`. A turn still open at the end (no
 * `turn.completed`: cut off) ends `interrupted`, its calls still running given `cancelled` results.
 *
 * Never throws on content: a line that is not JSON or not a usable event becomes an `unknown_record`
 * note plus an entry in `problems`, and reading goes on. Throws the file system's errors (ENOENT, then
 * nothing is written) and `WriterError` from `openSession`.
 */
export async function importCodexExec(
  streamPath: string,
  outDir: string,
  options: ImportCodexExecOptions = {},
): Promise<CodexExecImportResult> {
  let threadId: string | null = null;
  for await (const l of readJsonLines(streamPath)) {
    threadId = isObj(l.obj) && l.obj.type === 'thread.started' ? str(l.obj.thread_id) : null;
    if (threadId !== null) break;
  }
  const writer = openSession(outDir, {
    agent: options.agent ?? 'codex',
    app: 'hansard import codex',
    provenance: 'harness',
    ...(threadId ? { extra: { codex_thread_id: threadId } } : {}),
  });
  const x = new ExecImporter(new WriterMapping(writer, options.userId ?? 'user'));
  try {
    for await (const l of readJsonLines(streamPath)) {
      if (!l.utf8) x.problem(l.line, 'line is not valid UTF-8', 'read_in_part');
      if (l.text.trim() === '') continue;
      x.take(l.line, l.text, l.obj, {});
    }
    x.finish({});
  } catch (err) {
    writer.close();
    throw err;
  }
  const counts = x.counts();
  return {
    sid: writer.sid,
    w: writer.w,
    dir: writer.dir,
    path: writer.path,
    counts,
    interrupted: x.interrupted,
    notices: counts.prompts === 0 && counts.turns > 0 ? [NO_EXEC_PROMPT_NOTICE] : [],
    problems: x.problems,
  };
}

/** Maps exec events onto one `WriterMapping`. */
class ExecImporter {
  readonly problems: ImportProblem[] = [];
  interrupted = false;
  private reasoning = 0;
  private tokenUsage = 0;
  private errors = 0;
  private unknown = 0;
  private readonly skipped: Record<string, number> = {};
  /** the model an event named (`model`; the exec stream names none as of Codex 0.169), else null */
  private model: string | null = null;

  constructor(private readonly m: WriterMapping) {}

  counts(): CodexExecImportResult['counts'] {
    const { reasoning, tokenUsage, errors, unknown, skipped } = this;
    return { ...this.m.counts, reasoning, tokenUsage, errors, unknown, skipped };
  }

  problem(line: number, message: string, kind: ImportProblemKind = 'kept_as_note'): void {
    this.problems.push({ line, message, kind });
  }

  /** Writes the events of one line (`obj`: its parse), stamped `o`. */
  take(line: number, text: string, obj: Obj | null | undefined, o: EmitOptions): void {
    if (!isObj(obj)) {
      this.problem(line, obj === undefined ? 'line is not valid JSON' : 'line is not a JSON object');
      this.keepUnknown(text, o);
      return;
    }
    if (typeof obj.model === 'string') this.model = obj.model;
    switch (obj.type) {
      case 'thread.started':
        this.m.marked('meta', IMPORT_NOTE_AUTHOR, text, o, { codex_type: 'thread.started' });
        return;
      case 'turn.started':
        // A turn.started while one is open: the open one never completed.
        if (this.m.turnId !== null) this.m.interrupt('a new turn started before turn.completed', o);
        this.m.openTurn(null, o);
        return;
      case 'turn.completed':
        if (isObj(obj.usage)) this.usage(obj.usage, o);
        this.m.endTurn('completed', o);
        return;
      case 'turn.failed': {
        const msg = isObj(obj.error) ? (str(obj.error.message) ?? '') : '';
        this.error(`turn failed${msg ? `: ${msg}` : ''}`, o, 'turn.failed');
        for (const [callId] of this.m.pendingCalls())
          this.m.result({ callId, status: 'cancelled', error: 'the turn failed' }, o);
        this.m.endTurn('failed', o);
        return;
      }
      case 'error':
        this.error(str(obj.message) ?? text, o, 'error');
        return;
      case 'item.started':
      case 'item.updated':
      case 'item.completed':
        if (!isObj(obj.item) || typeof obj.item.type !== 'string') {
          this.problem(line, `${obj.type} has no item with a string "type"`);
          this.keepUnknown(text, o);
          return;
        }
        this.item(obj.type, obj.item, text, o);
        return;
      default:
        this.keepUnknown(text, o);
        return;
    }
  }

  /** Ends a turn the stream left open as `interrupted` (cut off), then the segment. */
  finish(o: EmitOptions): void {
    if (this.m.turnId !== null) {
      this.m.interrupt('the stream ended before turn.completed', o);
      this.interrupted = true;
    }
    this.m.w.end({}, o);
  }

  private item(event: string, item: Obj, text: string, o: EmitOptions): void {
    const type = item.type as string;
    // Codex always names its items; one that does not still pairs its action and result.
    const id = str(item.id) ?? '(no item id)';
    if (CALL_ITEMS.has(type)) {
      // An action once, when its call is first seen; a result when it is completed.
      if (this.m.actionFor(id) === undefined) this.m.action(callOf(type, item, id), o);
      if (event === 'item.completed') this.m.result({ callId: id, ...resultOf(type, item) }, o);
      else if (event === 'item.updated') this.skip(`item.updated/${type}`);
      return;
    }
    if (event !== 'item.completed') {
      this.skip(`${event}/${type}`);
      return;
    }
    if (type === 'agent_message') this.m.output(str(item.text) ?? '', o);
    else if (type === 'reasoning') {
      this.m.marked('thinking', CODEX, `reasoning: ${str(item.text) ?? ''}`, o, { codex_type: 'reasoning' });
      this.reasoning += 1;
    } else if (type === 'error') this.error(str(item.message) ?? text, o, 'error item');
    else if (type === 'todo_list')
      this.m.marked('meta', CODEX, `todo list: ${JSON.stringify(item.items ?? null)}`, o, {
        codex_type: 'todo_list',
      });
    else this.keepUnknown(text, o);
  }

  /**
   * `turn.completed`'s usage as a `token_usage` note (issue 27, `usage_source: 'codex_total'`). Its figures
   * are the thread's running total, not the turn's (openai/codex#17539: exec reports the thread's cumulative
   * usage), so they are kept as Codex wrote them under both `usage` (as before) and `thread_token_usage`
   * (the key the counting rule reads for every `codex_total` note), with the model an event named.
   */
  private usage(u: Obj, o: EmitOptions): void {
    const n = (k: string) => (typeof u[k] === 'number' && Number.isFinite(u[k]) ? (u[k] as number) : 0);
    const text =
      `token usage (thread total): input ${n('input_tokens')} (cached ${n('cached_input_tokens')}), ` +
      `output ${n('output_tokens')} (reasoning ${n('reasoning_output_tokens')})`;
    this.m.marked('token_usage', CODEX, text, o, {
      codex_type: 'turn.completed',
      usage_source: 'codex_total',
      model: this.model,
      usage: u,
      thread_token_usage: u,
    });
    this.tokenUsage += 1;
  }

  private error(message: string, o: EmitOptions, what: string): void {
    this.m.marked('error', CODEX, message, o, { codex_type: what });
    this.errors += 1;
  }

  private keepUnknown(text: string, o: EmitOptions): void {
    this.unknown += 1;
    this.m.marked('unknown_record', IMPORT_NOTE_AUTHOR, text, o);
  }

  private skip(what: string): void {
    this.skipped[what] = (this.skipped[what] ?? 0) + 1;
  }
}

/** A call item's action: its tool name and input. */
function callOf(type: string, item: Obj, id: string): { tool: string; input: unknown; callId: string } {
  switch (type) {
    case 'command_execution':
      return { tool: type, input: { command: item.command ?? null }, callId: id };
    case 'file_change':
      return { tool: type, input: { changes: item.changes ?? null }, callId: id };
    case 'mcp_tool_call':
      return {
        tool: `mcp:${str(item.server) ?? '?'}/${str(item.tool) ?? '?'}`,
        input: item.arguments ?? null,
        callId: id,
      };
    default:
      return { tool: type, input: { query: item.query ?? null }, callId: id };
  }
}

/**
 * A completed call item's result. A command's status comes from its exit code (0 → ok, other → error)
 * or, with none, its `status` (`failed` → error, `declined` → cancelled); other items from `status` and
 * `error`.
 */
function resultOf(
  type: string,
  item: Obj,
): { status: ActionStatus; output: unknown; error: string | null; exitCode: number | null } {
  const status = str(item.status);
  if (type === 'command_execution') {
    const exitCode = Number.isInteger(item.exit_code) ? (item.exit_code as number) : null;
    const s: ActionStatus =
      status === 'declined'
        ? 'cancelled'
        : (exitCode !== null && exitCode !== 0) || (exitCode === null && status === 'failed')
          ? 'error'
          : 'ok';
    const error =
      s === 'ok' ? null : exitCode !== null ? `exit code ${exitCode}` : `command ${status ?? 'failed'}`;
    return { status: s, output: item.aggregated_output ?? null, error, exitCode };
  }
  const err = isObj(item.error) ? str(item.error.message) : str(item.error);
  const failed = status === 'failed' || err !== null;
  const output =
    type === 'mcp_tool_call' ? (item.result ?? null) : type === 'file_change' ? (item.changes ?? null) : null;
  return {
    status: status === 'declined' ? 'cancelled' : failed ? 'error' : 'ok',
    output,
    error: failed ? (err ?? `${type} ${status}`) : null,
    exitCode: null,
  };
}
