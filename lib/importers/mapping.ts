/**
 * The shared mapping vocabulary of the agent importers (`lib/importers/<tool>.ts`, docs/import.md): what
 * every tool's log has in common, written as v3 events (seed 001, DESIGN §3) the same way for all.
 *
 * - `WriterMapping`: one writer's open turn, its call id → action id table, and its counts;
 *   `prompt` (a person's message opens a turn), `action`/`result` (paired by the tool's call id),
 *   `output`, `endTurn`, `interrupt` (pending actions cancelled, turn interrupted), `compaction`,
 *   `marked` (a record kept as what it is: a `note` with `extra.import_kind`).
 * - `openSubagentWriter`: a subagent's own writer in the same session, linked to the action that
 *   launched it (`writer.start` `meta.parent_action_id`).
 *
 * What is not a person speaking is never a `message`: only `prompt` writes one.
 */
import type { ActionStatus, TurnStatus } from '../log/format/events.js';
import {
  type EmitOptions,
  openSession,
  type SessionWriter,
  type WriterOptions,
} from '../log/write/writer.js';

/** The `extra` key that marks what an imported note stands for (docs/import.md). */
export const IMPORT_KIND_KEY = 'import_kind';

/** What a marked note stands for (`extra.import_kind`; docs/import.md lists each). */
export type ImportKind =
  | 'compaction'
  | 'meta'
  | 'command'
  | 'interrupt'
  | 'subagent_prompt'
  | 'abandoned_branch'
  | 'unknown_record'
  | 'unknown_block'
  | 'thinking'
  | 'token_usage'
  // hcn streams (lib/importers/hcn.ts): what a harness run reported that no v3 event says
  | 'coverage_gap'
  | 'failure'
  | 'limit'
  | 'warning'
  | 'error'
  | 'question'
  // capture hooks (lib/client/capture/deliveries.ts): a delivery of an event already recorded
  | 'duplicate';

/** Events written through one `WriterMapping`, by kind (`writer.*` and `turn.end` not counted). */
export interface MappingCounts {
  /** `message` events: what a person typed */
  prompts: number;
  turns: number;
  actions: number;
  results: number;
  outputs: number;
  /** every `note`, marked ones included */
  notes: number;
  /** notes marked `compaction` */
  compactions: number;
  /** turns ended `interrupted` by `interrupt` */
  interruptions: number;
}

/** A fresh, all-zero `MappingCounts`. */
export function newCounts(): MappingCounts {
  return {
    prompts: 0,
    turns: 0,
    actions: 0,
    results: 0,
    outputs: 0,
    notes: 0,
    compactions: 0,
    interruptions: 0,
  };
}

/**
 * Maps one source stream onto one writer. Keeps the open turn, the pending actions, and the call id →
 * action id table; methods write synchronously (through `SessionWriter`) and throw only its errors.
 */
export class WriterMapping {
  readonly counts: MappingCounts = newCounts();
  /** the open turn's id, or null */
  turnId: string | null = null;
  private readonly actionByCall = new Map<string, string>();
  /** call ids of actions without a result yet, in call order */
  private readonly pending = new Map<string, string>();

  /** `userId`: the `user_id` of the messages `prompt` writes. */
  constructor(
    readonly w: SessionWriter,
    readonly userId: string = 'user',
  ) {}

  /**
   * A person's prompt: ends the open turn (`endStatus`, default `completed`), writes `message`, opens a
   * turn naming it as context. Returns the message id.
   */
  prompt(text: string, o: EmitOptions, endStatus: TurnStatus = 'completed'): string {
    this.endTurn(endStatus, o);
    const m = this.w.message({ user_id: this.userId, text }, o);
    this.counts.prompts += 1;
    this.openTurn([m.id], o);
    return m.id;
  }

  /**
   * A message the person sent while the agent worked (queued): a `message`, the open turn going on (it
   * opens no turn and ends none). Returns the message id.
   */
  queuedMessage(text: string, o: EmitOptions): string {
    const m = this.w.message({ user_id: this.userId, text }, o);
    this.counts.prompts += 1;
    return m.id;
  }

  /** Opens a turn (ending none: call `endTurn` first). `context`: message ids, null = not recorded. */
  openTurn(context: string[] | null, o: EmitOptions): string {
    const t = this.w.turnStart({ context_message_ids: context }, o);
    this.counts.turns += 1;
    this.turnId = t.turn_id;
    return t.turn_id;
  }

  /** The open turn, opened (context not recorded) when there is none. */
  ensureTurn(o: EmitOptions): string {
    return this.turnId ?? this.openTurn(null, o);
  }

  /** Ends the open turn with `status`; nothing when none is open. */
  endTurn(status: TurnStatus, o: EmitOptions): void {
    if (this.turnId === null) return;
    this.w.turnEnd({ turn_id: this.turnId, status }, o);
    this.turnId = null;
  }

  /** An `agent.action` in the open turn (opened if none); `callId` pairs it with its result. Returns its id. */
  action(f: { tool: string; input: unknown; callId: string | null }, o: EmitOptions): string {
    const turn_id = this.ensureTurn(o);
    const a = this.w.action({ turn_id, tool: f.tool, input: f.input, call_id: f.callId, caused_by: null }, o);
    if (f.callId !== null) {
      this.actionByCall.set(f.callId, a.id);
      this.pending.set(f.callId, a.id);
    }
    this.counts.actions += 1;
    return a.id;
  }

  /**
   * Takes over an action an earlier process wrote (capture hooks run one process per event and keep this
   * table in their own state): a later `result` for `callId` pairs with `actionId`, and while `pending`
   * an `interrupt` cancels it.
   */
  adopt(callId: string, actionId: string, pending = true): void {
    this.actionByCall.set(callId, actionId);
    if (pending) this.pending.set(callId, actionId);
  }

  /** Call id → action id of the actions still waiting for their result, in call order. */
  pendingCalls(): [string, string][] {
    return [...this.pending];
  }

  /** The action id a call id names, or undefined when no action of this writer had it. */
  actionFor(callId: string): string | undefined {
    return this.actionByCall.get(callId);
  }

  /**
   * An `agent.action_result` for the call `callId`. A call this writer never saw keeps `callId` itself as
   * `action_id` (never empty), so verify reports it as `dangling_reference`; returns `orphan: true` then.
   */
  result(
    f: {
      callId: string;
      status: ActionStatus;
      output?: unknown;
      error?: string | null;
      exitCode?: number | null;
    },
    o: EmitOptions,
  ): { id: string; orphan: boolean } {
    const actionId = this.actionByCall.get(f.callId);
    this.pending.delete(f.callId);
    const r = this.w.actionResult(
      {
        action_id: actionId ?? f.callId,
        status: f.status,
        output: f.output ?? null,
        error: f.error ?? null,
        exit_code: f.exitCode ?? null,
      },
      o,
    );
    this.counts.results += 1;
    return { id: r.id, orphan: actionId === undefined };
  }

  /** An `agent.output` in the open turn (opened if none). */
  output(text: string, o: EmitOptions): void {
    const turn_id = this.ensureTurn(o);
    this.w.output({ turn_id, text, caused_by: null }, o);
    this.counts.outputs += 1;
  }

  /**
   * The person stopped the agent: each action still without a result gets a `cancelled` one (`reason` as
   * its error), then the open turn ends `interrupted`. Nothing is written when no turn is open.
   */
  interrupt(reason: string, o: EmitOptions): void {
    for (const callId of [...this.pending.keys()])
      this.result({ callId, status: 'cancelled', error: reason }, o);
    if (this.turnId === null) return;
    this.endTurn('interrupted', o);
    this.counts.interruptions += 1;
  }

  /**
   * The context was compacted: a `note` by `author` holding the summary or boundary text, marked
   * `extra.import_kind: 'compaction'` (plus `extra`, e.g. the source's trigger). Not a prompt, no turn.
   */
  compaction(author: string, text: string, o: EmitOptions, extra: Record<string, unknown> = {}): void {
    this.marked('compaction', author, text, o, extra);
    this.counts.compactions += 1;
  }

  /** A record kept as what it is: a `note` marked `extra.import_kind: kind` (plus `extra`). */
  marked(
    kind: ImportKind,
    author: string,
    text: string,
    o: EmitOptions,
    extra: Record<string, unknown> = {},
  ): void {
    this.w.note({ author, text }, { ...o, extra: { ...extra, [IMPORT_KIND_KEY]: kind } });
    this.counts.notes += 1;
  }

  /** An unmarked `note` (e.g. the agent's own words that are neither output nor action). */
  note(author: string, text: string, o: EmitOptions): void {
    this.w.note({ author, text }, o);
    this.counts.notes += 1;
  }
}

/**
 * Opens a subagent's own writer in `parent`'s session (a second segment of the same `sid`), its
 * `writer.start` `meta` naming the launching action (`parent_action_id`, null when unknown), the parent
 * writer and the tool's own subagent id; its provenance is the parent's (the same tool records both).
 * Throws `WriterError` as `openSession` does.
 */
export function openSubagentWriter(
  parent: SessionWriter,
  f: { agent: string; app: string; subagentId: string; parentActionId: string | null },
  options: WriterOptions = {},
): SessionWriter {
  return openSession(
    parent.dir,
    {
      sid: parent.sid,
      agent: f.agent,
      app: f.app,
      provenance: parent.provenance,
      extra: { subagent_id: f.subagentId, parent_writer: parent.w, parent_action_id: f.parentActionId },
    },
    options,
  );
}
