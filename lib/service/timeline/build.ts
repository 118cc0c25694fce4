/**
 * The rows of a session's structured timeline, one merged event (or quarantined line, or declared report)
 * at a time: `RowBuilder` keeps what later rows refer back to (messages for attribution, actions for
 * their results' duration, the values corrections replaced, the names of writers and people) and makes
 * each row. Used by `timelinePage` (lib/service/timeline/page.ts), which walks the merge and pages.
 *
 * Memory: the messages, actions and row anchors read so far (as the Attributor's own), never the events.
 */

import type { StatusView } from '../../contract/status.js';
import {
  addDelta,
  type FoldState,
  foldEvent,
  newFoldState,
  totalOf,
  type UsageCounters,
  type UsageDelta,
  zeroCounters,
} from '../../log/analyse/usage/index.js';
import type { LineProblem, RecordedEvent } from '../../log/format/codec.js';
import { escapeControl } from '../../log/format/escape.js';
import { nameForm, sameName } from '../../log/format/names.js';
import { wellFormed } from '../../log/format/text-cut.js';
import { type Attribution, Attributor } from '../../log/replay/attribution.js';
import type { CorrectionIndex, EffectiveEvent } from '../../log/replay/corrections.js';
import type {
  AttributedMessage,
  RowAttribution,
  RowUsage,
  TimelineProblem,
  TimelineRow,
  TimelineWriter,
} from './schemas.js';
import {
  excerpt,
  idAnchor,
  inputSummary,
  keepLines,
  OUTPUT_BYTES,
  oneLine,
  outputText,
  str,
  strOrNull,
  TEXT_BYTES,
} from './text.js';

interface ActionRef {
  anchor: string;
  micros: number | null;
  tool: string;
  turn: string | null;
}

interface MessageRef {
  anchor: string;
  user_id: string;
  ts: string;
}

/** Makes timeline rows in merged order; see the module's doc. */
export class RowBuilder {
  /** the first message's text, one line (escaped), ≤ 120 characters */
  title: string | null = null;
  private readonly attributor = new Attributor();
  private readonly messages = new Map<string, MessageRef>();
  private readonly actions = new Map<string, ActionRef>();
  private readonly anchors = new Set<string>();
  /** correction id → the value it replaced (known once its target was read) */
  private readonly replaced = new Map<string, unknown>();
  /** user_id in NFC (one person however their name is composed) → display name */
  private readonly people = new Map<string, string | null>();
  private readonly names = new Map<string, string>();
  /** the person filter's state: turn starts not shown yet, turns and actions shown */
  private readonly heldTurns = new Map<string, TimelineRow>();
  private readonly personTurns = new Set<string>();
  private readonly personActions = new Set<string>();
  /** usage (docs/usage.md): each writer's fold, each turn's counters and models by `w turn_id` */
  private readonly usageFolds = new Map<string, FoldState>();
  private readonly turnUsage = new Map<string, { c: UsageCounters; models: Set<string> }>();

  constructor(
    private readonly writers: TimelineWriter[],
    private readonly corrections: CorrectionIndex,
    private readonly status: StatusView | null,
  ) {
    for (const wr of writers) this.names.set(wr.w, wr.name);
  }

  /**
   * Folds `ev` (of writer `w`, whose events come in seq order) into the writer's usage and its turn's
   * counters (lib/log/analyse/usage/fold.ts: the rules every total follows); returns what it added.
   */
  private foldUsage(w: string, ev: RecordedEvent): UsageDelta[] {
    let s = this.usageFolds.get(w);
    if (!s) {
      s = newFoldState();
      this.usageFolds.set(w, s);
    }
    const out: UsageDelta[] = [];
    foldEvent(s, w, ev.obj, out);
    for (const d of out) {
      if (d.turn_id === null) continue;
      const k = `${w} ${d.turn_id}`;
      let u = this.turnUsage.get(k);
      if (!u) {
        u = { c: zeroCounters(), models: new Set() };
        this.turnUsage.set(k, u);
      }
      addDelta(u.c, d);
      if (d.model !== null && d.records > 0) u.models.add(d.model);
    }
    return out;
  }

  /** A turn's usage so far; null when no usage record landed in it (unknown). */
  private usageOfTurn(w: string, turnId: string): RowUsage | null {
    const u = this.turnUsage.get(`${w} ${turnId}`);
    if (!u || u.c.records <= 0) return null;
    return rowUsage(u.c, [], u.models);
  }

  /** The writers, as named (timeline-writers.ts). */
  writerList(): TimelineWriter[] {
    return this.writers.map((wr) => ({ ...wr, name: this.names.get(wr.w) ?? wr.name }));
  }

  /** The people read so far, in the order first read. */
  peopleList(): { user_id: string; display_name: string | null }[] {
    return [...this.people].map(([user_id, display_name]) => ({ user_id, display_name }));
  }

  private anchorOf(id: string, pos: number): string {
    const a = idAnchor(id);
    if (!this.anchors.has(a)) {
      this.anchors.add(a);
      return a;
    }
    return `${a}-${pos}`;
  }

  private personName(user_id: string): string {
    return this.people.get(nameForm(user_id)) ?? user_id;
  }

  /**
   * The row of event `ev` (from writer segment `w`) at position `pos`, `eff` its corrected view when a
   * correction changed it. Every event must pass here in merged order; with `make` false (a row before
   * the page) only what later rows need is kept, and null is returned.
   */
  event(
    pos: number,
    w: string,
    ev: RecordedEvent,
    eff: EffectiveEvent | null,
    problems: TimelineProblem[],
    make: boolean,
  ): TimelineRow | null {
    const f = (eff ?? ev.obj) as Record<string, unknown>;
    const used = this.foldUsage(w, ev);
    const anchor = this.anchorOf(ev.id, pos);
    const attribution = this.attributor.push(eff ?? ev);
    const corrected = eff?.corrected?.map((c) => {
      this.replaced.set(c.by, c.was);
      return { field: c.field, by: c.by, by_anchor: idAnchor(c.by), was: c.was, reason: keepLines(c.reason) };
    });
    const base = {
      pos,
      anchor,
      ts: ev.ts,
      w,
      turn: null as string | null,
      problems,
      ...(corrected ? { corrected } : {}),
    };
    const by = this.names.get(w) ?? w;
    switch (ev.type) {
      case 'writer.start': {
        const meta = (f.meta ?? {}) as Record<string, unknown>;
        const agent = strOrNull(meta.agent);
        // the writer's name as the legend has it (timeline-writers.ts), so no page names it otherwise
        const name = this.names.get(w) ?? oneLine(agent || str(f.writer_id) || w, 80);
        this.names.set(w, name);
        if (!make) return null;
        const app = strOrNull(meta.app);
        const host = strOrNull(meta.host);
        return { ...base, kind: 'writer_start', id: ev.id, name, agent, app, host };
      }
      case 'writer.end':
        return make
          ? { ...base, kind: 'writer_end', id: ev.id, name: by, reason: strOrNull(f.reason) }
          : null;
      case 'participant.join':
      case 'participant.leave': {
        const user_id = str(f.user_id);
        const display_name = strOrNull(f.display_name);
        if (ev.type === 'participant.join' && (display_name || !this.people.has(nameForm(user_id))))
          this.people.set(nameForm(user_id), display_name);
        if (!make) return null;
        const kind = ev.type === 'participant.join' ? 'join' : 'leave';
        return { ...base, kind, id: ev.id, user_id, display_name };
      }
      case 'message': {
        const user_id = str(f.user_id);
        const text = str(f.text);
        this.messages.set(ev.id, { anchor, user_id, ts: ev.ts });
        if (!this.people.has(nameForm(user_id))) this.people.set(nameForm(user_id), null);
        this.title ??= oneLine(text, 120);
        if (!make) return null;
        const cut = excerpt(text, TEXT_BYTES);
        return { ...base, kind: 'message', id: ev.id, user_id, name: this.personName(user_id), ...cut };
      }
      case 'turn.start': {
        const turn_id = str(f.turn_id) || ev.id;
        if (!make) return null;
        const ctx = f.context_message_ids;
        const context = Array.isArray(ctx) ? ctx.filter((x): x is string => typeof x === 'string') : null;
        return { ...base, turn: turn_id, kind: 'turn_start', id: ev.id, turn_id, by, context };
      }
      case 'turn.end': {
        const turn_id = str(f.turn_id);
        if (!make) return null;
        return {
          ...base,
          turn: turn_id || null,
          kind: 'turn_end',
          id: ev.id,
          turn_id,
          by,
          status: str(f.status),
          usage: this.usageOfTurn(w, turn_id),
        };
      }
      case 'agent.action': {
        const turn = str(f.turn_id) || null;
        const tool = str(f.tool);
        this.actions.set(ev.id, { anchor, micros: ev.tsMicros, tool, turn });
        if (!make) return null;
        const summary = inputSummary(f.input);
        return {
          ...base,
          turn,
          kind: 'action',
          id: ev.id,
          by,
          tool,
          summary,
          attribution: this.view(attribution),
        };
      }
      case 'agent.action_result': {
        if (!make) return null;
        const action_id = str(f.action_id);
        const action = this.actions.get(action_id);
        const out = excerpt(outputText(f.output), OUTPUT_BYTES);
        const exit = f.exit_code;
        const duration =
          action && action.micros !== null && ev.tsMicros !== null
            ? (ev.tsMicros - action.micros) / 1000
            : null;
        return {
          ...base,
          turn: action?.turn ?? null,
          kind: 'result',
          id: ev.id,
          by,
          action_id,
          action_anchor: action?.anchor ?? null,
          tool: action?.tool ?? null,
          status: str(f.status),
          exit_code: typeof exit === 'number' ? exit : null,
          error: typeof f.error === 'string' ? keepLines(f.error) : null,
          output: out.text,
          more_bytes: out.more_bytes,
          duration_ms: duration,
        };
      }
      case 'agent.output': {
        if (!make) return null;
        const turn = str(f.turn_id) || null;
        const cut = excerpt(str(f.text), TEXT_BYTES);
        return { ...base, turn, kind: 'output', id: ev.id, by, ...cut, attribution: this.view(attribution) };
      }
      case 'note': {
        if (!make) return null;
        const author = str(f.author) || by;
        const usage = used.some((d) => d.records !== 0 || d.reported_cost_micros !== null)
          ? rowUsage(
              used.reduce((c, d) => addDelta(c, d), zeroCounters()),
              used,
            )
          : undefined;
        // A note its writer wrote inside an open turn folds with that turn (a usage note, a thinking
        // summary), instead of splitting the turn's box in two.
        const open = this.usageFolds.get(w)?.turn;
        return {
          ...base,
          turn: open?.open ? open.id : null,
          kind: 'note',
          id: ev.id,
          author,
          ...excerpt(str(f.text), TEXT_BYTES),
          ...(usage ? { usage } : {}),
        };
      }
      case 'correction': {
        if (!make) return null;
        const target_id = str(f.target_id);
        return {
          ...base,
          kind: 'correction',
          id: ev.id,
          by,
          target_id,
          target_anchor: idAnchor(target_id),
          field: str(f.field),
          value: f.value,
          was: this.replaced.has(ev.id) ? { value: this.replaced.get(ev.id) } : null,
          reason: keepLines(str(f.reason)),
          refused: this.corrections.problemOf(ev.id)?.message ?? null,
        };
      }
      default: {
        if (!make) return null;
        const rest: Record<string, unknown> = {};
        for (const [k, v] of Object.entries(ev.obj)) {
          if (!['v', 'sid', 'w', 'seq', 'id', 'ts', 'mono', 'type'].includes(k)) rest[k] = v;
        }
        return { ...base, kind: 'other', id: ev.id, by, type: ev.type, summary: inputSummary(rest) };
      }
    }
  }

  /** A quarantined line of writer `w` (DESIGN §5): where it sits, why, and its text escaped and cut. */
  quarantined(pos: number, w: string, p: LineProblem, problems: TimelineProblem[]): TimelineRow {
    return {
      pos,
      anchor: `q-${idAnchor(w).slice(2)}-${p.line}`,
      ts: '',
      w,
      turn: null,
      // verify says the same of the line: keep its words, not a second copy of the code
      problems: problems.filter((x) => x.code !== p.code),
      kind: 'quarantined',
      line: p.line,
      code: p.code,
      message: escapeControl(p.message),
      excerpt: oneLine(p.excerpt, 200),
      bytes: p.bytes.length,
    };
  }

  /** Report `index` of the status history as a row marked Declared. */
  declared(pos: number, index: number): TimelineRow {
    const report = this.status!.history[index]!;
    const action_anchors: Record<string, string> = {};
    for (const e of report.events)
      for (const i of e.evidence)
        if (i.check.action_id) action_anchors[i.check.action_id] = idAnchor(i.check.action_id);
    return {
      pos,
      anchor: `d-${index}`,
      ts: report.reported_at,
      w: null,
      turn: null,
      problems: [],
      kind: 'declared',
      report,
      index,
      action_anchors,
    };
  }

  private message(id: string): AttributedMessage {
    const m = this.messages.get(id);
    return { id, anchor: m?.anchor ?? null, user_id: m?.user_id ?? null, ts: m?.ts ?? null };
  }

  private view(a: Attribution | null): RowAttribution | null {
    if (!a) return null;
    const out: RowAttribution = {
      basis: a.basis,
      confidence: a.confidence,
      messages: a.message_ids.map((id) => this.message(id)),
    };
    if (a.candidates) {
      out.candidates = a.candidates.map((c) => ({
        user_id: c.user_id,
        confidence: c.confidence,
        messages: c.message_ids.map((id) => this.message(id)),
      }));
    }
    if (a.cascade_from) {
      const from = this.actions.get(a.cascade_from);
      out.cascade_from = { id: a.cascade_from, anchor: from?.anchor ?? idAnchor(a.cascade_from) };
    }
    return out;
  }

  /**
   * Whether `row` is shown under the person filter: their joins, leaves and messages, the actions and
   * outputs attributed to them (a message of theirs, or a contested candidate), those actions' results,
   * and the ends of turns with such a row. A turn's start is held until a row of it is shown.
   */
  concerns(row: TimelineRow, person: string): boolean {
    // A person as a URL names them: well-formed (a lone surrogate became U+FFFD), so compare so.
    // And canonically equivalent (NFC): `José` either way is one person (lib/log/format/names.ts).
    const is = (user: string | null) =>
      user !== null && (user === person || wellFormed(user) === person || sameName(wellFormed(user), person));
    switch (row.kind) {
      case 'join':
      case 'leave':
      case 'message':
        return is(row.user_id);
      case 'turn_start':
        this.heldTurns.set(row.turn_id, row);
        return false;
      case 'action':
      case 'output': {
        const a = row.attribution;
        const mine =
          !!a && (a.messages.some((m) => is(m.user_id)) || !!a.candidates?.some((c) => is(c.user_id)));
        if (mine) {
          if (row.kind === 'action') this.personActions.add(row.id);
          if (row.turn) this.personTurns.add(row.turn);
        }
        return mine;
      }
      case 'result':
        return this.personActions.has(row.action_id);
      case 'turn_end':
        return this.personTurns.has(row.turn_id);
      default:
        return false;
    }
  }

  /** Under the person filter, the held turn start `row` needs shown before it (once). */
  heldFor(row: TimelineRow, person: string | null): TimelineRow[] {
    if (person === null || row.turn === null || row.kind === 'turn_start') return [];
    const held = this.heldTurns.get(row.turn);
    if (!held) return [];
    this.heldTurns.delete(row.turn);
    return [held];
  }
}

/** Counters as a row shows them. */
function rowUsage(c: UsageCounters, deltas: readonly UsageDelta[], models = new Set<string>()): RowUsage {
  for (const d of deltas) if (d.model !== null && d.records > 0) models.add(d.model);
  const t = totalOf(c);
  return {
    input_tokens: t.input_tokens,
    output_tokens: t.output_tokens,
    cache_read_tokens: t.cache_read_tokens,
    cache_write_tokens: t.cache_write_tokens,
    cost_usd: t.cost_usd,
    reported_cost_usd: t.reported_cost_usd,
    records: t.records,
    unpriced_records: t.unpriced_records,
    models: [...models],
  };
}
