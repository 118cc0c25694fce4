/**
 * The audit digest index of `SqliteStateStore` (issue 15, DESIGN §6b; the ports are ../digests.ts):
 * each session's newest digest in table `digest_heads`, and when it is due the next one in the session
 * row's `digest_due` column (ISO 8601, NULL for no mark), found across tenants through the partial index
 * `sessions_digest_due`. Also the chained digests kept with writers and chunks (`chain` columns, NULL in
 * rows written before them). The store delegates here, as to sqlite/status-work.ts.
 */

import { decodeDigestHead, digestHeadConflict, encodeDigestHead } from '../digest-head.js';
import type { DigestDue, DigestHead } from '../digests.js';
import type { ChunkRecord } from '../writers.js';
import type { SqlitePrimitives } from './status-work.js';

/** The tables and indexes of the digest index; run after the store's schema (the sessions table exists). */
const DIGEST_SCHEMA = `
CREATE TABLE IF NOT EXISTS digest_heads (
  tenant TEXT NOT NULL, sid TEXT NOT NULL, seq INTEGER NOT NULL, sha256 TEXT NOT NULL, signature TEXT NOT NULL,
  at TEXT NOT NULL, writers TEXT NOT NULL, closed INTEGER NOT NULL, unchanged INTEGER NOT NULL,
  changed_at TEXT NOT NULL, PRIMARY KEY (tenant, sid)
);
CREATE INDEX IF NOT EXISTS sessions_digest_due ON sessions (digest_due, tenant, sid) WHERE digest_due IS NOT NULL;
`;

/** Columns added to a database made before digests: [table, column, type]. */
const DIGEST_COLUMNS: ReadonlyArray<[string, string, string]> = [
  ['writers', 'chain', 'TEXT'],
  ['chunks', 'chain', 'TEXT'],
  ['sessions', 'digest_due', 'TEXT'],
];

/**
 * Adds the digest columns a database lacks and the digest tables (inside the store's opening
 * transaction). Old writers and chunks keep `chain` NULL: read back as null (writers) or absent (chunks).
 */
export function addDigestSchema(
  exec: (sql: string) => void,
  tableInfo: (table: string) => Array<{ name: string }>,
): void {
  for (const [table, column, type] of DIGEST_COLUMNS) {
    if (!tableInfo(table).some((c) => c.name === column)) {
      exec(`ALTER TABLE ${table} ADD COLUMN ${column} ${type}`);
    }
  }
  exec(DIGEST_SCHEMA);
}

/** The chunk columns `getChunk` and `listChunks` read. */
export const CHUNK_COLUMNS = 'offset, length, sha256, lines, last_seq, chain';

/** A chunks row as `ChunkRecord`: `chain` only when stored (the port's field is optional). */
export function toChunkRecord(row: Record<string, unknown>): ChunkRecord {
  const { chain, ...rest } = row as unknown as ChunkRecord & { chain: string | null };
  return chain === null || chain === undefined ? rest : { ...rest, chain };
}

type HeadRow = Record<string, unknown>;

/** The `DigestIndex` methods on SQLite, and the due mark `advanceWriter` sets in its transaction. */
export class SqliteDigestIndex {
  constructor(private readonly x: SqlitePrimitives) {}

  /**
   * Marks the session due a digest at `at` (`WriterAdvance.digest_due`), replacing any mark it had: a
   * later scheduled mark comes forward; an earlier one (already due) moves to `at`, which is due as well.
   * Inside the caller's transaction, after the session row is made.
   */
  markDue(tenant: string, sid: string, at: string): void {
    this.x.q('UPDATE sessions SET digest_due = ? WHERE tenant = ? AND sid = ?').run(at, tenant, sid);
  }

  async getDigestHead(tenant: string, sid: string): Promise<DigestHead | null> {
    const row = this.x.q('SELECT * FROM digest_heads WHERE tenant = ? AND sid = ?').get(tenant, sid) as
      | HeadRow
      | undefined;
    return row ? toHead(row) : null;
  }

  /**
   * One transaction: the stored head's seq against `prevSeq`, the head written, and the session's due
   * mark set to `nextDue` (NULL when null), or to `head.at` when the session's bytes are no longer
   * `expectBytes` (see the port).
   * @throws StateConflictError when the stored head's seq is not `prevSeq`
   */
  async putDigestHead(
    tenant: string,
    sid: string,
    prevSeq: number | null,
    head: DigestHead,
    nextDue: string | null,
    expectBytes: number,
  ): Promise<void> {
    this.x.transaction(() => {
      const cur = this.x.q('SELECT seq FROM digest_heads WHERE tenant = ? AND sid = ?').get(tenant, sid) as
        | { seq: number }
        | undefined;
      const seq = cur?.seq ?? null;
      if (seq !== prevSeq) throw digestHeadConflict(sid, seq, prevSeq);
      this.x
        .q(
          `INSERT INTO digest_heads (tenant, sid, seq, sha256, signature, at, writers, closed, unchanged, changed_at)
             VALUES (@tenant, @sid, @seq, @sha256, @signature, @at, @writers, @closed, @unchanged, @changed_at)
             ON CONFLICT (tenant, sid) DO UPDATE SET seq = @seq, sha256 = @sha256, signature = @signature,
               at = @at, writers = @writers, closed = @closed, unchanged = @unchanged, changed_at = @changed_at`,
        )
        .run({ tenant, sid, ...encodeDigestHead(head), closed: head.closed ? 1 : 0 });
      const session = this.x.q('SELECT bytes FROM sessions WHERE tenant = ? AND sid = ?').get(tenant, sid) as
        | { bytes: number }
        | undefined;
      const moved = (session?.bytes ?? 0) !== expectBytes;
      this.x
        .q('UPDATE sessions SET digest_due = ? WHERE tenant = ? AND sid = ?')
        .run(moved ? head.at : nextDue, tenant, sid);
    });
  }

  /** One query of the partial index `sessions_digest_due`: marks at or before `now`, earliest first. */
  async listDigestsDue(now: string, limit: number): Promise<DigestDue[]> {
    return this.x
      .q(
        `SELECT tenant, sid, digest_due AS due_at FROM sessions WHERE digest_due <= ?
         ORDER BY digest_due, tenant, sid LIMIT ?`,
      )
      .all(now, Math.max(0, limit)) as DigestDue[];
  }
}

function toHead(row: HeadRow): DigestHead {
  return decodeDigestHead(row, row.writers as string, row.closed === 1);
}
