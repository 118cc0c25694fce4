/**
 * The Codex rollout importer (`hansard import codex FILE`, DESIGN §6, issue 10 item 2): turns a Codex CLI
 * session rollout (`~/.codex/sessions/**\/rollout-*.jsonl`, one `{timestamp, type, payload}` object a
 * line) into one writer's v3 segment (seed 001, DESIGN §3), every event stamped with the rollout's time,
 * through the shared vocabulary of lib/harness/mapping.ts. The mapping, line type by line type, is the
 * table in docs/import.md ("Codex").
 *
 * Codex writes each prompt twice (a `response_item` user `message`, then an `event_msg/user_message`) and
 * each answer twice (`response_item` assistant `message`, then `event_msg/agent_message`). The person's
 * prompt is the `user_message` event, so a `response_item` user message with the same text just before it
 * is dropped as its copy, and other `response_item` user messages (the AGENTS.md and
 * `<environment_context>` text Codex injects) become `meta` notes. A rollout with no `user_message` event
 * at all (older Codex) takes its `response_item` user messages as the prompts.
 *
 * @example
 * const r = await importCodexRollout('~/.codex/sessions/2025/12/28/rollout-….jsonl', './sessions');
 * console.log(r.dir, r.counts.turns, r.problems);
 */
import { parseTs } from '../log/time.js';
import { type EmitOptions, openSession } from '../log/writer.js';
import { IMPORT_NOTE_AUTHOR, type ImportProblem } from './claude-code-transcript.js';
import {
  contentText,
  isInjectedContext,
  isObj,
  isUserMessageEvent,
  type Obj,
  parseArguments,
  parseObject,
  prescan,
  type RolloutScan,
  readLines,
  str,
  toolOutput,
} from './codex-records.js';
import { type MappingCounts, WriterMapping } from './mapping.js';

export { toolOutput } from './codex-records.js';

/** Author of the notes that hold what Codex itself wrote but v3 has no event for (reasoning, context). */
export const CODEX_NOTE_AUTHOR = 'codex';

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
  counts: MappingCounts & {
    /** `note`s by `codex` marked `thinking` that hold a reasoning summary */
    reasoning: number;
    /** `note`s marked `token_usage`: one per model response's token counts */
    tokenUsage: number;
    /** lines with a `type` (or payload `type`) this importer does not know, kept as `unknown_record` notes */
    unknown: number;
    /** lines read and deliberately not written, by `type` or `event_msg/<type>` (copies, token counts) */
    skipped: Record<string, number>;
  };
  /** lines that could not be taken as they are (each still recorded, as a note), with 1-based line numbers */
  problems: ImportProblem[];
}

/** `event_msg` types that repeat what `response_item`s already say, or are telemetry: counted, not written. */
const SKIPPED_EVENTS = new Set([
  'token_count',
  'task_started',
  'exec_command_begin',
  'exec_command_end',
  'patch_apply_begin',
  'patch_apply_end',
]);

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
        importer.problem(l.line, `timestamp ${JSON.stringify(obj.timestamp)} is not RFC 3339`);
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

/** Maps rollout lines onto one `WriterMapping`: pending calls, copies to drop, the prompt copy held back. */
class RolloutImporter {
  readonly problems: ImportProblem[] = [];
  private reasoning = 0;
  private tokenUsage = 0;
  private unknown = 0;
  /** exit codes of commands by call id, from `item_completed` `CommandExecution` items (0.169.0) */
  private readonly execExit = new Map<string, number>();
  private readonly skipped: Record<string, number> = {};
  /** call ids of the open turn still waiting for their output */
  private readonly pending = new Set<string>();
  /** the last thing the open turn holds is the agent's answer */
  private answered = false;
  /** texts already written in the open turn, so their `event_msg` copies are not written twice */
  private readonly outputsSeen = new Set<string>();
  private readonly reasoningSeen = new Set<string>();
  /** a `response_item` user message waiting to learn whether a `user_message` copy follows */
  private held: { text: string; o: EmitOptions } | null = null;

  private readonly hasUserMessages: boolean;

  constructor(
    private readonly m: WriterMapping,
    private readonly scan: RolloutScan,
  ) {
    this.hasUserMessages = scan.hasUserMessages;
  }

  counts(): CodexImportResult['counts'] {
    return {
      ...this.m.counts,
      reasoning: this.reasoning,
      tokenUsage: this.tokenUsage,
      unknown: this.unknown,
      skipped: this.skipped,
    };
  }

  problem(line: number, message: string): void {
    this.problems.push({ line, message });
  }

  /** Writes the events of one line (`obj`: its `parseObject`), stamped `o`. */
  take(line: number, text: string, obj: Obj | null | undefined, o: EmitOptions): void {
    if (text.trim() === '') return;
    const payload = isObj(obj) ? obj.payload : undefined;
    const userEvent = isObj(obj) && obj.type === 'event_msg' && isObj(payload) && isUserMessageEvent(payload);
    if (!userEvent) this.releaseHeld();
    if (obj === undefined) this.keep(line, text, o, 'line is not valid JSON');
    else if (obj === null) this.keep(line, text, o, 'line is not a JSON object');
    else if ((obj.type === 'response_item' || obj.type === 'event_msg') && !isObj(payload))
      this.keep(line, text, o, `${obj.type} line has no payload object`);
    else if (obj.type === 'session_meta' || obj.type === 'turn_context' || obj.type === 'world_state')
      // Settings and instructions: no v3 event says them, so they are kept exactly as written.
      this.m.marked('meta', IMPORT_NOTE_AUTHOR, text, o);
    else if (obj.type === 'token_usage_record') this.usage(obj.payload, o);
    else if (obj.type === 'response_item') this.responseItem(line, text, payload as Obj, o);
    else if (obj.type === 'event_msg') this.eventMsg(text, payload as Obj, o);
    else this.unknownLine(text, o);
  }

  /** Ends the open turn (`interrupted` when cut off mid-turn) and the segment. */
  finish(o: EmitOptions): void {
    this.releaseHeld();
    this.endTurn(this.pending.size > 0 || !this.answered ? 'interrupted' : 'completed', o);
    this.m.w.end({}, o);
  }

  private responseItem(line: number, text: string, p: Obj, o: EmitOptions): void {
    switch (p.type) {
      case 'message': {
        const body = contentText(p.content);
        if (p.role === 'assistant' && this.outputsSeen.has(body))
          // 0.169.0 writes the `item_completed` copy of an answer before this one.
          this.skip('response_item/message (answer copy)');
        else if (p.role === 'assistant') this.output(body, o);
        else if (p.role === 'user' && isInjectedContext(body))
          this.m.marked('meta', CODEX_NOTE_AUTHOR, `context: ${body}`, o);
        else if (p.role === 'user' && !this.hasUserMessages) this.prompt(body, o);
        else if (p.role === 'user') this.held = { text: body, o };
        else this.m.marked('meta', CODEX_NOTE_AUTHOR, `${String(p.role)} message: ${body}`, o);
        return;
      }
      case 'reasoning': {
        const parts = Array.isArray(p.summary) ? p.summary.map((s) => (isObj(s) ? str(s.text) : null)) : [];
        const summary = parts.filter((s): s is string => s !== null);
        if (summary.length === 0) {
          this.skip('response_item/reasoning (no summary)');
          return;
        }
        for (const s of summary) this.reasoningSeen.add(s);
        this.reasoningNote(summary.join('\n\n'), o);
        return;
      }
      case 'function_call':
      case 'custom_tool_call':
      case 'local_shell_call': {
        const callId = str(p.call_id) ?? str(p.id);
        const input =
          p.type === 'function_call'
            ? parseArguments(p.arguments)
            : p.type === 'custom_tool_call'
              ? p.input
              : p.action;
        const tool = str(p.name) ?? (p.type === 'local_shell_call' ? 'local_shell' : String(p.type));
        this.m.action({ tool, input, callId }, o);
        if (callId !== null) this.pending.add(callId);
        this.answered = false;
        return;
      }
      case 'function_call_output':
      case 'custom_tool_call_output': {
        const callId = str(p.call_id) ?? '';
        const shown = toolOutput(p.output);
        const r = { output: shown.output, exitCode: shown.exitCode ?? this.execExit.get(callId) ?? null };
        const failed = r.exitCode !== null && r.exitCode !== 0;
        const { orphan } = this.m.result(
          {
            callId,
            status: failed ? 'error' : 'ok',
            output: r.output,
            error: failed ? `exit code ${r.exitCode}` : null,
            exitCode: r.exitCode,
          },
          o,
        );
        if (orphan)
          this.problem(line, `${String(p.type)} ${JSON.stringify(callId)} answers no call before it`);
        this.pending.delete(callId);
        this.answered = false;
        return;
      }
      default:
        this.unknownLine(text, o);
    }
  }

  private eventMsg(text: string, p: Obj, o: EmitOptions): void {
    const type = String(p.type);
    const message = str(p.message) ?? '';
    if (type === 'item_completed') {
      this.itemCompleted(text, isObj(p.item) ? p.item : {}, o);
      return;
    }
    if (type === 'user_message') {
      if (this.held !== null && this.held.text === message) {
        this.held = null;
        this.skip('response_item/message (prompt copy)');
      } else this.releaseHeld();
      this.prompt(message, o);
    } else if (type === 'agent_message') {
      if (this.outputsSeen.has(message)) this.skip('event_msg/agent_message (answer copy)');
      else this.output(message, o);
    } else if (type === 'agent_reasoning') {
      const t = str(p.text) ?? '';
      if (this.reasoningSeen.has(t)) this.skip('event_msg/agent_reasoning (summary copy)');
      else this.reasoningNote(t, o);
    } else if (type === 'task_complete') {
      this.skip('event_msg/task_complete');
      this.endTurn('completed', o);
    } else if (type === 'turn_aborted') {
      // The person stopped the agent: calls still waiting get `cancelled` results, the turn `interrupted`.
      this.skip('event_msg/turn_aborted');
      this.m.interrupt(`turn aborted${str(p.reason) ? ` (${str(p.reason)})` : ''}`, o);
      this.resetTurn();
    } else if (type === 'token_count' && !this.scan.hasUsageRecords && isObj(p.info)) {
      // Before 0.169.0 this is the only record of token usage; `last_token_usage` is this response's.
      this.usage({ usage: p.info.last_token_usage, thread_token_usage: p.info.total_token_usage }, o);
    } else if (type === 'thread_settings_applied') this.m.marked('meta', IMPORT_NOTE_AUTHOR, text, o);
    else if (SKIPPED_EVENTS.has(type)) this.skip(`event_msg/${type}`);
    else this.unknownLine(text, o);
  }

  /**
   * `event_msg/item_completed` (Codex 0.169.0): the item each `response_item` also records, in the app's
   * own terms. A `UserMessage` is the person's prompt (its `response_item` copy is held just before it), an
   * `AgentMessage` the answer (its `response_item` copy follows), a `CommandExecution` the exit code of a
   * call whose output may not state it. Other item types are kept as unknown records.
   */
  private itemCompleted(text: string, item: Obj, o: EmitOptions): void {
    const body = contentText(item.content);
    if (item.type === 'UserMessage') {
      if (this.held !== null && this.held.text === body) {
        this.held = null;
        this.skip('response_item/message (prompt copy)');
      } else this.releaseHeld();
      this.prompt(body, o);
    } else if (item.type === 'AgentMessage') {
      if (this.outputsSeen.has(body)) this.skip('event_msg/item_completed (answer copy)');
      else this.output(body, o);
    } else if (item.type === 'CommandExecution') {
      const id = str(item.id);
      if (id !== null && Number.isInteger(item.exit_code)) this.execExit.set(id, item.exit_code as number);
      this.skip('event_msg/item_completed (CommandExecution)');
    } else this.unknownLine(text, o);
  }

  /**
   * A model response's token counts, as a `token_usage` note whose `extra` holds Codex's figures. The text
   * gives the response's own counts (`usage`), or the thread's running total when that is all the line has.
   */
  private usage(p: unknown, o: EmitOptions): void {
    const u = isObj(p) ? p : {};
    const own = isObj(u.usage);
    const fig = own ? (u.usage as Obj) : isObj(u.thread_token_usage) ? u.thread_token_usage : {};
    const n = (k: string) => (Number.isFinite(fig[k]) ? (fig[k] as number) : 0);
    const text =
      `token usage${own ? '' : ' (thread total)'}: input ${n('input_tokens')} (cached ${n('cached_input_tokens')}), ` +
      `output ${n('output_tokens')} (reasoning ${n('reasoning_output_tokens')}), total ${n('total_tokens') || n('input_tokens') + n('output_tokens')}`;
    const extra: Record<string, unknown> = { codex_type: 'token_usage' };
    for (const k of ['usage', 'turn_token_usage', 'thread_token_usage', 'response_id'])
      if (u[k] !== undefined) extra[k] = u[k];
    this.m.marked('token_usage', CODEX_NOTE_AUTHOR, text, o, extra);
    this.tokenUsage += 1;
  }

  /** A held `response_item` user message with no `user_message` copy: context Codex injected. */
  private releaseHeld(): void {
    if (this.held === null) return;
    const { text, o } = this.held;
    this.held = null;
    this.m.marked('meta', CODEX_NOTE_AUTHOR, `context: ${text}`, o);
  }

  private prompt(text: string, o: EmitOptions): void {
    this.m.prompt(text, o, this.pending.size > 0 ? 'interrupted' : 'completed');
    this.resetTurn();
  }

  private output(text: string, o: EmitOptions): void {
    this.m.output(text, o);
    this.outputsSeen.add(text);
    this.answered = true;
  }

  private reasoningNote(summary: string, o: EmitOptions): void {
    this.m.marked('thinking', CODEX_NOTE_AUTHOR, `reasoning summary: ${summary}`, o, {
      codex_type: 'reasoning_summary',
    });
    this.reasoning += 1;
  }

  private endTurn(status: 'completed' | 'interrupted', o: EmitOptions): void {
    this.m.endTurn(status, o);
    this.resetTurn();
  }

  private resetTurn(): void {
    this.pending.clear();
    this.outputsSeen.clear();
    this.reasoningSeen.clear();
    this.answered = false;
  }

  private unknownLine(text: string, o: EmitOptions): void {
    this.unknown += 1;
    this.m.marked('unknown_record', IMPORT_NOTE_AUTHOR, text, o);
  }

  /** A line kept exactly as written, with the problem that stopped it being mapped. */
  private keep(line: number, text: string, o: EmitOptions, why: string): void {
    this.problem(line, why);
    this.m.marked('unknown_record', IMPORT_NOTE_AUTHOR, text, o);
  }

  private skip(what: string): void {
    this.skipped[what] = (this.skipped[what] ?? 0) + 1;
  }
}
