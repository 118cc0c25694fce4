/**
 * A session's timeline as structured rows (issue 14.3), for the board's session page: the merged
 * transcript (seed 001, DESIGN §3) with corrections applied, each action and output with its attribution
 * (lib/log/replay/attribution.ts), quarantined lines where they sit (DESIGN §5), the agents' status reports as
 * rows marked Declared with their verdicts (seed 000), and verify's findings at the row or writer they
 * concern (docs/verify.md). A page at a time: rows after position `after`, at most `limit`.
 *
 * A whole-session read: the corrections pass, verify and the evidence checks read every segment before
 * the first row, so a caller holds a replay slot and a place in the scan gate around it
 * (lib/http/replay-slots.ts `readWholeSession`). The merge itself stops once the page is full (or the
 * signal aborts) and closes every segment. A page reads the transcript from its start, since attribution
 * and corrections depend on what came before: page n costs the events up to its end.
 */

import { decodeEvent, type RecordedEvent } from '../../log/format/codec.js';
import { asProvenance } from '../../log/format/provenance.js';
import { parseTs } from '../../log/format/time.js';
import { mergeSegmentBatchesKeepingProblems } from '../../log/read/merge.js';
import { CorrectionIndex, type EffectiveEvent } from '../../log/replay/corrections.js';
import { segmentSources } from '../../log/replay/replay.js';
import { requireScope, requireSessionAccess, type ServiceContext } from '../shared/context.js';
import { storedSegments } from '../shared/sources.js';
import { checkedStatus } from '../status/get.js';
import { RowBuilder } from './build.js';
import type { TimelinePage, TimelineProblem, TimelineRow, TimelineWriter } from './schemas.js';
import { sessionSpan } from './span.js';
import { pageVerify } from './verify.js';
import { soloPeople, writerNames } from './writers.js';

export type { TimelinePage, TimelineRow } from './schemas.js';

/** Rows a page shows when the caller does not say. */
export const TIMELINE_PAGE_ROWS = 200;

/** A problem's key: writer and line (or seq when it has no line). */
const lineKey = (w: string, line: number) => `${w}\u0000L${line}`;
const seqKey = (w: string, seq: number) => `${w}\u0000S${seq}`;

/**
 * One page of session `sid`'s timeline (scope `board` or `read`): at most `limit` rows whose position is
 * greater than `after` (−1 for the first page), with whether more follow, the writers (with the verify
 * findings no row shows), the people read so far, the title (the first message), verify's counts and the
 * checked status. With `person`, only that person's joins, leaves and messages and the actions and outputs
 * attributed to them (their results and turns with them); positions stay those of the whole timeline.
 * With `at` (a row's anchor, issue 14 finding 3), `after` is ignored: the page is the one that holds that
 * row, as the "Load more" links would reach it (pages of `limit` rows from the start), its `after` in the
 * answer; an anchor of no row gives the first page. Also when the session ran (its first and last event)
 * and when it was uploaded (its writers' first and last chunk).
 * `signal`: the client gone, the reads stop (AbortError) and close.
 * @throws AppError `not_found` (no writer: the caller may still show a status), `data_loss` (500)
 */
export async function timelinePage({
  ctx,
  sid,
  after = -1,
  limit = TIMELINE_PAGE_ROWS,
  person = null,
  at = null,
  signal,
}: {
  ctx: ServiceContext;
  sid: string;
  after?: number;
  limit?: number;
  person?: string | null;
  at?: string | null;
  signal?: AbortSignal;
}): Promise<TimelinePage> {
  if (at !== null) after = -1;
  requireScope(ctx, 'read', 'board');
  requireSessionAccess(ctx, sid);
  const segments = await storedSegments(ctx, sid);
  const records = await ctx.state.listWriters(ctx.tenant, sid);
  const [corrections, status, report, solo, span] = await Promise.all([
    CorrectionIndex.scan(segments, signal),
    checkedStatus(ctx, sid, signal),
    pageVerify(ctx, sid, records, signal),
    soloPeople(segments, new Set(records.filter((r) => !r.agent).map((r) => r.w)), signal),
    sessionSpan(segments, signal),
  ]);

  // Verify's findings, by the row they concern: a line of a writer (events and quarantined lines), or a
  // seq when the finding has no line; the rest are the writer's (or the session's).
  const placed = new Map<string, TimelineProblem[]>();
  const byWriter = new Map<string, TimelineProblem[]>();
  const sessionProblems: TimelineProblem[] = [];
  const known = new Set(records.map((r) => r.w));
  for (const p of report.problems) {
    const tp: TimelineProblem = {
      severity: p.severity,
      code: p.code,
      message: p.message,
      w: p.w,
      seq: p.seq,
      line: p.line,
    };
    if (!known.has(p.w)) sessionProblems.push(tp);
    else if (p.line === null && p.seq === null) {
      const list = byWriter.get(p.w) ?? [];
      list.push(tp);
      byWriter.set(p.w, list);
    } else {
      const key = p.line !== null ? lineKey(p.w, p.line) : seqKey(p.w, p.seq!);
      const list = placed.get(key) ?? [];
      list.push(tp);
      placed.set(key, list);
    }
  }
  const names = writerNames(records, solo);
  const writers: TimelineWriter[] = records.map((r, index) => ({
    w: r.w,
    name: names.get(r.w)!,
    agent: r.agent,
    provenance: asProvenance(r.provenance),
    token_label: r.token_label,
    mixed_tokens: r.mixed_tokens,
    index,
    ended: r.ended,
    lines: r.lines,
    problems: byWriter.get(r.w) ?? [],
  }));

  const build = new RowBuilder(writers, corrections, status);
  const declared = status?.history ?? [];
  const declaredAt = declared.map((r) => parseTs(r.reported_at)?.micros ?? Date.parse(r.reported_at) * 1000);
  let nextDeclared = 0;
  let pos = -1;
  let rows: TimelineRow[] = [];
  let more = false;
  // `at`: pages are made from the start as usual; a full page without the anchor is set aside (the first
  // is kept, for an anchor of no row) and the next begins after its last row.
  let found = at === null;
  let firstPage: { rows: TimelineRow[]; more: boolean } | null = null;
  /** Takes the row at the next position: false once the page is full and a row past it exists. */
  const take = (row: TimelineRow | null): boolean => {
    if (row === null) return true;
    // The person filter judges every row, those before the page too: a result is theirs when its action
    // (maybe on an earlier page) was.
    if (person !== null) {
      if (!build.concerns(row, person)) return true;
      for (const held of build.heldFor(row, person)) {
        if (held.pos > after && !admit(held)) return false;
      }
    }
    return row.pos <= after || admit(row);
  };
  const admit = (row: TimelineRow): boolean => {
    if (rows.length >= limit && !found) {
      firstPage ??= { rows, more: true };
      after = rows.at(-1)!.pos;
      rows = [];
    }
    if (rows.length >= limit) {
      more = true;
      return false;
    }
    rows.push(row);
    if (row.anchor === at) found = true;
    return true;
  };
  const sources = segmentSources(segments, { signal });
  walk: for await (const batch of mergeSegmentBatchesKeepingProblems(sources, { signal })) {
    for (const item of batch) {
      if ('problem' in item) {
        const p = item.problem;
        const row = build.quarantined(++pos, item.w, p, placed.get(lineKey(item.w, p.line)) ?? []);
        if (!take(row)) break walk;
        continue;
      }
      const ev: RecordedEvent = item.event;
      const at = ev.tsMicros;
      // A report goes before the first event recorded after it (as the text replay interleaves them).
      while (at !== null && nextDeclared < declared.length && declaredAt[nextDeclared]! < at) {
        if (!take(build.declared(++pos, nextDeclared++))) break walk;
      }
      const eff = effectiveOf(ev, corrections);
      const w = item.source;
      const problems = placed.get(lineKey(w, ev.line)) ?? placed.get(seqKey(w, ev.seq)) ?? [];
      pos += 1;
      const make = pos > after || person !== null || !found;
      if (!take(build.event(pos, w, ev, eff, problems, make))) break walk;
    }
  }
  if (!more) {
    while (nextDeclared < declared.length) {
      if (!take(build.declared(++pos, nextDeclared++))) break;
    }
  }
  if (!found) {
    // No row has that anchor: the first page, as without `at`.
    if (firstPage !== null) ({ rows, more } = firstPage);
    after = -1;
  }
  return {
    sid,
    after,
    span,
    uploaded: uploadedOf(records),
    title: build.title,
    writers: build.writerList(),
    people: build.peopleList(),
    rows,
    more,
    next_after: more && rows.length > 0 ? rows.at(-1)!.pos : null,
    verify: {
      ok: report.ok,
      errors: report.summary.errors,
      warnings: report.summary.warnings,
      infos: report.summary.infos,
    },
    session_problems: sessionProblems,
    status,
    person,
  };
}

/** When the session's bytes arrived: its writers' first chunk and last chunk (store times, UTC). */
function uploadedOf(records: readonly { created_at: string; updated_at: string }[]) {
  if (records.length === 0) return null;
  return {
    first: records.map((r) => r.created_at).sort()[0]!,
    last: records
      .map((r) => r.updated_at)
      .sort()
      .at(-1)!,
  };
}

/** The event's effective view when some correction changed it, else null (corrections noted as they pass). */
function effectiveOf(ev: RecordedEvent, index: CorrectionIndex): EffectiveEvent | null {
  if (index.size === 0) return null;
  if (ev.type === 'correction') index.passed(ev.id);
  if (!index.targets(ev.id)) return null;
  const eff = index.apply(decodeEvent(ev));
  return eff.corrected ? eff : null;
}
