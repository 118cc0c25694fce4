/**
 * The line-by-line mapping of a Codex rollout onto one `WriterMapping`, for `importCodexRollout`
 * (lib/importers/codex.ts; the table is docs/import.md "Codex"): which line, item and event type becomes
 * what. The open turn, copies and compactions are kept by `RolloutTurn` (codex-turn.ts).
 */
import type { EmitOptions } from '../log/write/writer.js';
import { IMPORT_NOTE_AUTHOR } from './claude-code-transcript.js';
import {
  CODEX_NOTE_AUTHOR,
  callOutcome,
  META_EVENTS,
  META_ITEMS,
  META_LINES,
  reasoningContent,
  SKIPPED_EVENTS,
  webSearchKey,
} from './codex-kinds.js';
import {
  contentText,
  isInjectedContext,
  isUserMessageEvent,
  modelOf,
  parseArguments,
  toolOutput,
} from './codex-records.js';
import { RolloutTurn } from './codex-turn.js';
import { isObj, type Obj, str } from './json-line.js';

/** Maps rollout lines onto one `WriterMapping`; `take` each line in order, then `finish`. */
export class RolloutImporter extends RolloutTurn {
  /** Writes the events of one line (`obj`: its `parseObject`), stamped `o`. */
  take(line: number, text: string, obj: Obj | null | undefined, o: EmitOptions): void {
    if (text.trim() === '') return;
    this.lineNo = line;
    const payload = isObj(obj) ? obj.payload : undefined;
    const userEvent = isObj(obj) && obj.type === 'event_msg' && isObj(payload) && isUserMessageEvent(payload);
    if (!userEvent) this.releaseHeld();
    const said = isObj(obj) ? modelOf(obj) : null;
    if (said !== null && !(said.fallback && this.modelFromTurn)) {
      this.model = said.model;
      this.modelFromTurn = !said.fallback;
    }
    if (obj === undefined) this.keep(line, text, o, 'line is not valid JSON');
    else if (obj === null) this.keep(line, text, o, 'line is not a JSON object');
    else if (
      (obj.type === 'response_item' || obj.type === 'event_msg' || obj.type === 'compacted') &&
      !isObj(payload)
    )
      this.keep(line, text, o, `${obj.type} line has no payload object`);
    else if (typeof obj.type === 'string' && META_LINES.has(obj.type))
      // Settings, instructions and bookkeeping: no v3 event says them, so they are kept exactly as written.
      this.m.marked('meta', IMPORT_NOTE_AUTHOR, text, o);
    else if (obj.type === 'token_usage_record') this.usage(obj.payload, o);
    else if (obj.type === 'compacted') this.compacted(payload as Obj, o);
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
    const type = String(p.type);
    switch (type) {
      case 'message': {
        const body = contentText(p.content);
        if (p.role === 'assistant' && this.outputsSeen.has(body))
          // 0.169.0 writes the `item_completed` copy of an answer before this one.
          this.skip('response_item/message (answer copy)');
        else if (p.role === 'assistant') this.output(body, o);
        else if (p.role === 'user' && isInjectedContext(body)) this.context(body, o);
        else if (p.role === 'user' && !this.scan.hasUserMessages) this.prompt(body, o);
        else if (p.role === 'user') this.held = { text: body, o };
        else this.m.marked('meta', CODEX_NOTE_AUTHOR, `${String(p.role)} message: ${body}`, o);
        return;
      }
      case 'reasoning': {
        const parts = Array.isArray(p.summary) ? p.summary.map((s) => (isObj(s) ? str(s.text) : null)) : [];
        const summary = parts.filter((s): s is string => s !== null);
        const raw = reasoningContent(p.content);
        if (summary.length === 0 && raw === null) {
          this.skip('response_item/reasoning (no summary)');
          return;
        }
        for (const s of summary) this.reasoningSeen.add(s);
        if (summary.length > 0)
          this.reasoningNote('reasoning summary', summary.join('\n\n'), 'reasoning_summary', o);
        if (raw !== null) {
          this.reasoningSeen.add(raw);
          this.reasoningNote('reasoning', raw, 'reasoning_content', o);
        }
        return;
      }
      case 'function_call':
      case 'custom_tool_call':
      case 'local_shell_call': {
        const callId = str(p.call_id) ?? str(p.id);
        const input =
          type === 'function_call'
            ? parseArguments(p.arguments)
            : type === 'custom_tool_call'
              ? p.input
              : p.action;
        const name = str(p.name) ?? (type === 'local_shell_call' ? 'local_shell' : type);
        const tool = str(p.namespace) ? `${p.namespace}.${name}` : name;
        this.action(tool, input, callId, o);
        return;
      }
      case 'function_call_output':
      case 'custom_tool_call_output': {
        const callId = str(p.call_id) ?? '';
        const shown = toolOutput(p.output);
        const exitCode = shown.exitCode ?? this.execExit.get(callId) ?? null;
        const failure = exitCode === null ? (this.callFailure.get(callId) ?? null) : null;
        const failed = (exitCode !== null && exitCode !== 0) || failure !== null;
        const error = failure ?? (failed ? `exit code ${exitCode}` : null);
        this.result(line, callId, failed ? 'error' : 'ok', shown.output, error, exitCode, o, type);
        return;
      }
      case 'tool_search_call': {
        const callId = str(p.call_id) ?? str(p.id) ?? `tool_search@${line}`;
        this.action(
          'tool_search',
          { execution: p.execution ?? null, arguments: p.arguments ?? null },
          callId,
          o,
        );
        return;
      }
      case 'tool_search_output': {
        const callId = str(p.call_id) ?? str(p.id) ?? '';
        const failed = p.status === 'failed' || p.status === 'incomplete';
        const error = failed ? `tool search ${String(p.status)}` : null;
        this.result(line, callId, failed ? 'error' : 'ok', p.tools ?? null, error, null, o, type);
        return;
      }
      case 'web_search_call':
        // Searched by the model provider: the call and its end in one record (its results are not kept).
        this.oneRecordCall('web_search', `web_search:${webSearchKey(p.action)}`, 'response_item', p, o, {
          input: p.action ?? null,
          output: null,
        });
        return;
      case 'image_generation_call': {
        // The image itself (`result`, base64) is not copied into the log: its size says it was made.
        const result = str(p.result) ?? '';
        this.oneRecordCall(
          'image_generation',
          `image:${str(p.id) ?? str(p.revised_prompt) ?? ''}`,
          'response_item',
          p,
          o,
          {
            input: { revised_prompt: p.revised_prompt ?? null },
            output: { image_base64_chars: result.length },
          },
        );
        return;
      }
      case 'compaction':
      case 'compaction_summary':
      case 'context_compaction': {
        const chars = str(p.encrypted_content)?.length ?? 0;
        this.compactionNote(
          'compaction_item',
          `context compacted (the summary is encrypted, ${chars} chars)`,
          o,
          {
            codex_type: type,
          },
        );
        return;
      }
      default:
        if (META_ITEMS.has(type)) this.m.marked('meta', IMPORT_NOTE_AUTHOR, text, o);
        else this.unknownLine(text, o);
    }
  }

  private eventMsg(text: string, p: Obj, o: EmitOptions): void {
    const type = String(p.type);
    const message = str(p.message) ?? '';
    if (type === 'item_completed') {
      this.itemCompleted(text, isObj(p.item) ? p.item : {}, o);
      return;
    }
    const outcome = callOutcome(p);
    if (outcome !== null) {
      if (outcome.exitCode !== null) this.execExit.set(outcome.callId, outcome.exitCode);
      if (outcome.failure !== null) this.callFailure.set(outcome.callId, outcome.failure);
    }
    if (type === 'user_message') {
      if (typeof p.kind === 'string' && p.kind !== 'plain') {
        // Before ~0.40 the instructions and environment context Codex injected were user_message events too.
        this.releaseHeld();
        this.context(message, o);
        return;
      }
      this.takeHeld(message);
      this.prompt(message, o);
    } else if (type === 'agent_message') {
      if (this.outputsSeen.has(message)) this.skip('event_msg/agent_message (answer copy)');
      else this.output(message, o);
    } else if (type === 'agent_reasoning' || type === 'agent_reasoning_raw_content') {
      const t = str(p.text) ?? '';
      const raw = type === 'agent_reasoning_raw_content';
      if (this.reasoningSeen.has(t)) this.skip(`event_msg/${type} (${raw ? 'content' : 'summary'} copy)`);
      else
        this.reasoningNote(
          raw ? 'reasoning' : 'reasoning summary',
          t,
          raw ? 'reasoning_content' : 'reasoning_summary',
          o,
        );
    } else if (type === 'task_complete' || type === 'turn_complete') {
      this.skip(`event_msg/${type}`);
      this.endTurn('completed', o);
    } else if (type === 'turn_aborted') {
      // The person stopped the agent: calls still waiting get `cancelled` results, the turn `interrupted`.
      this.skip('event_msg/turn_aborted');
      this.m.interrupt(`turn aborted${str(p.reason) ? ` (${str(p.reason)})` : ''}`, o);
      this.resetTurn();
    } else if (type === 'context_compacted')
      this.compactionNote('context_compacted', 'context compacted', o, { codex_type: type });
    else if (type === 'token_count' && !this.scan.hasUsageRecords && isObj(p.info)) {
      // Before 0.169.0 this is the only record of token usage; `last_token_usage` is this response's.
      this.usage({ usage: p.info.last_token_usage, thread_token_usage: p.info.total_token_usage }, o);
    } else if (type === 'web_search_end')
      this.oneRecordCall('web_search', `web_search:${webSearchKey(p.action, p.query)}`, 'event_msg', p, o, {
        input: p.action ?? { query: p.query ?? null },
        output: null,
      });
    else if (type === 'image_generation_end') {
      const result = str(p.result) ?? '';
      this.oneRecordCall(
        'image_generation',
        `image:${str(p.call_id) ?? str(p.revised_prompt) ?? ''}`,
        'event_msg',
        p,
        o,
        {
          input: { revised_prompt: p.revised_prompt ?? null },
          output: { image_base64_chars: result.length, saved_path: p.saved_path ?? null },
        },
      );
    } else if (type === 'error' || type === 'warning' || type === 'guardian_warning')
      this.m.marked(type === 'error' ? 'error' : 'warning', CODEX_NOTE_AUTHOR, message || text, o, {
        codex_type: type,
      });
    else if (META_EVENTS.has(type)) this.m.marked('meta', IMPORT_NOTE_AUTHOR, text, o);
    else if (SKIPPED_EVENTS.has(type)) this.skip(`event_msg/${type}`);
    else this.unknownLine(text, o);
  }

  /**
   * `event_msg/item_completed` (Codex 0.169.0): the item each `response_item` also records, in the app's
   * own terms. A `UserMessage` is the person's prompt (its `response_item` copy is held just before it), an
   * `AgentMessage` the answer (its `response_item` copy follows), a `CommandExecution` the exit code of a
   * call whose output may not state it, a `Plan` the agent's plan (a `meta` note). Other item types are
   * kept as unknown records.
   */
  private itemCompleted(text: string, item: Obj, o: EmitOptions): void {
    const body = contentText(item.content);
    if (item.type === 'UserMessage') {
      this.takeHeld(body);
      this.prompt(body, o);
    } else if (item.type === 'AgentMessage') {
      if (this.outputsSeen.has(body)) this.skip('event_msg/item_completed (answer copy)');
      else this.output(body, o);
    } else if (item.type === 'CommandExecution') {
      const id = str(item.id);
      if (id !== null && Number.isInteger(item.exit_code)) this.execExit.set(id, item.exit_code as number);
      this.skip('event_msg/item_completed (CommandExecution)');
    } else if (item.type === 'Plan')
      this.m.marked('meta', CODEX_NOTE_AUTHOR, `plan: ${str(item.text) ?? body}`, o);
    else this.unknownLine(text, o);
  }
}
