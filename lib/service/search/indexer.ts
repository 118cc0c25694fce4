/**
 * Indexing (issue 30 item 5, DESIGN §6d): one queue entry at a time, from the stored segments and records,
 * never from what a request carried. Idempotent and safe to run at least once per entry, from any number
 * of processes: a writer's new bytes are read from the engine's own indexed length to the writer's indexed
 * length, and `applyWriter` takes a batch only at the length it was read from; a session's facts are
 * replaced whole. So a lost notification is caught up by the next one of that writer, and a reindex
 * (dropping the session, then queueing its writers) gives what indexing as it arrived gave.
 */
import type { SegmentStore, StateStore } from '../../store/index.js';
import {
  SearchCauseSchema,
  SearchDocSchema,
  SearchFixSchema,
  type SearchIndex,
  type WriterBatch,
} from '../../store/search.js';
import { docsOfEvent, recordOf, reportDocs, searchText, type WriterFacts } from './docs.js';

/** What indexing needs: the stores it reads and the engine it writes. */
export interface IndexerDeps {
  segments: SegmentStore;
  state: StateStore;
  index: SearchIndex;
  now: () => Date;
}

/**
 * Bytes of a writer's segment per batch: memory stays bounded for a writer of any size, and SQLite's
 * synchronous transaction of one batch (~10,000 documents/s) holds the local server's event loop for
 * tens of ms at most, so a chunk's 201 never waits long behind indexing.
 */
export const BATCH_BYTES = 128 * 1024;
/** Work items of a session indexed (the newest). */
const WORK_ITEMS = 100;

/** A queue entry as the indexer needs it: a writer (`w`), or the session's facts (`w` = ''). */
export interface IndexTarget {
  tenant: string;
  sid: string;
  w: string;
}

/**
 * Indexes what `target` names. Resolves when the index holds everything stored for it at the start
 * (or another process indexed it meanwhile).
 * @throws what the stores or the engine throw (the entry stays queued and is tried again)
 */
export async function indexQueued(deps: IndexerDeps, target: IndexTarget): Promise<void> {
  if (target.w === '') await indexFacts(deps, target.tenant, target.sid);
  else await indexWriter(deps, target);
}

/** The session's state, title and reports (`putSessionFacts`). */
export async function indexFacts(deps: IndexerDeps, tenant: string, sid: string): Promise<void> {
  const [status, work, title] = await Promise.all([
    deps.state.getStatus(tenant, sid),
    deps.state.listWork(tenant, { session: sid, limit: WORK_ITEMS }),
    titleOf(deps.state, tenant, sid),
  ]);
  await deps.index.putSessionFacts({
    tenant,
    sid,
    state: status?.reports.at(-1)?.state ?? null,
    title: title === null ? null : searchText(title),
    reports: reportDocs(sid, status, work),
  });
}

/** The session's title as the board shows it (its first prompt as corrected, else its first note). */
async function titleOf(state: StateStore, tenant: string, sid: string): Promise<string | null> {
  if (state.boardCopies) {
    const copy = (await state.boardCopies(tenant, [sid])).get(sid);
    return copy ? (copy.title ?? copy.first_note ?? null) : null;
  }
  // SQLite: the listing is one local query, cached by revision (lib/store/sqlite/summary.ts).
  const s = (await state.listSessionSummaries(tenant)).find((x) => x.sid === sid);
  return s ? (s.title ?? s.first_note ?? null) : null;
}

/**
 * A writer's bytes from the engine's indexed length to the store's, `BATCH_BYTES` at a time. A batch the
 * engine refuses (another pass moved the indexed length meanwhile) starts it over from the new length:
 * that pass may have read a shorter segment than this one, and this one's entry leaves the queue once it
 * returns (SEARCH-QUEUE-RACE, test/attack/search-queue.test.ts). Each refusal means another pass advanced
 * the length, so this ends.
 */
async function indexWriter(deps: IndexerDeps, target: IndexTarget): Promise<void> {
  // Refused: read the writer and the indexed length again. Bounded all the same: an engine that refuses
  // at the length it answers would otherwise hold the drain here; the entry is tried again later.
  for (let tries = 0; tries < MAX_TRIES; tries++) {
    if (await indexWriterOnce(deps, target)) return;
  }
  throw new Error(`the index refused ${MAX_TRIES} batches of ${target.sid}/${target.w} in a row`);
}

/** Longest pause between two batches of a backlog, in ms (see `indexWriterOnce`). */
const MAX_PAUSE_MS = 200;

/** Passes of one writer in a row whose batch another pass overtook, before the entry is left for later. */
const MAX_TRIES = 50;

/** One try of `indexWriter`: true once indexed to the stored length, false when a batch was refused. */
async function indexWriterOnce(deps: IndexerDeps, { tenant, sid, w }: IndexTarget): Promise<boolean> {
  const record = await deps.state.getWriter(tenant, sid, w);
  if (!record) return true;
  let from = await deps.index.indexedLength(tenant, sid, w);
  if (from >= record.length) return true;
  const facts: WriterFacts = { agent: record.agent };
  const key = { tenant, sid, w };
  let batch: WriterBatch = newBatch(tenant, sid, w, from);
  let batchStarted = performance.now();
  let pending: Uint8Array = new Uint8Array(0);
  let pos = from; // the segment offset of pending[0]
  for await (const piece of deps.segments.readSegment(key, record.length, from)) {
    pending = pending.length === 0 ? piece : concat(pending, piece);
    let start = 0;
    for (let nl = pending.indexOf(0x0a); nl !== -1; nl = pending.indexOf(0x0a, start)) {
      const offset = pos + start;
      const line = pending.subarray(start, nl);
      start = nl + 1;
      const rec = recordOf(line, offset);
      batch.toLength = pos + start;
      if (rec) {
        const made = docsOfEvent(rec, facts);
        batch.docs.push(...fitting(made.docs, SearchDocSchema));
        batch.fixes.push(...fitting(made.fixes, SearchFixSchema));
        batch.causes.push(...fitting(made.causes, SearchCauseSchema));
      }
      if (batch.toLength - batch.fromLength >= BATCH_BYTES) {
        if (!(await deps.index.applyWriter(batch))) return false;
        from = batch.toLength;
        batch = newBatch(tenant, sid, w, from);
        // A backlog (a large upload, a reindex) is indexed at half the process at most: as long again as
        // the batch took, up to `MAX_PAUSE_MS`, goes to the requests waiting meanwhile (the local server
        // serves from the same event loop: a 75 MiB upload's indexing held /healthz seconds without it).
        const spent = performance.now() - batchStarted;
        await new Promise((resolve) => setTimeout(resolve, Math.min(MAX_PAUSE_MS, Math.max(1, spent))));
        batchStarted = performance.now();
      }
    }
    pos += start;
    pending = pending.subarray(start);
  }
  return batch.toLength > batch.fromLength ? deps.index.applyWriter(batch) : true;
}

/**
 * What of one line's documents, fixes or causes the engine's schemas take, so that no line can fail its
 * writer's batch on every try (SEARCH-POISON-LINE, test/attack/search-poison.test.ts: ingest stores a line
 * dated after 2255, or with a `seq` of -1 or past 2^53): an instant past the safe integers (`at_us`) is
 * unknown (null), as an unreadable `ts` is; what the schema still refuses is left out, as a line that
 * does not parse is (the timeline shows it; the index cannot key it).
 */
function fitting<T>(items: T[], schema: { safeParse(v: unknown): { success: boolean } }): T[] {
  const out: T[] = [];
  for (const item of items) {
    const at = (item as { at_us?: unknown }).at_us;
    const fixed = typeof at === 'number' && !Number.isSafeInteger(at) ? { ...item, at_us: null } : item;
    if (schema.safeParse(fixed).success) out.push(fixed);
  }
  return out;
}

function newBatch(tenant: string, sid: string, w: string, from: number): WriterBatch {
  return { tenant, sid, w, fromLength: from, toLength: from, docs: [], fixes: [], causes: [] };
}

function concat(a: Uint8Array, b: Uint8Array): Uint8Array {
  const out = new Uint8Array(a.length + b.length);
  out.set(a, 0);
  out.set(b, a.length);
  return out;
}
