/**
 * The writer index methods of `SqliteStateStore` (DESIGN §4, §5; ../writers.ts): writers in table
 * `writers`, accepted chunks in `chunks`, advanced through the store's group commit (sqlite/advance.ts).
 * Split from the store so that each file stays readable, as the DynamoDB adapter's dynamo/writers.ts is.
 */
import type { ChunkRecord, WriterAdvance, WriterRecord, WriterStore } from '../writers.js';
import type { AdvanceItem } from './advance.js';
import { CHUNK_COLUMNS, toChunkRecord } from './digest-index.js';
import type { GroupCommit } from './group-commit.js';
import type { SqlitePrimitives } from './status-work.js';

type Row = Record<string, unknown>;

/** The `StateStore` writer and chunk methods on SQLite; each answers as `DynamoStateStore`'s does. */
export class SqliteWriterIndex implements WriterStore {
  constructor(
    private readonly x: SqlitePrimitives,
    /** the store's group commit of advances */
    private readonly advances: GroupCommit<AdvanceItem, void>,
  ) {}

  async getWriter(tenant: string, sid: string, w: string): Promise<WriterRecord | null> {
    const row = this.x
      .q('SELECT * FROM writers WHERE tenant = ? AND sid = ? AND w = ?')
      .get(tenant, sid, w) as Row | undefined;
    return row ? toWriter(row) : null;
  }

  async listWriters(tenant: string, sid: string): Promise<WriterRecord[]> {
    const rows = this.x
      .q('SELECT * FROM writers WHERE tenant = ? AND sid = ? ORDER BY w')
      .all(tenant, sid) as Row[];
    return rows.map(toWriter);
  }

  async getChunk(tenant: string, sid: string, w: string, offset: number): Promise<ChunkRecord | null> {
    const row = this.x
      .q(`SELECT ${CHUNK_COLUMNS} FROM chunks WHERE tenant = ? AND sid = ? AND w = ? AND offset = ?`)
      .get(tenant, sid, w, offset) as Row | undefined;
    return row ? toChunkRecord(row) : null;
  }

  async listChunks(
    tenant: string,
    sid: string,
    w: string,
    from: number,
    limit: number,
  ): Promise<ChunkRecord[]> {
    const rows = this.x
      .q(
        `SELECT ${CHUNK_COLUMNS} FROM chunks WHERE tenant = ? AND sid = ? AND w = ? AND offset >= ? ORDER BY offset LIMIT ?`,
      )
      .all(tenant, sid, w, from, limit) as Row[];
    return rows.map(toChunkRecord);
  }

  /**
   * See the port. Group-committed (sqlite/advance.ts): the advances that arrive while a commit is in flight
   * share one transaction (a savepoint each) and one fsync of the WAL, and resolve only after both.
   */
  advanceWriter(
    tenant: string,
    sid: string,
    w: string,
    fromLength: number,
    next: WriterAdvance,
  ): Promise<void> {
    return this.advances.enqueue({ tenant, sid, w, fromLength, next });
  }
}

/** The writer columns added with issue 24.1: who recorded a writer (its provenance) and which token uploaded it. */
export const WRITER_ORIGIN_COLUMNS = ['provenance', 'token_id', 'token_label', 'mixed_tokens'] as const;

function toWriter(row: Row): WriterRecord {
  return {
    ...(row as unknown as WriterRecord),
    ended: row.ended === 1,
    chain: (row.chain as string | null) ?? null,
    provenance: (row.provenance as string | null) ?? null,
    token_id: (row.token_id as string | null) ?? null,
    token_label: (row.token_label as string | null) ?? null,
    mixed_tokens: row.mixed_tokens === 1,
  };
}
