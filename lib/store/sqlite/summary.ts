/**
 * The session summary's columns of `SqliteStateStore` (table `sessions`, issue 14.1): added to a database
 * made before them, filled from the status reports it already holds, and read back as `SessionSummary`.
 * `people` and `agents` are JSON arrays of text, `asked` a JSON array of `{user_id, text, at}` (each
 * person's first prompt, sessions.ts `AskedFirst`); `title_at` is the title message's ts in µs, `title_id` its
 * id, `fixes` a JSON array of the corrections of `text` the title and `asked` follow (sessions.ts `TextFix`). Also the two
 * `StateStore` methods that only the summary has (the store delegates here, as to sqlite/status-work.ts).
 */

import { askedOf, fixesOf, mergeSummary, statusSummaryOf } from '../session-summary.js';
import type { SessionSummary, SummaryDelta } from '../sessions.js';
import { decodeStatus } from '../status-record.js';
import { queueSearch } from './search-queue.js';
import type { SqlitePrimitives, SqliteStatement } from './status-work.js';

/** The index entry's own columns: what `getSession` and `listSessions` answer (`SessionRecord`). */
export const SESSION_COLUMNS = 'tenant, sid, created_at, updated_at, writers, lines, bytes';

const SUMMARY_COLUMNS: ReadonlyArray<[string, string]> = [
  ['title', 'TEXT'],
  ['title_at', 'INTEGER'],
  ['first_note', 'TEXT'],
  ['people', 'TEXT'],
  ['agents', 'TEXT'],
  ['state', 'TEXT'],
  ['state_since', 'TEXT'],
  ['note', 'TEXT'],
  ['reported_at', 'TEXT'],
  ['asked', 'TEXT'],
  ['title_id', 'TEXT'],
  ['fixes', 'TEXT'],
  ['summary_rev', 'INTEGER'],
];

/**
 * Adds the summary columns a database lacks (inside the store's opening transaction). When they are new,
 * the sessions with a status report get its state, state_since, note and reported_at, so an old data
 * directory's board shows its states at once; titles and people come with the next chunk.
 */
export function addSummaryColumns(
  db: { exec(sql: string): void; q(sql: string): SqliteStatement },
  tableInfo: () => unknown,
): void {
  const have = new Set((tableInfo() as Array<{ name: string }>).map((c) => c.name));
  const missing = SUMMARY_COLUMNS.filter(([name]) => !have.has(name));
  if (missing.length === 0) return;
  for (const [name, type] of missing) db.exec(`ALTER TABLE sessions ADD COLUMN ${name} ${type}`);
  // A database that has the states already (made before `asked` alone) needs no filling.
  if (!missing.some(([name]) => name === 'state')) return;
  const set = db.q(
    `UPDATE sessions SET state = ?, state_since = ?, note = ?, reported_at = ?, first_note = ?
       WHERE tenant = ? AND sid = ?`,
  );
  const records = db.q('SELECT tenant, sid, record, version FROM status_records').all() as Array<{
    tenant: string;
    sid: string;
    record: string;
    version: number;
  }>;
  for (const r of records) {
    const s = decodeStatus(r.tenant, r.sid, r.record, r.version);
    const sum = statusSummaryOf(s);
    const first = s.reports.find((x) => x.note !== '')?.note ?? null;
    set.run(sum.state, sum.state_since, sum.note, sum.reported_at, first, r.tenant, r.sid);
  }
  // A status of an earlier hansard still: its one report.
  const legacy = db.q('SELECT tenant, sid, state, note, reported_at FROM status').all() as Array<
    Record<string, string>
  >;
  for (const r of legacy) {
    set.run(r.state, r.reported_at, r.note, r.reported_at, r.note || null, r.tenant, r.sid);
  }
}

/** The small columns a listing reads every time (the status a report sets, and the merge's revision). */
const LISTED = `${SESSION_COLUMNS}, first_note, state, state_since, note, reported_at, summary_rev`;
/** The columns a chunk's merge sets: read again only when the row's `summary_rev` moved. */
const MERGED = 'sid, title, people, agents, asked';
/** Past this many rows to read again, one query of the tenant's rows beats one per row. */
const BULK_AFTER = 200;

/** A row's merged columns as last read, with the `summary_rev` they were read at. */
interface MergedPart {
  rev: number;
  title: string | null;
  people: string[];
  agents: string[];
  /** the stored JSON, parsed when a row's `asked` is first read (the overview reads one page's) */
  asked: string | null;
}

/** Per store and tenant: each session's merged columns as last read (sessions gone are dropped). */
const MERGED_CACHE = new WeakMap<SqlitePrimitives, Map<string, Map<string, MergedPart>>>();

function mergedPart(row: Record<string, unknown>, rev: number): MergedPart {
  const names = (v: unknown): string[] => (typeof v === 'string' ? (JSON.parse(v) as string[]) : []);
  return {
    rev,
    title: typeof row.title === 'string' ? row.title : null,
    people: Object.freeze(names(row.people)) as string[],
    agents: Object.freeze(names(row.agents)) as string[],
    asked: typeof row.asked === 'string' ? row.asked : null,
  };
}

/**
 * `StateStore.listSessionSummaries`: the tenant's rows. The overview lists every summary on each request
 * (test/attack/board-bloated-summaries: 5,000 sessions of 40 long names are ~13 MB of JSON), so the
 * merged columns (title, people, agents, asked) are read and parsed again only for rows whose
 * `summary_rev` (bumped by every merge write, of any process) moved since the last listing; the status
 * columns are read every time. The names arrays are frozen: listings share them.
 */
export function listSummaries(x: SqlitePrimitives, tenant: string): SessionSummary[] {
  let byTenant = MERGED_CACHE.get(x);
  if (!byTenant) {
    byTenant = new Map();
    MERGED_CACHE.set(x, byTenant);
  }
  const known = byTenant.get(tenant) ?? new Map<string, MergedPart>();
  const next = new Map<string, MergedPart>();
  const rows = x.transaction(() => {
    const small = x.q(`SELECT ${LISTED} FROM sessions WHERE tenant = ?`).all(tenant) as Array<
      Record<string, unknown>
    >;
    const stale = small.filter(
      (r) => known.get(r.sid as string)?.rev !== ((r.summary_rev as number | null) ?? 0),
    );
    const revOf = new Map(stale.map((r) => [r.sid as string, (r.summary_rev as number | null) ?? 0]));
    const fresh =
      stale.length > BULK_AFTER
        ? (x.q(`SELECT ${MERGED} FROM sessions WHERE tenant = ?`).all(tenant) as Array<
            Record<string, unknown>
          >)
        : stale.map(
            (r) =>
              x.q(`SELECT ${MERGED} FROM sessions WHERE tenant = ? AND sid = ?`).get(tenant, r.sid) as Record<
                string,
                unknown
              >,
          );
    for (const f of fresh) {
      const rev = revOf.get(f.sid as string);
      if (rev !== undefined) known.set(f.sid as string, mergedPart(f, rev));
    }
    return small;
  });
  const text = (v: unknown): string | null => (typeof v === 'string' ? v : null);
  const out = rows.map((row): SessionSummary => {
    const part = known.get(row.sid as string)!;
    next.set(row.sid as string, part);
    let asked: SessionSummary['asked'] | null = null;
    return {
      tenant: row.tenant as string,
      sid: row.sid as string,
      created_at: row.created_at as string,
      updated_at: row.updated_at as string,
      writers: row.writers as number,
      lines: row.lines as number,
      bytes: row.bytes as number,
      title: part.title,
      first_note: text(row.first_note),
      people: part.people,
      agents: part.agents,
      get asked() {
        asked ??= askedOf(part.asked === null ? null : JSON.parse(part.asked));
        return asked;
      },
      state: text(row.state),
      state_since: text(row.state_since),
      note: text(row.note),
      reported_at: text(row.reported_at),
    };
  });
  byTenant.set(tenant, next);
  return out;
}

/**
 * `StateStore.mergeSessionSummary`: read, merge and write back in one transaction (nothing when unchanged);
 * a change of the title queues the session's search facts (sqlite/search-queue.ts) in the same transaction.
 * A session with no row yet gets one (no writers, lines or bytes; created and updated `at`): ingest merges
 * before it advances the writer, whose upsert then counts the first writer (ADR 4).
 */
export function mergeSummaryRow(
  x: SqlitePrimitives,
  tenant: string,
  sid: string,
  delta: SummaryDelta,
  at: string,
): void {
  x.transaction(() => {
    const read = () =>
      x
        .q(
          'SELECT title, title_at, title_id, people, agents, asked, fixes FROM sessions WHERE tenant = ? AND sid = ?',
        )
        .get(tenant, sid) as Record<string, unknown> | undefined;
    let row = read();
    if (!row) {
      x.q(
        `INSERT INTO sessions (tenant, sid, created_at, updated_at, writers, lines, bytes) VALUES (?, ?, ?, ?, 0, 0, 0)
           ON CONFLICT (tenant, sid) DO NOTHING`,
      ).run(tenant, sid, at, at);
      row = read()!;
    }
    const names = (v: unknown): string[] => (typeof v === 'string' ? (JSON.parse(v) as string[]) : []);
    const next = mergeSummary(
      {
        title: (row.title as string | null) ?? null,
        title_at: (row.title_at as number | null) ?? null,
        people: names(row.people),
        agents: names(row.agents),
        asked: askedOf(typeof row.asked === 'string' ? JSON.parse(row.asked) : null),
        title_id: (row.title_id as string | null) ?? null,
        fixes: fixesOf(typeof row.fixes === 'string' ? JSON.parse(row.fixes) : null),
      },
      delta,
    );
    if (!next) return;
    x.q(
      `UPDATE sessions SET title = ?, title_at = ?, title_id = ?, people = ?, agents = ?, asked = ?, fixes = ?,
         summary_rev = COALESCE(summary_rev, 0) + 1 WHERE tenant = ? AND sid = ?`,
    ).run(
      next.title,
      next.title_at,
      next.title_id,
      JSON.stringify(next.people),
      JSON.stringify(next.agents),
      JSON.stringify(next.asked),
      JSON.stringify(next.fixes),
      tenant,
      sid,
    );
    // The title is the one search fact a merge sets (people and agents are in the documents' own terms).
    if (next.title !== ((row.title as string | null) ?? null))
      queueSearch(x, { tenant, sid, w: '', since: at });
  });
}
