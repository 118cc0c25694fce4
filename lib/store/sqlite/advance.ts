/**
 * The writer index advance of `SqliteStateStore` (`StateStore.advanceWriter`), group-committed (issue
 * 16.3): the advances that arrive while a commit is in flight go into ONE SQLite transaction, each inside
 * its own SAVEPOINT (better-sqlite3 nests a transaction as a savepoint), so one advance's conflict rolls
 * back that advance only and fails only its request. After the COMMIT the WAL file is fsynced, and only
 * then is any advance of the batch answered.
 *
 * Why the fsync: the database runs WAL with `synchronous = NORMAL`, where a COMMIT is written to the WAL
 * but not synced; it survives the server's crash (the page cache keeps it) but a power loss may take the
 * last commits. A chunk whose index advance was lost that way is not lost itself (its bytes were fsynced
 * first, and `FsSegmentStore.putChunk` adopts identical bytes found past the indexed length when the client
 * sends the chunk again), but the 201 would have counted bytes the index no longer holds. Syncing the WAL
 * once per batch keeps "a 201 means on disk" for the index too, at one fsync shared by the whole batch.
 * A checkpoint that copied the commit into the database file first synced the WAL and then the database
 * (SQLite does at NORMAL), so the commit is on disk either way.
 */
import { closeSync, fsync, openSync, statSync } from 'node:fs';
import { promisify } from 'node:util';
import type Database from 'better-sqlite3';
import { StateConflictError } from '../errors.js';
import type { WriterAdvance } from '../writers.js';
import { GroupCommit, type Settled } from './group-commit.js';
import { insertOutbox } from './outbox.js';
import { queueSearch } from './search-queue.js';

/** One `advanceWriter` call. */
export interface AdvanceItem {
  tenant: string;
  sid: string;
  w: string;
  fromLength: number;
  next: WriterAdvance;
}

/** What the advance needs of the store: its database, its statement cache, the digest due mark. */
export interface AdvancePrimitives {
  db: Database.Database;
  q(sql: string): Database.Statement;
  markDue(tenant: string, sid: string, at: string): void;
}

/**
 * The group commit of a store's advances. `walPath` is the database's WAL file (`<file>-wal`), null for
 * an in-memory database (nothing to sync). `close()` closes the WAL's descriptor kept for the syncs (call
 * it once the committer is idle).
 */
export function advanceCommitter(
  p: AdvancePrimitives,
  walPath: string | null,
): { committer: GroupCommit<AdvanceItem, void>; walSyncs: () => number; close: () => void } {
  let walSyncs = 0;
  const wal = walPath ? new KeptFile(walPath) : null;
  const committer = new GroupCommit<AdvanceItem, void>(async (items) => {
    const results = p.db.transaction(() =>
      items.map((item): Settled<void> => {
        try {
          p.db.transaction(() => advanceOne(p, item))();
          return { ok: true, value: undefined };
        } catch (error) {
          // Some errors (SQLITE_FULL, an I/O error) make SQLite roll the whole transaction back: then no
          // item of the batch is committed, and every one must fail (throwing fails the batch).
          if (!p.db.inTransaction) throw error;
          return { ok: false, error };
        }
      }),
    )();
    if (wal && results.some((r) => r.ok)) {
      await wal.sync();
      walSyncs += 1;
    }
    return results;
  });
  return { committer, walSyncs: () => walSyncs, close: () => wal?.close() };
}

const fsyncFd = promisify(fsync);

/**
 * A file fsynced by path through a descriptor kept between syncs (Linux syncs the file's data whatever
 * descriptor asks): opening and closing it for every batch were two more trips through libuv's pool (issue
 * 16.3). Before each sync the path is stat-ed: a file that is no longer the kept one (SQLite deleted the
 * WAL and made a new one) is opened afresh; no file at all means nothing to sync. Plain descriptors, not a
 * `FileHandle`: the segment fsync tests watch `FileHandle.sync`, and the WAL's syncs are counted apart.
 */
class KeptFile {
  private fd: number | null = null;
  private dev = -1;
  private ino = -1;

  constructor(private readonly path: string) {}

  /** fsyncs the file at the path. @throws the disk's error (the batch then fails) */
  async sync(): Promise<void> {
    const st = statSync(this.path, { throwIfNoEntry: false });
    // No WAL file: every commit was checkpointed into the database file, which the checkpoint synced.
    if (!st) return this.close();
    if (this.fd === null || st.dev !== this.dev || st.ino !== this.ino) {
      this.close();
      this.fd = openSync(this.path, 'r');
      this.dev = st.dev;
      this.ino = st.ino;
    }
    try {
      await fsyncFd(this.fd);
    } catch (err) {
      this.close();
      throw err;
    }
  }

  close(): void {
    if (this.fd === null) return;
    try {
      closeSync(this.fd);
    } catch {
      // EBADF/EIO on close: the descriptor is gone either way
    }
    this.fd = null;
  }
}

/**
 * One advance, inside the batch's transaction: checks the writer is still at `fromLength`, then writes the
 * writer, its chunk, the session's counts, the tenant's usage, the digest due mark and the chunk's alert
 * events (`next.outbox`: rolled back with the advance's savepoint when it fails) and the writer's search
 * indexing entry (sqlite/search-queue.ts, issue 30 item 5).
 * @throws StateConflictError (with the current length) when the stored length is not `fromLength`
 */
function advanceOne(p: AdvancePrimitives, { tenant, sid, w, fromLength, next }: AdvanceItem): void {
  const cur = p
    .q('SELECT length, lines, created_at FROM writers WHERE tenant = ? AND sid = ? AND w = ?')
    .get(tenant, sid, w) as { length: number; lines: number; created_at: string } | undefined;
  const curLength = cur?.length ?? 0;
  if (curLength !== fromLength || (cur === undefined && fromLength !== 0)) {
    throw new StateConflictError(`writer ${w} is at ${curLength} bytes, not ${fromLength}`, curLength);
  }
  p.q(
    `INSERT INTO writers (tenant, sid, w, length, lines, last_seq, ended, agent, chain, created_at, updated_at,
         provenance, token_id, token_label, mixed_tokens)
       VALUES (@tenant, @sid, @w, @length, @lines, @last_seq, @ended, @agent, @chain, @at, @at,
         @provenance, @token_id, @token_label, @mixed_tokens)
       ON CONFLICT (tenant, sid, w) DO UPDATE SET length = @length, lines = @lines, last_seq = @last_seq,
         ended = @ended, agent = COALESCE(agent, @agent), chain = @chain, updated_at = @at,
         mixed_tokens = MAX(COALESCE(mixed_tokens, 0), @mixed_tokens)`,
  ).run({
    tenant,
    sid,
    w,
    length: next.length,
    lines: next.lines,
    last_seq: next.last_seq,
    ended: next.ended ? 1 : 0,
    agent: next.agent,
    // Set with the writer's first chunk only (the INSERT): who put it on record never changes after.
    provenance: next.provenance,
    token_id: next.token_id,
    token_label: next.token_label,
    mixed_tokens: next.mixed_tokens ? 1 : 0,
    chain: next.chain,
    at: next.at,
  });
  const c = next.chunk;
  p.q(
    'INSERT INTO chunks (tenant, sid, w, offset, length, sha256, lines, last_seq, chain) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)',
  ).run(tenant, sid, w, c.offset, c.length, c.sha256, c.lines, c.last_seq, c.chain ?? null);
  p.q(
    `INSERT INTO sessions (tenant, sid, created_at, updated_at, writers, lines, bytes)
       VALUES (@tenant, @sid, @at, @at, 1, @dl, @db)
       ON CONFLICT (tenant, sid) DO UPDATE SET updated_at = @at,
         writers = (SELECT COUNT(*) FROM writers WHERE tenant = @tenant AND sid = @sid),
         lines = lines + @dl, bytes = bytes + @db`,
  ).run({ tenant, sid, at: next.at, dl: next.lines - (cur?.lines ?? 0), db: next.length - curLength });
  p.q(
    `INSERT INTO tenant_usage (tenant, bytes) VALUES (@tenant, @db)
       ON CONFLICT (tenant) DO UPDATE SET bytes = bytes + @db`,
  ).run({ tenant, db: next.length - curLength });
  if (next.digest_due) p.markDue(tenant, sid, next.at);
  insertOutbox(p, next.outbox);
  queueSearch(p, { tenant, sid, w, since: next.at });
}
