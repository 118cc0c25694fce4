/**
 * The open turn of a Codex rollout import and the records it writes, for lib/importers/codex-rollout.ts
 * (which reads each line and calls these): pending calls and how they ended, the copies Codex writes of
 * prompts, answers, reasoning, web searches and images, the prompt copy held back until its `user_message`
 * shows, and the compaction under way. A `compacted` line, the `context_compacted` event and an encrypted
 * `compaction` item of one compaction are one compaction note, and the prompts a `replacement_history`
 * repeats are never new prompts (issue 25 item 4; docs/import.md "Codex").
 */
import type { EmitOptions } from '../log/write/writer.js';
import { IMPORT_NOTE_AUTHOR, type ImportProblem, type ImportProblemKind } from './claude-code-transcript.js';
import { CODEX_NOTE_AUTHOR, readCompacted } from './codex-kinds.js';
import { type RolloutScan, usageNote } from './codex-records.js';
import { type Obj, str } from './json-line.js';
import type { MappingCounts, WriterMapping } from './mapping.js';

/** What a Codex import wrote, by kind (`MappingCounts`), plus what is Codex's own (`CodexImportResult.counts`). */
export type CodexCounts = MappingCounts & {
  /** `note`s by `codex` marked `thinking` that hold a reasoning summary */
  reasoning: number;
  /** `note`s marked `token_usage`: one per model response's token counts */
  tokenUsage: number;
  /** lines with a `type` (or payload `type`) this importer does not know, kept as `unknown_record` notes */
  unknown: number;
  /** lines read and deliberately not written, by `type` or `event_msg/<type>` (copies, token counts) */
  skipped: Record<string, number>;
};

/** Which record of a compaction was seen: Codex may write all three for one. */
type CompactionPart = 'compacted' | 'context_compacted' | 'compaction_item';

/** One rollout import's open turn and what it has written; `RolloutImporter` feeds it line by line. */
export class RolloutTurn {
  readonly problems: ImportProblem[] = [];
  protected reasoning = 0;
  protected tokenUsage = 0;
  protected unknown = 0;
  /** exit codes of commands by call id, from `item_completed` `CommandExecution` items and `exec_command_end` */
  protected readonly execExit = new Map<string, number>();
  /** why a call failed when its output does not say (`patch_apply_end`, `mcp_tool_call_end`) */
  protected readonly callFailure = new Map<string, string>();
  protected readonly skipped: Record<string, number> = {};
  /** call ids of the open turn still waiting for their output */
  protected readonly pending = new Set<string>();
  /** the last thing the open turn holds is the agent's answer */
  protected answered = false;
  /** texts already written in the open turn, so their `event_msg` copies are not written twice */
  protected readonly outputsSeen = new Set<string>();
  protected readonly reasoningSeen = new Set<string>();
  /** web searches / images of the open turn written from one record, waiting for their copy (key → count) */
  protected readonly callCopies = new Map<string, number>();
  /** every prompt written, so a compacted history's repetitions of them are recognised */
  protected readonly promptsSeen = new Set<string>();
  /** the records of the compaction under way (nothing but bookkeeping written since its note), or null */
  protected compaction: Set<CompactionPart> | null = null;
  /** a `response_item` user message waiting to learn whether a `user_message` copy follows */
  protected held: { text: string; o: EmitOptions } | null = null;
  protected lineNo = 0;
  /** the model in effect (`modelOf`): the latest `turn_context`'s, else `session_meta`'s; null: not said */
  protected model: string | null = null;
  /** the model in effect came from a `turn_context` (or a reroute), which a `session_meta` never replaces */
  protected modelFromTurn = false;

  constructor(
    readonly m: WriterMapping,
    protected readonly scan: RolloutScan,
  ) {}

  counts(): CodexCounts {
    return {
      ...this.m.counts,
      reasoning: this.reasoning,
      tokenUsage: this.tokenUsage,
      unknown: this.unknown,
      skipped: this.skipped,
    };
  }

  problem(line: number, message: string, kind: ImportProblemKind = 'kept_as_note'): void {
    this.problems.push({ line, message, kind });
  }

  /**
   * A `compacted` line: the context was compacted. One `compaction` note holding the summary; the prompts
   * its `replacement_history` repeats are counted in `extra`, never written as prompts, and the turn goes on.
   */
  protected compacted(p: Obj, o: EmitOptions): void {
    const r = readCompacted(p, this.promptsSeen);
    const text =
      r.summary ?? (r.encrypted ? 'context compacted (the summary is encrypted)' : 'context compacted');
    this.compactionNote('compacted', text, o, {
      codex_type: 'compacted',
      replacement_history_items: r.items,
      repeated_prompts: r.repeatedPrompts,
    });
  }

  /**
   * One compaction's note. Codex may record one compaction up to three times (`compacted`, the
   * `context_compacted` event, an encrypted `compaction` item), one after another: a record of a kind the
   * compaction under way has not had yet is that compaction (counted in `skipped`); otherwise it starts one.
   */
  protected compactionNote(
    part: CompactionPart,
    text: string,
    o: EmitOptions,
    extra: Record<string, unknown>,
  ): void {
    if (this.compaction !== null && !this.compaction.has(part)) {
      this.compaction.add(part);
      this.skip(`${part} (same compaction)`);
      return;
    }
    this.m.compaction(CODEX_NOTE_AUTHOR, text, o, extra);
    this.compaction = new Set([part]);
  }

  /**
   * A call Codex records in one item (a web search, an image): its action and result together. The same
   * call recorded again in the open turn from the other side (`response_item` vs `event_msg`) is its copy.
   */
  protected oneRecordCall(
    tool: string,
    key: string,
    from: 'response_item' | 'event_msg',
    p: Obj,
    o: EmitOptions,
    f: { input: unknown; output: unknown },
  ): void {
    const copyKey = `${from === 'response_item' ? 'event_msg' : 'response_item'}|${key}`;
    const waiting = this.callCopies.get(copyKey) ?? 0;
    if (waiting > 0) {
      this.callCopies.set(copyKey, waiting - 1);
      this.skip(`${from}/${String(p.type)} (copy)`);
      return;
    }
    const own = `${from}|${key}`;
    this.callCopies.set(own, (this.callCopies.get(own) ?? 0) + 1);
    const callId = str(p.call_id) ?? str(p.id) ?? `${tool}@${this.lineNo}`;
    const status = str(p.status);
    const failed = status === 'failed' || status === 'incomplete' || p.success === false;
    this.action(tool, f.input, callId, o);
    this.result(
      this.lineNo,
      callId,
      failed ? 'error' : 'ok',
      f.output,
      failed ? `${tool} ${status ?? 'failed'}` : null,
      null,
      o,
      String(p.type),
    );
  }

  protected action(tool: string, input: unknown, callId: string | null, o: EmitOptions): void {
    this.m.action({ tool, input, callId }, o);
    if (callId !== null) this.pending.add(callId);
    this.answered = false;
    this.compaction = null;
  }

  protected result(
    line: number,
    callId: string,
    status: 'ok' | 'error',
    output: unknown,
    error: string | null,
    exitCode: number | null,
    o: EmitOptions,
    what: string,
  ): void {
    const { orphan } = this.m.result({ callId, status, output, error, exitCode }, o);
    if (orphan)
      this.problem(line, `${what} ${JSON.stringify(callId)} answers no call before it`, 'orphan_result');
    this.pending.delete(callId);
    this.answered = false;
    this.compaction = null;
  }

  /** Drops the held `response_item` copy of the prompt `text`; a held message that is not it is context. */
  protected takeHeld(text: string): void {
    if (this.held !== null && this.held.text === text) {
      this.held = null;
      this.skip('response_item/message (prompt copy)');
    } else this.releaseHeld();
  }

  /**
   * A model response's token counts, as a `token_usage` note whose `extra` holds Codex's figures and the
   * model in effect (`usage_source: 'codex_total'`, issue 27).
   */
  protected usage(p: unknown, o: EmitOptions): void {
    const { text, extra } = usageNote(p, this.model);
    this.m.marked('token_usage', CODEX_NOTE_AUTHOR, text, o, extra);
    this.tokenUsage += 1;
  }

  /** A held `response_item` user message with no `user_message` copy: context Codex injected. */
  protected releaseHeld(): void {
    if (this.held === null) return;
    const { text, o } = this.held;
    this.held = null;
    this.context(text, o);
  }

  protected context(text: string, o: EmitOptions): void {
    this.m.marked('meta', CODEX_NOTE_AUTHOR, `context: ${text}`, o);
  }

  protected prompt(text: string, o: EmitOptions): void {
    this.m.prompt(text, o, this.pending.size > 0 ? 'interrupted' : 'completed');
    this.promptsSeen.add(text);
    this.resetTurn();
  }

  protected output(text: string, o: EmitOptions): void {
    this.m.output(text, o);
    this.outputsSeen.add(text);
    this.answered = true;
    this.compaction = null;
  }

  protected reasoningNote(label: string, text: string, codexType: string, o: EmitOptions): void {
    this.m.marked('thinking', CODEX_NOTE_AUTHOR, `${label}: ${text}`, o, { codex_type: codexType });
    this.reasoning += 1;
    this.compaction = null;
  }

  protected endTurn(status: 'completed' | 'interrupted', o: EmitOptions): void {
    this.m.endTurn(status, o);
    this.resetTurn();
  }

  protected resetTurn(): void {
    this.pending.clear();
    this.outputsSeen.clear();
    this.reasoningSeen.clear();
    this.callCopies.clear();
    this.answered = false;
    this.compaction = null;
  }

  protected unknownLine(text: string, o: EmitOptions): void {
    this.unknown += 1;
    this.m.marked('unknown_record', IMPORT_NOTE_AUTHOR, text, o);
  }

  /** A line kept exactly as written, with the problem that stopped it being mapped. */
  protected keep(line: number, text: string, o: EmitOptions, why: string): void {
    this.problem(line, why);
    this.m.marked('unknown_record', IMPORT_NOTE_AUTHOR, text, o);
  }

  protected skip(what: string): void {
    this.skipped[what] = (this.skipped[what] ?? 0) + 1;
  }
}
