/**
 * The writer's chained digest at ingest (issue 15.1, DESIGN §6b): each accepted chunk's SHA-256 is
 * chained to the writer's previous chain (lib/audit/chain.ts `nextChain`), and ingest decides whether the
 * chunk makes the session due a signed digest at once (`WriterAdvance.digest_due`).
 */
import { GENESIS_CHAIN, nextChain } from '../../audit/chain.js';
import type { ChunkRecord, WriterRecord, WriterStore } from '../../store/index.js';
import { WRITER_QUIET_MS } from '../shared/audit-config.js';
import { AppError } from '../shared/errors.js';

/** Chunk records read per `listChunks` call (the port's maximum). */
const PAGE = 1000;

/**
 * The chain of a writer's indexed bytes [0, length): GENESIS_CHAIN for a new writer, its record's `chain`,
 * or, for a writer indexed before chains were kept (`chain` null), the chain recomputed from its chunk
 * records (every page of `listChunks`); ingest then stores it with the next chunk, so this runs once.
 * @throws AppError `storage_layout` (500) when the chunk records do not tile [0, length) (a gap, an
 *   overlap or a missing record): no chain can be claimed for bytes the index cannot account for
 */
export async function chainBefore(
  state: Pick<WriterStore, 'listChunks'>,
  tenant: string,
  sid: string,
  current: WriterRecord | null,
): Promise<string> {
  if (current === null || current.length === 0) return GENESIS_CHAIN;
  if (current.chain !== null) return current.chain;
  return (await chunksBetween(state, tenant, sid, current.w, 0, GENESIS_CHAIN, current.length)).chain;
}

/**
 * The chain from `from` (whose chain is `start`) to `end`, over the writer's chunk records, and those
 * records (by offset). The records must tile [from, end) exactly.
 * @throws AppError `storage_layout` when they do not
 */
export async function chunksBetween(
  state: Pick<WriterStore, 'listChunks'>,
  tenant: string,
  sid: string,
  w: string,
  from: number,
  start: string,
  end: number,
): Promise<{ chain: string; chunks: ChunkRecord[] }> {
  const chunks: ChunkRecord[] = [];
  let chain = start;
  let at = from;
  while (at < end) {
    const page = await state.listChunks(tenant, sid, w, at, PAGE);
    if (page.length === 0) throw untiled(sid, w, at);
    for (const c of page) {
      if (at >= end) break;
      if (c.offset !== at || c.offset + c.length > end) throw untiled(sid, w, at);
      chain = nextChain(chain, c.offset, c.length, c.sha256);
      chunks.push(c);
      at = c.offset + c.length;
    }
  }
  return { chain, chunks };
}

function untiled(sid: string, w: string, at: number): AppError {
  return new AppError(
    'storage_layout',
    `the index of writer ${w} of session ${sid} has no chunk record at byte offset ${at}, so its chained digest cannot be computed: see docs/operations.md`,
    { w, offset: at },
  );
}

/**
 * Whether this chunk makes the session due a signed digest at the next tick (issue 15.2): the writer's
 * first chunk, a chunk holding its writer.end, a chunk to a writer that has ended, or its first chunk
 * after a day without one (`WRITER_QUIET_MS`). Other chunks wait for the session's cadence.
 */
export function digestDueAfter(current: WriterRecord | null, endsNow: boolean, now: Date): boolean {
  if (current === null || current.length === 0) return true;
  if (endsNow || current.ended) return true;
  return now.getTime() - Date.parse(current.updated_at) > WRITER_QUIET_MS;
}
