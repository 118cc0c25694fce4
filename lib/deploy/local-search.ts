/**
 * Search of the local deployment (issue 30 items 4, 5): SQLite FTS5 in the state store's own database
 * (`{data}/state.sqlite`) and the indexing queue the store fills in the same transactions as the changes
 * it indexes, drained by the server (`SearchDrain`).
 */
import { DEFAULT_SEARCH_TIMEOUT_MS, type SearchDeps } from '../service/search/deps.js';
import { SearchDrain } from '../service/search/drain.js';
import type { SegmentStore, StateStore } from '../store/index.js';
import type { SearchIndex, SearchQueue } from '../store/search.js';

/** A state store that holds a search index and queue (SqliteStateStore, or a test's wrapper of one). */
type SearchingState = StateStore & SearchQueue & { searchIndex(): SearchIndex };

function isSearching(state: StateStore): state is SearchingState {
  const s = state as Partial<SearchingState>;
  return typeof s.searchIndex === 'function' && typeof s.takeSearchQueue === 'function';
}

/** The search deps over `state`'s database; null for a state store that has none (DynamoDB). */
export function localSearch(state: StateStore): SearchDeps | null {
  if (!isSearching(state)) return null;
  return { index: state.searchIndex(), queue: state, timeoutMs: DEFAULT_SEARCH_TIMEOUT_MS };
}

/**
 * The drain of `search`'s queue over the local stores, started (null when there is no queue). The caller
 * stops it before it closes the state store.
 */
export function startSearchDrain(
  stores: { segments: SegmentStore; state: StateStore },
  search: SearchDeps | null,
  log: (message: string, err: unknown) => void,
  pollMs?: number,
): SearchDrain | null {
  if (!search?.queue) return null;
  const drain = new SearchDrain({
    deps: { segments: stores.segments, state: stores.state, index: search.index, now: () => new Date() },
    queue: search.queue,
    log,
    ...(pollMs !== undefined ? { pollMs } : {}),
  });
  drain.start();
  return drain;
}
