/**
 * The writer index port (DESIGN §4, §5): what is stored of each writer (its length, lines, chain) and of
 * each accepted chunk (what a retry is answered with), advanced atomically chunk by chunk. Part of the
 * state store (lib/store/sqlite/, lib/store/dynamo/writers.ts).
 */

import { z } from 'zod';
import { ChunkView } from '../contract/chunks.js';
import { Count, Instant, SessionId, WriterId } from '../contract/ids.js';
import { OutboxEvent } from './alerts.js';

/**
 * One accepted chunk of a writer's segment: what a retry of it is answered with, and what
 * `GET …/writers/{w}/chunks` lists (`ChunkView`, lib/contract/chunks.ts), with the chain.
 */
export const ChunkRecord = ChunkView.extend({
  /**
   * the writer's chained digest after this chunk (lib/audit/chain.ts `nextChain`); absent in records
   * written before chains were kept (issue 15)
   */
  chain: z.string().optional(),
});
export type ChunkRecord = z.infer<typeof ChunkRecord>;

/** What is stored of a writer (DESIGN §4 `GET …/writers/{w}`). */
export const WriterRecord = z.object({
  tenant: z.string(),
  sid: SessionId,
  w: WriterId,
  length: Count,
  lines: Count,
  last_seq: z.int().nullable(),
  ended: z.boolean(),
  /** `meta.agent` from its writer.start, when it had one */
  agent: z.string().nullable(),
  /**
   * `meta.provenance` of its writer.start as read at its first chunk (lib/log/format/provenance.ts: a
   * kind, or `unknown`); null for a writer indexed before provenance was kept (issue 24.1)
   */
  provenance: z.string().nullable(),
  /**
   * the token that uploaded its first chunk, as the server knew it then (id and label): what a verdict
   * names as having put this writer on record, never read from the writer's own bytes; null for a writer
   * indexed before it was kept (issue 24.1)
   */
  token_id: z.string().nullable(),
  token_label: z.string().nullable(),
  /**
   * a chunk after the first came from another token than `token_id` (a session token minted from it
   * included): bytes another token appended are no record of this writer's own (issue 24.1)
   */
  mixed_tokens: z.boolean(),
  /**
   * the chained digest of the segment's chunks of [0, length) (lib/audit/chain.ts; GENESIS_CHAIN for
   * length 0); null for a writer indexed before chains were kept, until ingest recomputes it (issue 15.1)
   */
  chain: z.string().nullable(),
  created_at: Instant,
  updated_at: Instant,
});
export type WriterRecord = z.infer<typeof WriterRecord>;

/**
 * The writer index after a chunk is accepted: the writer's fields as `WriterRecord` has them (`provenance`
 * set with the writer's first chunk and kept after; `mixed_tokens` sticky, never set back to false), and
 * the chunk.
 */
export const WriterAdvance = WriterRecord.pick({
  length: true,
  lines: true,
  last_seq: true,
  ended: true,
  agent: true,
  provenance: true,
  token_id: true,
  token_label: true,
  mixed_tokens: true,
}).extend({
  /** the record of this chunk, `chain` included */
  chunk: ChunkRecord,
  /** the writer's chained digest after this chunk (= `chunk.chain`) */
  chain: z.string(),
  /**
   * mark the session due a digest now (`DigestIndex.listDigestsDue`): a writer's first chunk, its
   * writer.end, a chunk after its end, or the first chunk after a day without one (issue 15.2)
   */
  digest_due: z.boolean(),
  at: Instant,
  /** alert events of this chunk (a damaged record, lib/store/alerts.ts): written in the advance's transaction */
  outbox: z.array(OutboxEvent).optional(),
});
export type WriterAdvance = z.infer<typeof WriterAdvance>;

/** The writers of sessions and their chunk records. */
export interface WriterStore {
  getWriter(tenant: string, sid: string, w: string): Promise<WriterRecord | null>;
  listWriters(tenant: string, sid: string): Promise<WriterRecord[]>;
  getChunk(tenant: string, sid: string, w: string, offset: number): Promise<ChunkRecord | null>;
  /**
   * A writer's chunk records with `offset >= from`, by offset, at most `limit` (1..1000) of them: what an
   * upload compares its file's bytes with (SHA-256 per chunk) before it sends more.
   */
  listChunks(tenant: string, sid: string, w: string, from: number, limit: number): Promise<ChunkRecord[]>;
  /**
   * Advances the writer index from `fromLength` (0 and absent for a new writer) and records the chunk,
   * atomically; then counts it in the session index and the tenant's usage (SQLite: in the same
   * transaction; DynamoDB: right after it, outside it, issue 17.1: the writer item is the truth and
   * `getSession` reads it, listings may lag a moment). Resolves once both are done.
   * @throws StateConflictError (with the current length) when the stored length is not `fromLength`
   */
  advanceWriter(
    tenant: string,
    sid: string,
    w: string,
    fromLength: number,
    next: WriterAdvance,
  ): Promise<void>;
}
