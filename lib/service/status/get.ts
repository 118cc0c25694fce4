/**
 * Agent status reports (seed 000, issue 12, docs/status.md): every report of a session is kept within the
 * seed's retention (lib/service/status/retention.ts), and the evidence declared in them is checked
 * against the session's recorded transcript each time the status is read (lib/log/analyse/evidence.ts), so a
 * verdict changes as segments arrive. Reports are an agent's declarations, not proof: nothing here writes
 * into the transcript.
 */

import { setTimeout as sleep } from 'node:timers/promises';
import {
  type CheckedEvent,
  type DeclaredEvent,
  StatusReport,
  type StatusView,
  type VerdictCounts,
} from '../../contract/status.js';
import { EvidenceIndex } from '../../log/analyse/evidence.js';
import { decodeEvent } from '../../log/format/codec.js';
import { asProvenance } from '../../log/format/provenance.js';
import { parseTs } from '../../log/format/time.js';
import { mergeSegmentBatches } from '../../log/read/merge.js';
import { CorrectionIndex } from '../../log/replay/corrections.js';
import { segmentSources } from '../../log/replay/replay.js';
import { StateConflictError, type StatusEntry, type StatusRecord } from '../../store/index.js';
import { statusSummaryOf } from '../../store/session-summary.js';
import { statusEvents } from '../alerts/events.js';
import { isoNow, requireScope, requireSessionAccess, type ServiceContext } from '../shared/context.js';
import { AppError, notFound, parseInput } from '../shared/errors.js';
import { storedSegments } from '../shared/sources.js';
import { summariesChanged } from '../shared/summary-cache.js';
import { appendReport } from './retention.js';

export type { StatusView } from '../../contract/status.js';

/**
 * How many times a report is tried again when another report of the session was written meanwhile: each
 * round lets one racing report through, so this bounds how many may race at once (with jittered backoff
 * up to 200 ms a round, some seconds in all).
 */
const CONFLICT_RETRIES = 40;

/**
 * `POST /v1/sessions/{sid}/status` (scope `report`): appends the report to the session's kept history.
 * Two reports at once both land: each is written on condition that the history is the one it read, and
 * tried again on a fresh read when not. The session need not have segments yet: the answer's `writers`
 * says how many have, so a client can warn about a mistyped session id.
 * @throws AppError `invalid_body` (400) naming each problem, with nothing stored; `conflict` (409) when
 *   the session's status kept changing under it through every retry
 */
export async function reportStatus({
  ctx,
  sid,
  input,
}: {
  ctx: ServiceContext;
  sid: string;
  input: unknown;
}): Promise<StatusView> {
  requireScope(ctx, 'report');
  requireSessionAccess(ctx, sid);
  const report = parseInput(StatusReport, input, 'the status report');
  for (let attempt = 0; ; attempt++) {
    const prev = await ctx.state.getStatus(ctx.tenant, sid);
    // The time is taken after the read, each try: a report that lost a race to a later one is stored
    // after it, so it must not carry an earlier time (state_since would run backwards). Never before the
    // last kept report's either (another server's clock may be ahead).
    const now = isoNow(ctx);
    const last = prev?.reports.at(-1)?.reported_at;
    const entry = {
      state: report.state,
      note: report.note,
      events: report.events,
      reported_by: ctx.caller.id,
      reported_at: last !== undefined && last > now ? last : now,
    };
    const next = appendReport(prev, { tenant: ctx.tenant, sid }, entry);
    // The board's "blocked since": a report of the same state continues the run, another state starts one.
    next.state_since =
      prev && prev.reports.at(-1)!.state === entry.state
        ? statusSummaryOf(prev).state_since
        : entry.reported_at;
    try {
      // Its alert events (issue 28) are written with it, in one transaction: the change fires them or
      // nothing happened.
      await ctx.state.putStatus(next, statusEvents(prev, next));
      summariesChanged(ctx.state, ctx.tenant);
      // The answer is not a read of the transcript (an agent reporting often would make every report a
      // whole-session scan): its claims say they are checked when the status is read.
      return await view(ctx, next, { check: false });
    } catch (err) {
      if (!(err instanceof StateConflictError)) throw err;
      if (attempt >= CONFLICT_RETRIES) {
        throw new AppError(
          'conflict',
          `the status of ${sid} changed ${CONFLICT_RETRIES + 1} times while this report was being stored: nothing was stored; send it again`,
        );
      }
      await sleep(Math.random() * Math.min(200, 5 * 2 ** attempt));
    }
  }
}

/**
 * `GET /v1/sessions/{sid}/status` (scope `read`, `report` or `board`): the kept reports with their
 * evidence checked against the transcript as stored now.
 * @throws AppError `not_found` when nothing was reported
 */
export async function getStatus({
  ctx,
  sid,
  signal,
}: {
  ctx: ServiceContext;
  sid: string;
  /** the request's: a client gone away stops the transcript read */
  signal?: AbortSignal;
}): Promise<StatusView> {
  requireScope(ctx, 'read', 'report', 'board');
  requireSessionAccess(ctx, sid);
  const checked = await checkedStatus(ctx, sid, signal);
  if (!checked) throw notFound('status');
  return checked;
}

/**
 * A session's status with its evidence checked against the stored transcript, or null when nothing was
 * reported. For the verbs that show it beside something else (inspect, the text replay, the board); the
 * caller has checked the scopes.
 */
export async function checkedStatus(
  ctx: ServiceContext,
  sid: string,
  signal?: AbortSignal,
): Promise<StatusView | null> {
  const s = await ctx.state.getStatus(ctx.tenant, sid);
  return s ? view(ctx, s, { check: true, signal }) : null;
}

/** `checkedStatus` of a record already read (the board has it). */
export function checkedView(ctx: ServiceContext, s: StatusRecord, signal?: AbortSignal): Promise<StatusView> {
  return view(ctx, s, { check: true, signal });
}

/** Whether any kept report declares evidence that is checked against the transcript. */
function hasCheckedClaims(s: StatusRecord): boolean {
  return s.reports.some((r) =>
    (r.events as DeclaredEvent[]).some((e) =>
      e.evidence.some((i) => i.type === 'command' || i.type === 'test'),
    ),
  );
}

/**
 * The session's recorded actions and results, corrections applied (a result corrected to exit 2 is exit
 * 2 here, as in the replay), for the evidence checks: a corrections pass and one merged read of its stored
 * segments, made only when some report has something to check.
 */
async function evidenceIndex(ctx: ServiceContext, sid: string, signal?: AbortSignal): Promise<EvidenceIndex> {
  // Who recorded each writer comes from the writer index (its first chunk's provenance, the token that
  // uploaded it), never from the bytes as corrected: issue 24.1, docs/status.md "What a verdict rests on".
  const writers = await ctx.state.listWriters(ctx.tenant, sid);
  const index = new EvidenceIndex(
    new Map(
      writers.map((wr) => [
        wr.w,
        {
          // null: a writer indexed before provenance was kept, read from its writer.start as written
          provenance: wr.provenance === null ? null : asProvenance(wr.provenance),
          agent: wr.agent,
          token_id: wr.token_id,
          token_label: wr.token_label,
          mixed_tokens: wr.mixed_tokens,
        },
      ]),
    ),
  );
  const segments = await storedSegments(ctx, sid);
  const corrections = await CorrectionIndex.scan(segments, signal);
  const any = corrections.size > 0;
  for await (const batch of mergeSegmentBatches(segmentSources(segments, { signal }), { signal })) {
    for (const { event } of batch) {
      if (any && event.type === 'correction') corrections.passed(event.id);
      if (any && corrections.targets(event.id)) {
        const effective = corrections.apply(decodeEvent(event));
        index.add({ ...event, obj: effective as unknown as Record<string, unknown> });
      } else index.add(event);
    }
  }
  return index;
}

/**
 * `evidenceIndex`, or why it could not be read: a session whose storage lost bytes (`data_loss`) or is
 * laid out wrong still shows its reports, their claims unchecked with that reason, instead of failing the
 * status, the board and the replay that show it.
 */
async function readableIndex(
  ctx: ServiceContext,
  sid: string,
  signal?: AbortSignal,
): Promise<EvidenceIndex | { unreadable: string }> {
  try {
    return await evidenceIndex(ctx, sid, signal);
  } catch (err) {
    if (err instanceof AppError && (err.code === 'data_loss' || err.code === 'storage_layout')) {
      return {
        unreadable: `not checked: the session's transcript could not be read (${err.code}: ${err.message})`,
      };
    }
    throw err;
  }
}

/** Each kept report's events with their checks, the verdict counts, and the latest report on top. */
async function view(
  ctx: ServiceContext,
  s: StatusRecord,
  { check, signal }: { check: boolean; signal?: AbortSignal },
): Promise<StatusView> {
  const session = await ctx.state.getSession(ctx.tenant, s.sid);
  // A report may come before any segment: then every claim is checked against an empty transcript.
  const index = !check
    ? { unreadable: NOT_READ.reason }
    : session && session.writers > 0 && hasCheckedClaims(s)
      ? await readableIndex(ctx, s.sid, signal)
      : new EvidenceIndex();
  const counts: VerdictCounts = { supported: 0, unsupported: 0, unchecked: 0, contested: 0 };
  const history = s.reports.map((r) => {
    const at = parseTs(r.reported_at)?.micros ?? Date.parse(r.reported_at) * 1000;
    return { ...entryView(r), events: checked(r, at, index, counts) };
  });
  const latest = history.at(-1)!;
  return {
    sid: s.sid,
    state: latest.state,
    note: latest.note,
    events: latest.events,
    reported_at: latest.reported_at,
    writers: session?.writers ?? 0,
    history,
    dropped_events: s.dropped_events,
    dropped_reports: s.dropped_reports,
    evidence: counts,
  };
}

/** The store keeps a report as `reportStatus` parsed it, so its state and events are the schema's. */
function entryView(r: StatusEntry) {
  return {
    state: r.state as StatusReport['state'],
    note: r.note,
    events_dropped: r.events_dropped,
    reported_at: r.reported_at,
  };
}

/** A check not made: the answer to a report, which does not read the transcript. */
const NOT_READ = {
  verdict: 'unchecked',
  reason:
    'checked against the transcript when the status is read: hansard inspect s_…, or GET /v1/sessions/{sid}/status',
  action_id: null,
  matched_by: null,
  exit_code: null,
  rests_on: null,
  contested: [] as never[],
} as const;

/** The index of a transcript with nothing in it: file and commit claims read `unchecked` from it. */
const EMPTY = new EvidenceIndex();

function checked(
  r: StatusEntry,
  atMicros: number,
  index: EvidenceIndex | { unreadable: string },
  counts: VerdictCounts,
): CheckedEvent[] {
  // Without a readable transcript, command and test claims say why; file and commit ones are as always.
  const checkOf = (item: DeclaredEvent['evidence'][number]) =>
    !('unreadable' in index)
      ? index.check(item, atMicros)
      : item.type === 'command' || item.type === 'test'
        ? { ...NOT_READ, reason: index.unreadable }
        : EMPTY.check(item, atMicros);
  return (r.events as DeclaredEvent[]).map((e) => ({
    kind: e.kind,
    evidence: e.evidence.map((item) => {
      const check = checkOf(item);
      counts[check.verdict] += 1;
      if (check.contested.length > 0) counts.contested += 1;
      return { ...item, check };
    }),
  }));
}
