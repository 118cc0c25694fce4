/**
 * The board's overview (issue 14.1, `GET /v1/board/overview`, the contract in ./overview-schemas.ts):
 * every session of the tenant grouped urgent first, filtered, counted and paged from the session index's
 * summaries alone (`StateStore.listSessionSummaries`: no transcript, no status record per session); only
 * the rows of the page read their work items and status (for the verdict counts, cached as the board's).
 */
import { createHash } from 'node:crypto';
import { nameForm, sameName, uniqueNames } from '../../log/format/names.js';
import type { SessionSummary, StatusRecord } from '../../store/index.js';
import { statusSummaryOf, summaryName } from '../../store/session-summary.js';
import { requireScope, type ServiceContext } from '../shared/context.js';
import { AppError } from '../shared/errors.js';
import { SUMMARIES_MAX_AGE_MS, summaries } from '../shared/summary-cache.js';
import {
  DONE_RECENT_HOURS,
  OVERVIEW_GROUPS,
  OVERVIEW_PAGE_SIZE,
  type Overview,
  type OverviewFilters,
  type OverviewGroup,
  type OverviewRow,
} from './overview-schemas.js';
import { verdicts, workRows } from './rows.js';
import { boardUsage, rowCounters, rowUsage } from './usage.js';

export type { Overview, OverviewFilters, OverviewGroup, OverviewRow } from './overview-schemas.js';

/** Most agents and most people the facets list. */
const FACETS_MAX = 200;

/** The groups whose rows wait on someone: oldest `state_since` first. */
const WAITING: ReadonlySet<OverviewGroup> = new Set(['blocked', 'needs_review', 'working', 'done_recently']);

/**
 * Page `page` (from 1) of the tenant's sessions that match `filters`, `limit` rows a page (1..200), in
 * board order (see overview-schemas.ts), with the count of every group, the facets and an `etag` that
 * changes only when something this page shows changes (ages to the minute). Scope `board` or `read`; a
 * session-bound token sees its own session only. A page past the last answers no rows.
 * `maxAgeMs`: how old a shared listing of the summaries may be (default `SUMMARIES_MAX_AGE_MS`; 0 reads
 * the store).
 * @throws AppError `forbidden` (403); `bad_request` (400) for a page below 1 or a limit outside 1..200
 */
export async function getOverview({
  ctx,
  filters = {},
  page = 1,
  limit = OVERVIEW_PAGE_SIZE,
  maxAgeMs = SUMMARIES_MAX_AGE_MS,
}: {
  ctx: ServiceContext;
  filters?: OverviewFilters;
  page?: number;
  limit?: number;
  maxAgeMs?: number;
}): Promise<Overview> {
  requireScope(ctx, 'board', 'read');
  if (!Number.isInteger(page) || page < 1)
    throw new AppError('bad_request', `page must be a whole number from 1 (got ${page})`);
  if (!Number.isInteger(limit) || limit < 1 || limit > 200)
    throw new AppError('bad_request', `limit must be a whole number from 1 to 200 (got ${limit})`);
  const f = normalized(filters);
  const now = ctx.now();
  const all = await summaries(ctx.state, ctx.tenant, maxAgeMs);
  const bound = ctx.caller.session;
  const visible = bound === null ? all : all.filter((s) => s.sid === bound);

  const placed = visible.map((s) => ({ s, group: groupOf(s, now) }));
  const matched = placed.filter((p) => matches(p.s, f)).sort(boardOrder);
  const counts = new Map<OverviewGroup, number>(OVERVIEW_GROUPS.map((g) => [g, 0]));
  for (const p of matched) counts.set(p.group, counts.get(p.group)! + 1);
  const pages = Math.max(1, Math.ceil(matched.length / limit));
  const [rows, usage] = await Promise.all([
    rowsOf(ctx, matched.slice((page - 1) * limit, page * limit), now),
    bound === null ? boardUsage(ctx, now, { person: f.person, agent: f.agent }) : Promise.resolve(null),
  ]);

  const shown = {
    tenant: ctx.tenant,
    filters: f,
    total: visible.length,
    matched: matched.length,
    groups: OVERVIEW_GROUPS.map((group) => ({ group, count: counts.get(group)! })),
    rows,
    page,
    pages,
    usage,
    facets: bound === null ? sharedFacets(all) : facetsOf(visible),
  };
  return { ...shown, generated_at: now.toISOString(), etag: etagOf(shown, now) };
}

/** The filters without empty values (a form's `?agent=` means no agent filter). */
function normalized(filters: OverviewFilters): OverviewFilters {
  const out: OverviewFilters = {};
  if (filters.state) out.state = filters.state;
  // summaries keep names in NFC, cut to SUMMARY_NAME_CHARS: a longer name asked for is the one they hold
  if (filters.agent) out.agent = summaryName(filters.agent);
  if (filters.person) out.person = summaryName(filters.person);
  if (filters.q?.trim()) out.q = filters.q.trim();
  return out;
}

/** Which group a session is in at `now` (overview-schemas.ts). */
export function groupOf(s: SessionSummary, now: Date): OverviewGroup {
  if (s.writers === 0) return 'no_segments';
  switch (s.state) {
    case 'blocked':
    case 'needs_review':
    case 'working':
      return s.state;
    case 'done': {
      const at = Date.parse(s.state_since ?? s.reported_at ?? s.updated_at);
      return now.getTime() - at < DONE_RECENT_HOURS * 3_600_000 ? 'done_recently' : 'rest';
    }
    default:
      return 'rest';
  }
}

function matches(s: SessionSummary, f: OverviewFilters): boolean {
  if (f.state && (f.state === 'none' ? s.state !== null : s.state !== f.state)) return false;
  // A summary stored before names were kept in NFC may hold another spelling of the same name.
  if (f.agent !== undefined && !s.agents.some((a) => sameName(a, f.agent!))) return false;
  if (f.person !== undefined && !s.people.some((p) => sameName(p, f.person!))) return false;
  if (f.q !== undefined) {
    const needle = nameForm(f.q).toLowerCase();
    // Text in NFC for a needle that is not ASCII (`é` finds `e` + U+0301); an ASCII one finds either.
    const form = /^[\0-\x7f]*$/.test(needle) ? (t: string) => t : nameForm;
    // What each person asked first too: a person's view titles its rows with it (`asked` is read, and
    // on SQLite parsed, only here, when there is text to find).
    const hay = [
      s.title,
      s.first_note,
      s.note,
      s.sid,
      ...s.agents,
      ...s.people,
      ...(s.asked ?? []).map((a) => a.text),
    ];
    if (!hay.some((t) => t && form(t).toLowerCase().includes(needle))) return false;
  }
  return true;
}

/** Board order: by group; waiting groups oldest `state_since` first, the rest newest activity first. */
function boardOrder(
  a: { s: SessionSummary; group: OverviewGroup },
  b: { s: SessionSummary; group: OverviewGroup },
): number {
  const g = OVERVIEW_GROUPS.indexOf(a.group) - OVERVIEW_GROUPS.indexOf(b.group);
  if (g !== 0) return g;
  if (WAITING.has(a.group)) {
    const since = (s: SessionSummary) => s.state_since ?? s.reported_at ?? s.updated_at;
    return compare(since(a.s), since(b.s)) || compare(a.s.sid, b.s.sid);
  }
  return compare(b.s.updated_at, a.s.updated_at) || compare(b.s.sid, a.s.sid);
}

const compare = (a: string, b: string): number => (a < b ? -1 : a > b ? 1 : 0);

/** The facets of each shared listing (summary-cache.ts), computed once for the overviews that take it. */
const FACETS = new WeakMap<SessionSummary[], Overview['facets']>();

function sharedFacets(all: SessionSummary[]): Overview['facets'] {
  let f = FACETS.get(all);
  if (!f) {
    f = facetsOf(all);
    FACETS.set(all, f);
  }
  return f;
}

/**
 * The first `FACETS_MAX` agents and people of the sessions in sorted order. One pass keeping the smallest
 * names seen (a name past the last kept is one comparison), not a sort of every name: 5,000 sessions of
 * 20 distinct people and agents each are 200,000 names (test/attack/board-bloated-summaries).
 */
function facetsOf(sessions: SessionSummary[]): Overview['facets'] {
  const agents = new Smallest(FACETS_MAX);
  const people = new Smallest(FACETS_MAX);
  for (const s of sessions) {
    for (const a of s.agents) agents.add(nameForm(a));
    for (const p of s.people) people.add(nameForm(p));
  }
  return { agents: agents.items, people: people.items };
}

/** The `max` smallest distinct strings added, sorted (by code unit, as `compare`). */
class Smallest {
  readonly items: string[] = [];
  constructor(private readonly max: number) {}

  add(v: string): void {
    const { items } = this;
    if (items.length === this.max && v >= items[items.length - 1]!) return;
    let lo = 0;
    let hi = items.length;
    while (lo < hi) {
      const mid = (lo + hi) >> 1;
      if (items[mid]! < v) lo = mid + 1;
      else hi = mid;
    }
    if (items[lo] === v) return;
    items.splice(lo, 0, v);
    if (items.length > this.max) items.pop();
  }
}

/**
 * The page's rows: the summary, and what only the page reads (work items, and the status record for the
 * verdict counts). A session stored before summaries (no agents yet) has its writers read for them.
 */
async function rowsOf(
  ctx: ServiceContext,
  page: Array<{ s: SessionSummary; group: OverviewGroup }>,
  now: Date,
): Promise<OverviewRow[]> {
  const counters = rowCounters(
    ctx,
    page.map(({ s }) => s.sid),
  );
  const read = await Promise.all(
    page.map(async ({ s }) => {
      const [status, work, writers] = await Promise.all([
        ctx.state.getStatus(ctx.tenant, s.sid),
        ctx.state.listWork(ctx.tenant, { session: s.sid, limit: 20 }),
        s.agents.length === 0 && s.writers > 0
          ? ctx.state.listWriters(ctx.tenant, s.sid)
          : Promise.resolve(null),
      ]);
      return { status, work, writers };
    }),
  );
  const usage = await counters;
  const rows: OverviewRow[] = [];
  // Verdicts read transcripts: one session at a time, as the board does.
  for (const [i, { s, group }] of page.entries()) {
    const { status, work, writers } = read[i]!;
    const evidence = status ? await verdicts(ctx, status, s.bytes).catch(() => null) : null;
    const latest = latestOf(s, status);
    const agents = uniqueNames(
      writers ? writers.map((w) => w.agent).filter((a): a is string => a !== null) : s.agents,
    );
    rows.push({
      sid: s.sid,
      group,
      title: s.title ?? s.first_note,
      people: uniqueNames(s.people),
      asked: s.asked.flatMap((a) => {
        const ts = isoOfMicros(a.at);
        return ts === null ? [] : [{ user_id: nameForm(a.user_id), text: a.text, ts }];
      }),
      // stored as `reportStatus` parsed it
      state: latest.state as OverviewRow['state'],
      state_since: latest.state_since,
      note: latest.note,
      reported_at: latest.reported_at,
      last_activity: s.updated_at,
      created_at: s.created_at,
      writers: s.writers,
      lines: s.lines,
      agents,
      work: workRows(work, now),
      evidence,
      usage: rowUsage(usage.get(s.sid)),
    });
  }
  return rows;
}

/** µs since the epoch as an ISO instant (to the millisecond: for showing); null outside Date's range. */
function isoOfMicros(us: number): string | null {
  const d = new Date(Math.floor(us / 1000));
  return Number.isNaN(d.getTime()) ? null : d.toISOString();
}

/** The latest report as the row shows it: the summary's, or (a session from before summaries) the record's. */
function latestOf(s: SessionSummary, status: StatusRecord | null) {
  if (s.state !== null || status === null) {
    return { state: s.state, state_since: s.state_since, note: s.note, reported_at: s.reported_at };
  }
  return statusSummaryOf(status);
}

/**
 * A strong validator of what the page shows: everything but `generated_at` and the work items' `as_of`,
 * with every instant's age at `now` in whole minutes beside it (the page says "12 min ago").
 */
function etagOf(shown: Omit<Overview, 'generated_at' | 'etag'>, now: Date): string {
  const minutes = (iso: string | null) =>
    iso === null ? null : Math.floor((now.getTime() - Date.parse(iso)) / 60_000);
  const rows = shown.rows.map((r) => ({
    ...r,
    ages: [r.last_activity, r.state_since, r.reported_at].map(minutes),
    work: r.work.map(({ freshness: { as_of: _, ...fresh }, ...w }) => ({
      ...w,
      freshness: fresh,
      ages: [fresh.last_heartbeat_at, fresh.last_reported.at].map(minutes),
    })),
  }));
  return createHash('sha256')
    .update(JSON.stringify({ ...shown, rows }))
    .digest('base64url');
}
