/**
 * What search needs beyond the stores (issue 30): the engine, the local indexing queue, and the time a
 * query may take. lib/deploy wires them: SQLite FTS5 and the state store's queue locally, PostgreSQL over
 * the RDS Data API on AWS (whose queue is the state table's stream, so `queue` is null there).
 */
import type { SearchIndex, SearchQueue } from '../../store/search.js';

export interface SearchDeps {
  index: SearchIndex;
  /** the local queue (SQLite); null where the queue is the platform's (AWS: the DynamoDB stream) */
  queue: SearchQueue | null;
  /** how long one query may run, in ms, before the engine cancels it (PostgreSQL's `statement_timeout`) */
  timeoutMs: number;
}

/** A query's time limit when the deployment sets none, in ms. */
export const DEFAULT_SEARCH_TIMEOUT_MS = 3000;
