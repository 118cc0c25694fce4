/**
 * Status reports shown beside the recorded transcript, always marked as declared (seed 000 "Read declared
 * evidence": "the conversation timeline marks these rows Declared"; issue 12 item 2): rows in the text
 * replay at the time each report was made, and a section of `inspect`. A declared event never fills an
 * observed field: these are separate rows and a separate section, never events of the transcript.
 */

import type { CheckedEvent, StatusView, VerdictCounts } from '../../contract/status.js';
import type { DeclaredClaim } from '../../log/analyse/inspect.js';
import { escapeControl } from '../../log/format/escape.js';
import { formatTs, parseTs } from '../../log/format/time.js';

/** One report as a text replay row, with the time it sorts at (µs). */
export interface DeclaredRow {
  atMicros: number;
  line: string;
}

/** Who a declared row is shown as, in the text replay's `who` column. */
export const DECLARED_WHO = 'declared';

/**
 * Each kept report of `status` as one text replay row, oldest first:
 * `ts  declared  status.report  Declared: working "note"; test "npm test" passed: supported, …`.
 */
export function declaredRows(status: StatusView): DeclaredRow[] {
  return status.history.map((r) => {
    const micros = parseTs(r.reported_at)?.micros ?? Date.parse(r.reported_at) * 1000;
    const claims = r.events.flatMap(describeEvent);
    const dropped = r.events_dropped ? `; ${r.events_dropped} older events not kept` : '';
    const what = `Declared: ${r.state}${r.note ? ` "${r.note}"` : ''}${claims.length ? `; ${claims.join(', ')}` : ''}${dropped}`;
    return {
      atMicros: micros,
      line: `${formatTs(micros)}  ${DECLARED_WHO.padEnd(14)}  ${'status.report'.padEnd(19)}  ${escapeControl(what)}`,
    };
  });
}

function describeEvent(e: CheckedEvent): string[] {
  if (e.evidence.length === 0) return [e.kind];
  return e.evidence.map((i) => {
    const why = i.check.verdict === 'unsupported' ? ` (${i.check.reason})` : '';
    // A claim another writer's correction touched reads contested (docs/status.md "What a verdict rests on").
    const verdict = i.check.contested.length > 0 ? 'contested' : i.check.verdict;
    return `${e.kind} ${i.type} "${i.ref}" ${i.result}: ${verdict}${why}`;
  });
}

/**
 * The text replay `chunks` (complete lines) with `rows` put in by time: each row before the first line
 * whose `ts` is later than the report, the rest at the end. A line whose `ts` is not a timestamp stays
 * where it is.
 */
export async function* interleaveDeclared(
  chunks: AsyncIterable<string>,
  rows: readonly DeclaredRow[],
): AsyncGenerator<string> {
  let next = 0;
  for await (const chunk of chunks) {
    if (next >= rows.length) {
      yield chunk;
      continue;
    }
    let out = '';
    let start = 0;
    while (start < chunk.length) {
      const nl = chunk.indexOf('\n', start);
      const end = nl < 0 ? chunk.length : nl + 1;
      const line = chunk.slice(start, end);
      if (next < rows.length) {
        const at = parseTs(line.slice(0, line.indexOf(' ')))?.micros;
        while (at !== undefined && next < rows.length && rows[next]!.atMicros < at)
          out += `${rows[next++]!.line}\n`;
      }
      out += line;
      start = end;
    }
    yield out;
  }
  let tail = '';
  while (next < rows.length) tail += `${rows[next++]!.line}\n`;
  if (tail) yield tail;
}

/** What `inspect` shows of a session's status reports: a section of its own, marked declared. */
export interface DeclaredSummary {
  state: string;
  note: string;
  reported_at: string;
  reports: number;
  dropped_events: number;
  dropped_reports: number;
  evidence: VerdictCounts;
  /** every kept claim found unsupported, with why */
  unsupported: { kind: string; type: string; ref: string; result: string; reason: string }[];
  /** every kept command and test claim: verdict, why, the result it rests on, other writers' corrections */
  claims: DeclaredClaim[];
}

/** `status` as inspect's `declared` section. */
export function declaredSummary(status: StatusView): DeclaredSummary {
  return {
    state: status.state,
    note: status.note,
    reported_at: status.reported_at,
    reports: status.history.length,
    dropped_events: status.dropped_events,
    dropped_reports: status.dropped_reports,
    evidence: status.evidence,
    unsupported: status.history.flatMap((r) =>
      r.events.flatMap((e) =>
        e.evidence
          .filter((i) => i.check.verdict === 'unsupported')
          .map((i) => ({ kind: e.kind, type: i.type, ref: i.ref, result: i.result, reason: i.check.reason })),
      ),
    ),
    claims: status.history.flatMap((r) =>
      r.events.flatMap((e) =>
        e.evidence
          .filter((i) => i.type === 'command' || i.type === 'test')
          .map((i) => ({
            kind: e.kind,
            type: i.type,
            ref: i.ref,
            result: i.result,
            verdict: i.check.verdict,
            reason: i.check.reason,
            rests_on: i.check.rests_on,
            contested: i.check.contested,
          })),
      ),
    ),
  };
}
