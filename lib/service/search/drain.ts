/**
 * The local indexing drain (issue 30 item 5): the server takes the state store's search queue (a SQLite
 * table written in the same transaction as each chunk's index advance and each status or work write) and
 * indexes each entry, off the ingest path: a slow index never slows a chunk's 201. An entry leaves the
 * queue only once indexed, and only if no change came meanwhile (`doneSearchQueue`'s version), so nothing
 * accepted is missed, across restarts and crashes included. A failing entry is tried again with backoff
 * (1 s doubling to 60 s) while the others go on.
 */
import type { SearchQueue, SearchQueueEntry } from '../../store/search.js';
import { type IndexerDeps, indexQueued } from './indexer.js';

/** Entries taken per pass. */
const TAKE = 64;
/** How often an idle drain looks at the queue, in ms: the lag a change waits at most before indexing starts. */
export const DRAIN_POLL_MS = 250;

export interface SearchDrainOptions {
  deps: IndexerDeps;
  queue: SearchQueue;
  /** where a failed entry is reported (the server's log) */
  log?: (message: string, err: unknown) => void;
  pollMs?: number;
}

/** Drains the search queue (see the module comment). `start()` once; `stop()` waits for the pass in flight. */
export class SearchDrain {
  private timer: NodeJS.Timeout | null = null;
  private running: Promise<void> | null = null;
  private stopped = true;
  /** entries that failed: when to try each again, and its current backoff (ms) */
  private readonly retry = new Map<string, { at: number; backoff: number }>();

  constructor(private readonly o: SearchDrainOptions) {}

  start(): void {
    if (!this.stopped) return;
    this.stopped = false;
    this.schedule(0);
  }

  async stop(): Promise<void> {
    this.stopped = true;
    if (this.timer) clearTimeout(this.timer);
    this.timer = null;
    await this.running;
  }

  /**
   * One pass: indexes every entry in the queue now (not those waiting for a retry). Answers how many were
   * indexed. Tests call it directly instead of waiting for the timer.
   */
  async runOnce(): Promise<number> {
    let done = 0;
    for (;;) {
      // Past the entries waiting for a retry: however many keep failing at the head of the queue (the
      // oldest), the others go on (SEARCH-POISON-QUEUE, test/attack/search-poison.test.ts).
      const taken = await this.o.queue.takeSearchQueue(TAKE + this.retry.size);
      const entries = taken.filter((e) => this.due(e)).slice(0, TAKE);
      if (entries.length === 0) return done;
      for (const e of entries) if (await this.indexOne(e)) done += 1;
      if (entries.length < TAKE) return done;
    }
  }

  private due(e: SearchQueueEntry): boolean {
    const r = this.retry.get(keyOf(e));
    return !r || r.at <= this.o.deps.now().getTime();
  }

  private async indexOne(e: SearchQueueEntry): Promise<boolean> {
    const k = keyOf(e);
    try {
      await indexQueued(this.o.deps, e);
      await this.o.queue.doneSearchQueue(e);
      this.retry.delete(k);
      return true;
    } catch (err) {
      const backoff = Math.min(60_000, (this.retry.get(k)?.backoff ?? 500) * 2);
      this.retry.set(k, { at: this.o.deps.now().getTime() + backoff, backoff });
      this.o.log?.(
        `search: indexing ${e.sid} ${e.w || '(facts)'} of ${e.tenant} failed, again in ${backoff / 1000} s`,
        err,
      );
      return false;
    }
  }

  private schedule(ms: number): void {
    if (this.stopped) return;
    this.timer = setTimeout(() => {
      this.timer = null;
      this.running = this.runOnce()
        .catch((err) => this.o.log?.('search: the indexing queue could not be read', err))
        .then(() => {
          this.running = null;
          this.schedule(this.o.pollMs ?? DRAIN_POLL_MS);
        });
    }, ms);
    // The drain alone never keeps the process alive (a CLI that opened the app, a test).
    this.timer.unref();
  }
}

function keyOf(e: SearchQueueEntry): string {
  return `${e.tenant}\u0000${e.sid}\u0000${e.w}`;
}
