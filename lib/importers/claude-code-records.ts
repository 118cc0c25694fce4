/**
 * Claude Code transcript records → v3 events over the shared vocabulary (`mapping.ts`); the table is
 * docs/import.md "Claude Code". Only what a person typed becomes a `message`: subagent (`isSidechain`)
 * records go to the subagent's own writer, compaction, meta and command records become marked notes,
 * interrupt and rejection markers cancel the waiting actions and interrupt the turn.
 */
import { z } from 'zod';
import type { EmitOptions, SessionWriter, WriterOptions } from '../log/write/writer.js';
import type { SubagentLinks } from './claude-code-links.js';
import { claudeResultOutcome, REJECTION_PREFIX } from './claude-code-outcome.js';
import { ClaudeUsageNotes, type UsageLookahead } from './claude-code-usage.js';
import {
  IMPORT_NOTE_AUTHOR,
  type ImportProblem,
  type ImportProblemKind,
  zodSummary,
} from './import-problems.js';
import { openSubagentWriter, WriterMapping } from './mapping.js';

export { IMPORT_NOTE_AUTHOR, type ImportProblem, type ImportProblemKind, zodSummary };

// Transcript records (the boundary): lenient, extra keys kept, checked with safeParse.
const Content = z.union([z.string(), z.array(z.unknown())]);
const UserRecord = z.looseObject({ type: z.literal('user'), message: z.looseObject({ content: Content }) });
const AssistantRecord = z.looseObject({
  type: z.literal('assistant'),
  message: z.looseObject({ content: Content, stop_reason: z.string().nullish() }),
});
const AnyBlock = z.looseObject({ type: z.string() });
const TextBlock = z.looseObject({ type: z.literal('text'), text: z.string() });
const ThinkingBlock = z.looseObject({ type: z.literal('thinking'), thinking: z.string() });
const ToolUseBlock = z.looseObject({
  type: z.literal('tool_use'),
  id: z.string(),
  name: z.string(),
  input: z.unknown(),
});
const ToolResultBlock = z.looseObject({
  type: z.literal('tool_result'),
  tool_use_id: z.string(),
  content: z.unknown().optional(),
  is_error: z.boolean().nullish(),
});
type ToolResultBlock = z.infer<typeof ToolResultBlock>;
/** A block the person attached (image, document): named in the prompt, bytes not copied. */
const AttachedBlock = z.looseObject({
  type: z.enum(['image', 'document']),
  source: z.looseObject({ media_type: z.string().optional() }).optional(),
});

/** A message the person typed while the agent worked, handed to it mid-turn. */
const QueuedAttachment = z.looseObject({
  type: z.literal('attachment'),
  attachment: z.looseObject({ type: z.literal('queued_command'), prompt: z.string() }),
});

/** Claude Code's own text for "the person stopped the agent" (its refusal text: claude-code-outcome.ts). */
const INTERRUPT_PREFIX = '[Request interrupted by user';
/** The tags Claude Code wraps slash commands and their local output in. */
const COMMAND_RE =
  /^\s*<(command-name|command-message|command-args|local-command-stdout|local-command-stderr)>/;

/** One writer's mapping plus the stop_reason of its open turn's last assistant record. */
interface Stream {
  m: WriterMapping;
  /** undefined/null = no information */
  lastStop: string | null | undefined;
  /** a `compact_boundary` not written yet: the summary record that follows it joins its note */
  boundary?: { text: string; extra: Record<string, unknown>; o: EmitOptions };
}

/** Author of the compaction notes: the agent that compacted its context (as the hook's and Codex's). */
const COMPACTION_AUTHOR = 'claude-code';

/** Maps transcript records to events: the main writer, and one writer per subagent. */
export class TranscriptMapper {
  readonly problems: ImportProblem[] = [];
  readonly main: Stream;
  readonly subagents = new Map<string, Stream>();
  /** the `token_usage` notes of the assistant messages (claude-code-usage.ts) */
  readonly usage: ClaudeUsageNotes;
  /** subagent writers linked to no call (each with its `unlinked_subagent` note) */
  private unlinked = 0;
  /** the subagent each linked launching call started: call id → its stream */
  private readonly subByCall = new Map<string, Stream>();
  /** parentUuid → the uuid of the first record that followed it (for rewinds) */
  private readonly firstChild = new Map<string, string>();
  /** call id → its tool's name, to read a result as its tool reports (claude-code-outcome.ts) */
  private readonly toolOfCall = new Map<string, string>();

  constructor(
    writer: SessionWriter,
    userId: string,
    private readonly writerOptions: WriterOptions,
    private readonly agent: string,
    /** what ties each subagent to its call (a transcript's; a stream's records name their call) */
    private readonly links?: SubagentLinks,
    /** where each message's last usage record is (without it, every record's usage is a note) */
    lookahead?: UsageLookahead,
  ) {
    this.main = { m: new WriterMapping(writer, userId), lastStop: undefined };
    this.usage = new ClaudeUsageNotes(lookahead ?? null);
  }

  /** Records a problem of `kind` with line `line` (1-based) of the transcript, or of subagent file `file`. */
  problem(line: number, message: string, kind: ImportProblemKind, file?: string): void {
    this.problems.push(file === undefined ? { line, message, kind } : { line, message, kind, file });
  }

  /**
   * Writes the events of one parsed record (`text`: its line exactly, `line`: its 1-based number;
   * `sub`: the subagent whose own file it is in).
   */
  take(line: number, text: string, obj: Record<string, unknown>, o: EmitOptions, sub?: string): void {
    const s = sub !== undefined || obj.isSidechain === true ? this.subagent(obj, o, sub) : this.main;
    if (!isCompactSummary(obj)) this.writeBoundary(s);
    this.rewind(s, obj, o);
    if (obj.type === 'system' && obj.subtype === 'compact_boundary') {
      // Held until the next record of this writer: the summary Claude Code writes right after it is the
      // same compaction (one note, counted once; issue 24/25 trial).
      const extra = obj.compactMetadata === undefined ? {} : { compactMetadata: obj.compactMetadata };
      s.boundary = { text: typeof obj.content === 'string' ? obj.content : text, extra, o };
      return;
    }
    const queued = QueuedAttachment.safeParse(obj);
    if (queued.success) {
      s.m.queuedMessage(queued.data.attachment.prompt, o);
      return;
    }
    if (obj.type === 'user') {
      const r = UserRecord.safeParse(obj);
      if (r.success) {
        this.user(s, line, obj, r.data.message.content, o);
        return;
      }
      this.problem(line, `user record not understood: ${zodSummary(r.error)}`, 'kept_as_note');
    } else if (obj.type === 'assistant') {
      const r = AssistantRecord.safeParse(obj);
      if (r.success) {
        this.assistant(s, line, r.data.message.content, r.data.message.stop_reason, o);
        this.usage.assistant(s.m, line, obj, o, sub);
        return;
      }
      this.problem(line, `assistant record not understood: ${zodSummary(r.error)}`, 'kept_as_note');
    }
    s.m.marked('unknown_record', IMPORT_NOTE_AUTHOR, text, o);
  }

  /** A line that is no record at all: kept exactly on the main writer (or subagent `sub`'s, its file's). */
  unknownLine(text: string, o: EmitOptions, sub?: string): void {
    const s = sub === undefined ? this.main : this.subagent({}, o, sub);
    this.writeBoundary(s);
    s.m.marked('unknown_record', IMPORT_NOTE_AUTHOR, text, o);
  }

  /** Writes every held `compact_boundary` (before a caller writes on a writer itself). */
  flushBoundaries(): void {
    for (const s of [this.main, ...this.subagents.values()]) this.writeBoundary(s);
  }

  /** Writes the held `compact_boundary` of `s` as a compaction of its own (no summary followed it). */
  private writeBoundary(s: Stream): void {
    const b = s.boundary;
    if (b === undefined) return;
    s.boundary = undefined;
    s.m.compaction(COMPACTION_AUTHOR, b.text, b.o, b.extra);
  }

  /**
   * A compaction summary (`isCompactSummary`): with the boundary held just before it, one compaction note
   * holding the summary, stamped at the boundary, the boundary's text in `extra.compact_boundary`;
   * without one, a compaction of its own.
   */
  private compactSummary(s: Stream, text: string, o: EmitOptions): void {
    const b = s.boundary;
    s.boundary = undefined;
    if (b === undefined) s.m.compaction(COMPACTION_AUTHOR, text, o);
    else s.m.compaction(COMPACTION_AUTHOR, text, b.o, { ...b.extra, compact_boundary: b.text });
  }

  /** Ends every open turn and every writer, subagents first. */
  finish(o: EmitOptions): void {
    this.usage.flush();
    for (const s of [...this.subagents.values(), this.main]) {
      this.writeBoundary(s);
      s.m.endTurn(turnStatus(s.lastStop), o);
      s.m.w.end({}, o);
    }
  }

  /**
   * Counts over all writers, the `token_usage` notes of assistant messages, the number of subagent writers
   * and of those linked to no call.
   */
  counts() {
    const all = [this.main, ...this.subagents.values()].map((s) => s.m.counts);
    const sum = (k: keyof (typeof all)[0]) => all.reduce((n, c) => n + c[k], 0);
    return {
      prompts: sum('prompts'),
      turns: sum('turns'),
      actions: sum('actions'),
      results: sum('results'),
      outputs: sum('outputs'),
      notes: sum('notes'),
      compactions: sum('compactions'),
      interruptions: sum('interruptions'),
      tokenUsage: this.usage.written,
      subagentWriters: this.subagents.size,
      unlinkedSubagents: this.unlinked,
    };
  }

  /**
   * The subagent's stream, its writer opened on its first record and linked to the call that launched
   * it: the one a stream-json record names (`parent_tool_use_id`), else the one `links` ties it to
   * (claude-code-links.ts), never one that merely waits (issue 25 item 3). A subagent tied to no call
   * written yet gets `parent_action_id: null` and a note saying why, marked `unlinked_subagent`.
   */
  private subagent(obj: Record<string, unknown>, o: EmitOptions, fileKey?: string): Stream {
    const id =
      this.links?.keyOf(obj, fileKey) ?? (typeof obj.agentId === 'string' ? obj.agentId : 'sidechain');
    let s = this.subagents.get(id);
    if (s !== undefined) return s;
    const named = typeof obj.parent_tool_use_id === 'string' ? obj.parent_tool_use_id : undefined;
    const callId = named ?? this.links?.callFor(id)?.callId;
    const parent = callId === undefined ? undefined : this.streamOfCall(callId);
    const w = openSubagentWriter(
      (parent ?? this.main).m.w,
      {
        agent: this.agent,
        app: 'hansard import claude-code',
        subagentId: id,
        parentActionId: parent?.m.actionFor(callId!) ?? null,
      },
      this.writerOptions,
    );
    s = { m: new WriterMapping(w, this.main.m.userId), lastStop: undefined };
    this.subagents.set(id, s);
    if (parent !== undefined) this.subByCall.set(callId!, s);
    else {
      this.unlinked += 1;
      const why =
        callId === undefined
          ? (this.links?.why(id) ?? 'no call names it')
          : `the call it names (${callId}) is not in the transcript before it`;
      s.m.marked('meta', IMPORT_NOTE_AUTHOR, `subagent ${id} is linked to no Task/Agent call: ${why}`, o, {
        unlinked_subagent: true,
        subagent_id: id,
      });
    }
    return s;
  }

  /** The stream (main or a subagent) whose action has call id `callId`. */
  private streamOfCall(callId: string): Stream | undefined {
    return [this.main, ...this.subagents.values()].find((s) => s.m.actionFor(callId) !== undefined);
  }

  /** A prompt whose parent already had a child: the branch after that child was abandoned; say so, keep it. */
  private rewind(s: Stream, obj: Record<string, unknown>, o: EmitOptions): void {
    if (typeof obj.parentUuid !== 'string' || typeof obj.uuid !== 'string') return;
    const first = this.firstChild.get(obj.parentUuid);
    if (first === undefined) {
      this.firstChild.set(obj.parentUuid, obj.uuid);
      return;
    }
    // Only a person's new prompt is a rewind: parallel tool calls and their results may share a parent.
    if (first === obj.uuid || !isPromptRecord(obj)) return;
    s.m.marked(
      'abandoned_branch',
      IMPORT_NOTE_AUTHOR,
      `the conversation went back to record ${obj.parentUuid}: the branch from record ${first} was abandoned`,
      o,
      { parent_uuid: obj.parentUuid, abandoned_from: first, resumed_at: obj.uuid },
    );
  }

  private user(
    s: Stream,
    line: number,
    obj: Record<string, unknown>,
    content: string | unknown[],
    o: EmitOptions,
  ): void {
    const blocks: unknown[] = typeof content === 'string' ? [{ type: 'text', text: content }] : content;
    const texts: string[] = [];
    const attached: string[] = [];
    const results: ToolResultBlock[] = [];
    const others: unknown[] = [];
    for (const block of blocks) {
      const t = TextBlock.safeParse(block);
      const r = ToolResultBlock.safeParse(block);
      const a = AttachedBlock.safeParse(block);
      if (t.success) texts.push(t.data.text);
      else if (r.success) results.push(r.data);
      else if (a.success)
        attached.push(`[${a.data.type}${a.data.source?.media_type ? `: ${a.data.source.media_type}` : ''}]`);
      else others.push(block);
    }
    const text = texts.join('\n\n');
    if (obj.isCompactSummary === true) this.compactSummary(s, text, o);
    else if (obj.isMeta === true) s.m.marked('meta', 'claude-code', text, o);
    else if (texts.length > 0 && COMMAND_RE.test(text)) s.m.marked('command', 'claude-code', text, o);
    else {
      // Results answer the actions of the turn already open, so they come before a new prompt ends it.
      // `toolUseResult` (stream-json: `tool_use_result`) is the record's: it speaks for the block only
      // when the record holds one result.
      const response = results.length === 1 ? (obj.toolUseResult ?? obj.tool_use_result ?? null) : null;
      let rejected = false;
      for (const r of results) rejected = this.result(s, line, r, response, o) || rejected;
      if (rejected) s.m.interrupt(REJECTION_PREFIX, o);
      if (texts.length > 0 && text.startsWith(INTERRUPT_PREFIX)) {
        s.m.marked('interrupt', 'claude-code', text, o);
        s.m.interrupt(text, o);
      } else if (texts.length > 0 || attached.length > 0)
        this.prompt(s, [text, ...attached].filter(Boolean).join('\n\n'), o);
    }
    for (const b of others) this.blockNote(s, line, b, o);
  }

  /** A person's prompt on the main writer; on a subagent's, the parent agent's instruction (a note). */
  private prompt(s: Stream, text: string, o: EmitOptions): void {
    if (s === this.main) s.m.prompt(text, o, turnStatus(s.lastStop));
    else {
      s.m.endTurn(turnStatus(s.lastStop), o);
      s.m.marked('subagent_prompt', 'claude-code', text, o);
      s.m.openTurn(null, o);
    }
    s.lastStop = undefined;
  }

  /**
   * Writes one tool result (`response`: the record's `toolUseResult`, when it is this block's); status and
   * exit code as Claude Code reports them, read as the capture hook reads them (claude-code-outcome.ts).
   * True when it is the person's rejection of the call.
   */
  private result(s: Stream, line: number, b: ToolResultBlock, response: unknown, o: EmitOptions): boolean {
    const error = b.is_error === true;
    const rejected = error && contentText(b.content).startsWith(REJECTION_PREFIX);
    const outcome = claudeResultOutcome({
      tool: this.toolOfCall.get(b.tool_use_id) ?? null,
      failed: error,
      text: error ? contentText(b.content) : null,
      response,
    });
    const { orphan } = s.m.result(
      { callId: b.tool_use_id, ...outcome, output: error ? null : (b.content ?? null) },
      o,
    );
    if (orphan)
      this.problem(
        line,
        `tool_result ${JSON.stringify(b.tool_use_id)} answers no tool_use seen before it`,
        'orphan_result',
      );
    // The launching call's result is the subagent's last word: its turn ends there (a background
    // launch answers at once: its subagent's records come later and end at the import's end).
    const sub = this.subByCall.get(b.tool_use_id);
    if (sub !== undefined) sub.m.endTurn(turnStatus(sub.lastStop), o);
    return rejected;
  }

  private assistant(
    s: Stream,
    line: number,
    content: string | unknown[],
    stop: string | null | undefined,
    o: EmitOptions,
  ): void {
    const blocks: unknown[] = typeof content === 'string' ? [{ type: 'text', text: content }] : content;
    for (const block of blocks) {
      const use = ToolUseBlock.safeParse(block);
      const text = TextBlock.safeParse(block);
      const thinking = ThinkingBlock.safeParse(block);
      if (use.success) {
        s.m.action({ tool: use.data.name, input: use.data.input, callId: use.data.id }, o);
        this.toolOfCall.set(use.data.id, use.data.name);
      } else if (text.success) s.m.output(text.data.text, o);
      else if (thinking.success)
        s.m.marked('thinking', 'claude-code', `thinking: ${thinking.data.thinking}`, o);
      else this.blockNote(s, line, block, o);
    }
    s.lastStop = stop;
  }

  /** A content block the mapping does not know: kept as its JSON. */
  private blockNote(s: Stream, line: number, block: unknown, o: EmitOptions): void {
    if (!AnyBlock.safeParse(block).success)
      this.problem(line, 'content block has no string "type"', 'kept_as_note');
    s.m.marked('unknown_block', IMPORT_NOTE_AUTHOR, JSON.stringify(block) ?? 'null', o);
  }
}

/** A `user` record Claude Code marks as the summary of a compaction, in a shape the mapper reads. */
function isCompactSummary(obj: Record<string, unknown>): boolean {
  return obj.type === 'user' && obj.isCompactSummary === true && UserRecord.safeParse(obj).success;
}

/** A `user` record that holds no `tool_result` block (what a person would type). */
function isPromptRecord(obj: Record<string, unknown>): boolean {
  const r = UserRecord.safeParse(obj);
  if (!r.success) return false;
  const c = r.data.message.content;
  return typeof c === 'string' || !c.some((b) => ToolResultBlock.safeParse(b).success);
}

/** `completed` after `end_turn` or when no stop_reason was recorded, else `interrupted`. */
function turnStatus(stop: string | null | undefined): 'completed' | 'interrupted' {
  return stop === undefined || stop === null || stop === 'end_turn' ? 'completed' : 'interrupted';
}

/** A tool_result's content as the text of an error: a string as is, text blocks joined, anything else as JSON. */
function contentText(content: unknown): string {
  if (content === undefined || content === null) return '';
  if (typeof content === 'string') return content;
  if (Array.isArray(content)) {
    const texts = content.map((b) => TextBlock.safeParse(b));
    if (texts.length > 0 && texts.every((t) => t.success)) return texts.map((t) => t.data!.text).join('\n');
  }
  return JSON.stringify(content);
}
