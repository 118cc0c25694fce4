/**
 * `SqliteStateStore`: the embedded `StateStore` of local mode (DESIGN §1), one SQLite file
 * (`{data}/state.sqlite`, WAL) through better-sqlite3. Conditional writes are transactions that check the
 * previous value, as DynamoDB's condition expressions do on AWS.
 */
import Database from 'better-sqlite3';
import { StateConflictError } from '../errors.js';
import { decodeCursor, encodeCursor } from '../keys.js';
import type { SearchQueue, SearchQueueEntry } from '../search.js';
import type { Page, SessionRecord, SessionSummary, SummaryDelta } from '../sessions.js';
import { StateStoreBase } from '../state-store-base.js';
import type { StateStore } from '../stores.js';
import type { TenantUsage } from '../tenants.js';
import { type AdvanceItem, advanceCommitter } from './advance.js';
import { addAlertSchema, SqliteAlerts } from './alerts.js';
import { addDigestSchema, SqliteDigestIndex } from './digest-index.js';
import type { GroupCommit, GroupCommitStats } from './group-commit.js';
import { SCHEMA } from './schema.js';
import { SqliteSearchIndex } from './search.js';
import { SqliteSearchQueue } from './search-queue.js';
import { addSignInSchema, SqliteSignIn } from './sign-in.js';
import { SqliteStatusWorkItems } from './status-work.js';
import { addSummaryColumns, listSummaries, mergeSummaryRow, SESSION_COLUMNS } from './summary.js';
import { addTenantSettingsColumns, SqliteTenantSettings } from './tenants.js';
import { SqliteTokens } from './tokens.js';
import { addUsageSchema, SqliteUsage } from './usage.js';
import { SqliteWriterIndex, WRITER_ORIGIN_COLUMNS } from './writers.js';

/** SQLite's answers when its shared-memory file cannot be made, grown or mapped (a full disk). */
const SHM_FAULTS = new Set(['SQLITE_IOERR_SHMSIZE', 'SQLITE_IOERR_SHMOPEN', 'SQLITE_IOERR_SHMMAP']);

/**
 * Also the local indexing queue of search (`SearchQueue`, sqlite/search-queue.ts: filled in the same
 * transactions as the writer advances, status and work writes and summary merges) and, through
 * `searchIndex()`, the FTS5 index over the same file (issue 30 items 4 and 5). The queue is not part of
 * `StateStore`: on AWS, DynamoDB's stream is the queue.
 */
export class SqliteStateStore extends StateStoreBase implements StateStore, SearchQueue {
  private db: Database.Database;

  /** Opens (creating if needed) the database file. `:memory:` works for tests. */
  /** Prepared statements by SQL: preparing costs more than most of these queries take to run. */
  private readonly statements = new Map<string, Database.Statement>();
  /** the status, work item and claimed key methods, over this store's database */
  private readonly primitives = {
    transaction: <T>(fn: () => T): T => this.db.transaction(fn)(),
    q: (sql: string) => this.q(sql),
  };
  protected readonly items = new SqliteStatusWorkItems(this.primitives);
  protected readonly digests = new SqliteDigestIndex(this.primitives);
  protected readonly tenantSettings = new SqliteTenantSettings(this.primitives);
  protected readonly tokens = new SqliteTokens(this.primitives);
  protected readonly writers: SqliteWriterIndex;
  protected readonly usage = new SqliteUsage(this.primitives);
  protected readonly alerts = new SqliteAlerts(this.primitives);
  protected readonly signIn = new SqliteSignIn(this.primitives);
  private readonly searchQueue = new SqliteSearchQueue(this.primitives);
  private search: SqliteSearchIndex | null = null;
  private readonly advances: GroupCommit<AdvanceItem, void>;
  private readonly walSyncs: () => number;
  private readonly closeWal: () => void;

  private q(sql: string): Database.Statement {
    let st = this.statements.get(sql);
    if (!st) {
      st = this.db.prepare(sql);
      this.statements.set(sql, st);
    }
    return st;
  }

  /**
   * True when this store holds its database exclusively: it was opened on a disk too full for SQLite's
   * shared-memory file (`-shm`), so the WAL index lives in this process's memory and another process
   * (`hansard tenant create --data`) gets SQLITE_BUSY until this one closes it. Reads work; writes answer
   * SQLITE_FULL until there is room, and work after (issue 8).
   */
  readonly exclusive: boolean = false;

  constructor(path: string) {
    super();
    this.db = new Database(path);
    try {
      this.db.pragma('journal_mode = WAL');
    } catch (err) {
      // A full disk: a WAL database whose -shm file cannot be made or grown cannot even be read (the WAL
      // index lives there). Holding it exclusively keeps that index in memory instead.
      if (!SHM_FAULTS.has((err as { code?: unknown }).code as string)) throw err;
      this.db.close();
      this.db = new Database(path);
      this.db.pragma('locking_mode = EXCLUSIVE');
      this.db.pragma('journal_mode = WAL');
      this.exclusive = true;
    }
    this.db.pragma('busy_timeout = 5000');
    this.db.pragma('synchronous = NORMAL');
    // IMMEDIATE: another process opening the same file at once waits (busy_timeout) instead of failing.
    this.db
      .transaction(() => {
        const hadUsage = this.q(
          "SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = 'tenant_usage'",
        ).get();
        this.db.exec(SCHEMA);
        // A database from before token chains: its tokens are all roots (no parent, their own root).
        const tokenColumns = this.db.pragma('table_info(tokens)') as Array<{ name: string }>;
        if (!tokenColumns.some((c) => c.name === 'parent')) {
          this.db.exec(
            'ALTER TABLE tokens ADD COLUMN parent TEXT; ALTER TABLE tokens ADD COLUMN root TEXT; UPDATE tokens SET root = id',
          );
        }
        this.db.exec('CREATE INDEX IF NOT EXISTS tokens_parent ON tokens (tenant, parent)');
        // A database from before the usage table: its running totals start from what the sessions hold.
        if (!hadUsage) {
          this.db.exec(
            'INSERT INTO tenant_usage (tenant, bytes) SELECT tenant, SUM(bytes) FROM sessions GROUP BY tenant',
          );
        }
        // A database from before the overview's session summary (issue 14.1): its columns are added.
        addSummaryColumns({ exec: (sql) => this.db.exec(sql), q: (sql) => this.q(sql) }, () =>
          this.db.pragma('table_info(sessions)'),
        );
        // A database from before per-tenant limits (issue 17.1, 17.3): its tenants get the deployment's.
        addTenantSettingsColumns(
          (sql) => this.db.exec(sql),
          () => this.db.pragma('table_info(tenants)') as Array<{ name: string }>,
        );
        // A database from before the audit digests (issue 15): chain and due columns, the digest heads.
        addDigestSchema(
          (sql) => this.db.exec(sql),
          (table) => this.db.pragma(`table_info(${table})`) as Array<{ name: string }>,
        );
        // A database from before writer provenance (issue 24.1): its writers read provenance and token null.
        const writerColumns = this.db.pragma('table_info(writers)') as Array<{ name: string }>;
        for (const col of WRITER_ORIGIN_COLUMNS) {
          if (!writerColumns.some((c) => c.name === col))
            this.db.exec(`ALTER TABLE writers ADD COLUMN ${col} TEXT`);
        }
        // A database from before token usage (issue 27): its usage tables, empty.
        addUsageSchema((sql) => this.db.exec(sql));
        // A database from before alerts (issue 28): its target, outbox and delivery tables, empty.
        addAlertSchema((sql) => this.db.exec(sql));
        // A database from before team sign-in (issue 29): its OIDC settings, people and audit tables, empty.
        addSignInSchema((sql) => this.db.exec(sql));
      })
      .immediate();
    ({
      committer: this.advances,
      walSyncs: this.walSyncs,
      close: this.closeWal,
    } = advanceCommitter(
      { db: this.db, q: (sql) => this.q(sql), markDue: (t, sid, at) => this.digests.markDue(t, sid, at) },
      this.db.memory ? null : `${this.db.name}-wal`,
    ));
    this.writers = new SqliteWriterIndex(this.primitives, this.advances);
  }

  async createTenant(tenant: string, at: string): Promise<void> {
    const r = this.q('INSERT OR IGNORE INTO tenants (name, created_at) VALUES (?, ?)').run(tenant, at);
    if (r.changes === 0) throw new StateConflictError(`tenant ${tenant} exists`);
  }

  async tenantExists(tenant: string): Promise<boolean> {
    return this.q('SELECT 1 FROM tenants WHERE name = ?').get(tenant) !== undefined;
  }

  /** What the advances' group commit did (batches, items, the largest batch): for tests and benchmarks. */
  get advanceStats(): GroupCommitStats & { walSyncs: number } {
    return { ...this.advances.stats, walSyncs: this.walSyncs() };
  }

  async tenantUsage(tenant: string): Promise<TenantUsage> {
    const row = this.q('SELECT bytes FROM tenant_usage WHERE tenant = ?').get(tenant) as
      | { bytes: number }
      | undefined;
    return { bytes: row?.bytes ?? 0 };
  }

  async getSession(tenant: string, sid: string): Promise<SessionRecord | null> {
    const row = this.q(`SELECT ${SESSION_COLUMNS} FROM sessions WHERE tenant = ? AND sid = ?`).get(
      tenant,
      sid,
    ) as SessionRecord | undefined;
    return row ?? null;
  }

  async countSessions(tenant: string, atMost = Number.POSITIVE_INFINITY): Promise<number> {
    // LIMIT -1 is SQLite's "no limit".
    const limit = Number.isFinite(atMost) ? atMost + 1 : -1;
    return (
      this.q('SELECT COUNT(*) AS n FROM (SELECT 1 FROM sessions WHERE tenant = ? LIMIT ?)').get(
        tenant,
        limit,
      ) as {
        n: number;
      }
    ).n;
  }

  async listSessions(tenant: string, limit: number, cursor: string | null): Promise<Page<SessionRecord>> {
    let rows: SessionRecord[];
    if (cursor) {
      const [updatedAt, sid] = decodeCursor(cursor);
      rows = this.q(
        `SELECT ${SESSION_COLUMNS} FROM sessions WHERE tenant = ? AND (updated_at < ? OR (updated_at = ? AND sid < ?))
           ORDER BY updated_at DESC, sid DESC LIMIT ?`,
      ).all(tenant, updatedAt, updatedAt, sid, limit + 1) as SessionRecord[];
    } else {
      rows = this.q(
        `SELECT ${SESSION_COLUMNS} FROM sessions WHERE tenant = ? ORDER BY updated_at DESC, sid DESC LIMIT ?`,
      ).all(tenant, limit + 1) as SessionRecord[];
    }
    const items = rows.slice(0, limit);
    const last = items.at(-1);
    return { items, next: rows.length > limit && last ? encodeCursor(last.updated_at, last.sid) : null };
  }

  // ---- session summaries: sqlite/summary.ts (a tenant's limits, status, work items, claimed keys and the
  // digest index: StateStoreBase, over sqlite/tenants.ts, sqlite/status-work.ts, sqlite/digest-index.ts)

  async listSessionSummaries(tenant: string): Promise<SessionSummary[]> {
    return listSummaries(this.primitives, tenant);
  }

  async mergeSessionSummary(
    tenant: string,
    sid: string,
    delta: SummaryDelta,
    at = new Date().toISOString(),
  ): Promise<void> {
    mergeSummaryRow(this.primitives, tenant, sid, delta, at);
  }

  // ---- search (issue 30): the indexing queue (sqlite/search-queue.ts) and the FTS5 index (sqlite/search.ts)

  /** The search index in this store's database (made on first use); closed with the store. */
  searchIndex(): SqliteSearchIndex {
    this.search ??= new SqliteSearchIndex(this.db);
    return this.search;
  }

  async takeSearchQueue(max: number): Promise<SearchQueueEntry[]> {
    return this.searchQueue.takeSearchQueue(max);
  }

  async doneSearchQueue(entry: SearchQueueEntry): Promise<void> {
    return this.searchQueue.doneSearchQueue(entry);
  }

  async enqueueSearch(entry: { tenant: string; sid: string; w: string; since: string }): Promise<void> {
    return this.searchQueue.enqueueSearch(entry);
  }

  async searchQueueOf(tenant: string): Promise<{ entries: number; oldest: string | null }> {
    return this.searchQueue.searchQueueOf(tenant);
  }

  async close(): Promise<void> {
    await this.advances.idle();
    await this.search?.close();
    this.closeWal();
    this.db.close();
  }
}
