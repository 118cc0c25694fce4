/**
 * inspect: a session's summary (seed 001 "replay/verify/inspect", issue 3): its writers, participants,
 * counts by type, turns and their statuses, actions by tool with failures, corrections, unknown events,
 * duration, and the verify summary. One pass over the merged events; memory grows with the number of
 * writers, participants, turns and tools, not with the events.
 */

import { decodeEvent } from '../format/codec.js';
import { escapeControl as esc } from '../format/escape.js';
import { isType } from '../format/events.js';
import { type Provenance, provenanceOf } from '../format/provenance.js';
import { type MergeSource, mergeSegments } from '../read/merge.js';
import { Attributor } from '../replay/attribution.js';
import type { ContestedChange, RestsOn, Verdict } from './evidence.js';
import type { VerifyReport } from './verify.js';

export interface WriterSummary {
  w: string;
  agent: string | null;
  app: string | null;
  hansard_version: string | null;
  host: string | null;
  /** who records its events (`meta.provenance` of its writer.start as written; lib/log/format/provenance.ts) */
  provenance: Provenance;
  /** the tool's id of the subagent this writer records (`meta.subagent_id`); null for a main writer */
  subagent_id: string | null;
  /** the action that launched that subagent (`meta.parent_action_id`); null when none is recorded */
  parent_action_id: string | null;
  first_ts: string | null;
  last_ts: string | null;
  events: number;
  ended: boolean;
}

export interface TurnSummary {
  turn_id: string;
  w: string;
  started_at: string;
  /** the turn.end status, or `open` when the turn has not ended */
  status: string;
  actions: number;
}

export interface SessionSummary {
  sid: string | null;
  first_ts: string | null;
  last_ts: string | null;
  /** seconds from the first to the last event (by the merge order's instants) */
  duration_seconds: number;
  events: number;
  writers: WriterSummary[];
  participants: Array<{ user_id: string; display_name: string | null; messages: number }>;
  counts: Record<string, number>;
  turns: { total: number; by_status: Record<string, number>; list: TurnSummary[] };
  actions: { total: number; failed: number; by_tool: Record<string, { calls: number; failed: number }> };
  corrections: number;
  unknown_events: Record<string, number>;
  /** how the agents' actions and outputs are attributed to people's messages (lib/log/replay/attribution) */
  attribution: { total: number; by_basis: Record<string, number>; mean_confidence: number | null };
  verify: (VerifyReport['summary'] & { ok: boolean }) | null;
  /**
   * The agents' status reports with their claims checked (a server's inspect only; lib/service/status/declared.ts):
   * declarations, shown apart from what was recorded. Null when none, absent for a local directory.
   */
  declared?: DeclaredSection | null;
}

/** `SessionSummary.declared`: a session's status reports as inspect shows them. */
export interface DeclaredSection {
  state: string;
  note: string;
  reported_at: string;
  reports: number;
  dropped_events: number;
  dropped_reports: number;
  evidence: { supported: number; unsupported: number; unchecked: number; contested: number };
  unsupported: { kind: string; type: string; ref: string; result: string; reason: string }[];
  /** every kept command and test claim with its verdict and what it rests on (issue 24.1) */
  claims: DeclaredClaim[];
}

/** One checked claim as inspect shows it: its verdict, why, the result it rests on, and contests. */
export interface DeclaredClaim {
  kind: string;
  type: string;
  ref: string;
  result: string;
  verdict: Verdict;
  reason: string;
  rests_on: RestsOn | null;
  contested: ContestedChange[];
}

/**
 * Summarizes a session. `verify` is the session's verify report when the caller has one (inspect shows
 * its summary). The summary is of the events as recorded: corrections are counted, not applied.
 */
export async function inspectSession(
  sources: MergeSource[],
  verify: VerifyReport | null = null,
): Promise<SessionSummary> {
  const writers = new Map<string, WriterSummary>();
  const participants = new Map<string, { user_id: string; display_name: string | null; messages: number }>();
  const counts: Record<string, number> = {};
  const unknown: Record<string, number> = {};
  const turns = new Map<string, TurnSummary>();
  const actions = new Map<string, { tool: string; turn: string }>();
  const byTool: Record<string, { calls: number; failed: number }> = {};
  let failed = 0;
  let corrections = 0;
  let sid: string | null = null;
  let first: number | null = null;
  let last: number | null = null;
  let firstTs: string | null = null;
  let lastTs: string | null = null;
  let events = 0;
  for (const s of sources) {
    writers.set(s.w, {
      w: s.w,
      agent: null,
      app: null,
      hansard_version: null,
      host: null,
      provenance: 'unknown',
      subagent_id: null,
      parent_action_id: null,
      first_ts: null,
      last_ts: null,
      events: 0,
      ended: false,
    });
  }
  const person = (user_id: string) => {
    let p = participants.get(user_id);
    if (!p) {
      p = { user_id, display_name: null, messages: 0 };
      participants.set(user_id, p);
    }
    return p;
  };

  const attributor = new Attributor();
  const byBasis: Record<string, number> = {};
  let attributed = 0;
  let confidenceSum = 0;
  for await (const { event: rec, source, orderMicros } of mergeSegments(sources)) {
    events += 1;
    const a = attributor.push(rec);
    if (a) {
      attributed += 1;
      confidenceSum += a.confidence;
      byBasis[a.basis] = (byBasis[a.basis] ?? 0) + 1;
    }
    sid ??= rec.sid;
    if (first === null && Number.isFinite(orderMicros)) {
      first = orderMicros;
      firstTs = rec.ts;
    }
    if (Number.isFinite(orderMicros)) {
      last = orderMicros;
      lastTs = rec.ts;
    }
    counts[rec.type] = (counts[rec.type] ?? 0) + 1;
    const wr = writers.get(source)!;
    wr.events += 1;
    wr.first_ts ??= rec.ts;
    wr.last_ts = rec.ts;
    const ev = decodeEvent(rec);
    if ('unknown' in ev) {
      unknown[ev.type] = (unknown[ev.type] ?? 0) + 1;
      continue;
    }
    if (isType(ev, 'writer.start')) {
      wr.agent = ev.meta.agent;
      wr.app = ev.meta.app;
      wr.hansard_version = ev.meta.hansard_version;
      wr.host = ev.meta.host;
      wr.provenance = provenanceOf(ev.meta);
      wr.subagent_id = typeof ev.meta.subagent_id === 'string' ? ev.meta.subagent_id : null;
      wr.parent_action_id = typeof ev.meta.parent_action_id === 'string' ? ev.meta.parent_action_id : null;
    } else if (isType(ev, 'writer.end')) wr.ended = true;
    else if (isType(ev, 'message')) person(ev.user_id).messages += 1;
    else if (isType(ev, 'participant.join')) {
      const p = person(ev.user_id);
      p.display_name = ev.display_name ?? p.display_name;
    } else if (isType(ev, 'turn.start')) {
      turns.set(ev.turn_id || ev.id, {
        turn_id: ev.turn_id || ev.id,
        w: ev.w,
        started_at: ev.ts,
        status: 'open',
        actions: 0,
      });
    } else if (isType(ev, 'turn.end')) {
      const t = turns.get(ev.turn_id);
      if (t) t.status = ev.status;
    } else if (isType(ev, 'agent.action')) {
      actions.set(ev.id, { tool: ev.tool, turn: ev.turn_id });
      const t = turns.get(ev.turn_id);
      if (t) t.actions += 1;
      byTool[ev.tool] ??= { calls: 0, failed: 0 };
      byTool[ev.tool]!.calls += 1;
    } else if (isType(ev, 'agent.action_result')) {
      if (ev.status === 'error') {
        failed += 1;
        const a = actions.get(ev.action_id);
        if (a) byTool[a.tool]!.failed += 1;
      }
    } else if (isType(ev, 'correction')) {
      corrections += 1;
    }
  }
  const byStatus: Record<string, number> = {};
  for (const t of turns.values()) byStatus[t.status] = (byStatus[t.status] ?? 0) + 1;
  return {
    sid,
    first_ts: firstTs,
    last_ts: lastTs,
    duration_seconds: first !== null && last !== null ? Math.round(last - first) / 1e6 : 0,
    events,
    writers: [...writers.values()],
    participants: [...participants.values()],
    counts,
    turns: { total: turns.size, by_status: byStatus, list: [...turns.values()] },
    actions: { total: actions.size, failed, by_tool: byTool },
    corrections,
    unknown_events: unknown,
    attribution: {
      total: attributed,
      by_basis: byBasis,
      mean_confidence: attributed ? Math.round((confidenceSum / attributed) * 1000) / 1000 : null,
    },
    verify: verify ? { ok: verify.ok, ...verify.summary } : null,
  };
}

/** `, subagent ID launched by action A` for a subagent's writer (`linked to no call` without one); else empty. */
function subagentWords(w: WriterSummary): string {
  if (w.subagent_id === null) return '';
  const by =
    w.parent_action_id === null ? 'linked to no call' : `launched by action ${esc(w.parent_action_id)}`;
  return `, subagent ${esc(w.subagent_id)} ${by}`;
}

/**
 * A few lines of readable text for a summary (the CLI without `--json`). Every name and id in it is
 * passed through `escapeControl`: one line each, no escape sequence reaches the terminal (issue 8.4).
 */
export function formatSummary(s: SessionSummary): string {
  const lines = [
    `session ${esc(s.sid ?? '?')}: ${plural(s.events, 'event')}, ${plural(s.writers.length, 'writer')}, ${s.duration_seconds.toFixed(1)} s` +
      (s.first_ts ? ` (${esc(s.first_ts)} to ${esc(s.last_ts ?? '')})` : ''),
  ];
  for (const w of s.writers) {
    lines.push(
      `  writer ${esc(w.w)}  ${esc(w.agent ?? '-')}${w.app ? ` (${esc(w.app)})` : ''}  ${w.provenance}  ${plural(w.events, 'event')}${w.ended ? '' : ', open'}${subagentWords(w)}`,
    );
  }
  if (s.participants.length) {
    lines.push(
      `  participants: ${s.participants.map((p) => `${esc(p.user_id)} (${plural(p.messages, 'message')})`).join(', ')}`,
    );
  }
  const statuses = Object.entries(s.turns.by_status)
    .map(([k, v]) => `${v} ${esc(k)}`)
    .join(', ');
  lines.push(`  turns: ${s.turns.total}${statuses ? ` (${statuses})` : ''}`);
  const tools = Object.entries(s.actions.by_tool)
    .map(([t, c]) => `${esc(t)} ${c.calls}${c.failed ? ` (${c.failed} failed)` : ''}`)
    .join(', ');
  lines.push(
    `  actions: ${s.actions.total}${s.actions.failed ? `, ${s.actions.failed} failed` : ''}${tools ? `: ${tools}` : ''}`,
  );
  if (s.corrections) lines.push(`  corrections: ${s.corrections}`);
  if (s.attribution.total) {
    const bases = Object.entries(s.attribution.by_basis)
      .map(([b, n]) => `${n} ${b}`)
      .join(', ');
    lines.push(`  attribution: ${bases} (mean confidence ${s.attribution.mean_confidence})`);
  }
  const unknown = Object.entries(s.unknown_events);
  if (unknown.length) lines.push(`  unknown events: ${unknown.map(([t, n]) => `${esc(t)} ${n}`).join(', ')}`);
  if (s.verify) {
    lines.push(
      `  verify: ${s.verify.ok ? 'ok' : 'NOT ok'} (${plural(s.verify.errors, 'error')}, ${plural(s.verify.warnings, 'warning')}, ${s.verify.infos} info)`,
    );
  }
  if (s.declared) {
    const d = s.declared;
    const e = d.evidence;
    lines.push(
      `  declared (agents' reports, not proof): ${esc(d.state)}${d.note ? ` "${esc(d.note)}"` : ''} at ${esc(d.reported_at)}, ${plural(d.reports, 'report')}` +
        `${d.dropped_events || d.dropped_reports ? ` (${d.dropped_events} older events, ${d.dropped_reports} reports not kept)` : ''}`,
      `    evidence of all reports kept: ${e.supported} supported, ${e.unsupported} unsupported${e.contested ? ` (${e.contested} contested)` : ''}, ${e.unchecked} unchecked`,
    );
    for (const c of d.claims) lines.push(...claimLines(c));
  }
  return `${lines.join('\n')}\n`;
}

/**
 * A checked claim as inspect's text: its verdict (`contested` when another writer corrected what it names)
 * and why, then what it rests on: the action and exit code, the writer with its agent and provenance, the
 * token that uploaded it; then each contesting correction.
 */
function claimLines(c: DeclaredClaim): string[] {
  const label = c.contested.length > 0 ? 'contested' : c.verdict;
  const why = c.verdict === 'supported' ? '' : `: ${esc(c.reason)}`;
  const out = [`    ${label}: ${esc(c.type)} "${esc(c.ref)}" ${esc(c.result)}${why}`];
  const r = c.rests_on;
  if (r) {
    const exit = r.exit_code === null ? 'no exit code' : `exit code ${r.exit_code}`;
    const who = `${esc(r.w)} (${r.agent === null ? '' : `${esc(r.agent)}, `}${esc(r.provenance)})`;
    const token = r.token_label === null ? '' : `, uploaded with token "${esc(r.token_label)}"`;
    const ran = r.command === null ? '' : ` \`${esc(r.command)}\``;
    out.push(`      rests on ${esc(r.action_id)}${ran} (${exit}) recorded by ${who}${token}`);
  }
  for (const x of c.contested) {
    out.push(
      `      ${esc(x.field)} of ${esc(x.target_id)} corrected from ${esc(JSON.stringify(x.was ?? null))} to ${esc(JSON.stringify(x.value ?? null))} by ${esc(x.w)} (${esc(x.provenance)}), correction ${esc(x.by)}`,
    );
  }
  return out;
}

function plural(n: number, word: string): string {
  return `${n} ${word}${n === 1 ? '' : 's'}`;
}
