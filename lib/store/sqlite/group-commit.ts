/**
 * `GroupCommit`: a batcher for writes that each must be durable before they are answered (issue 16.3).
 * Items that arrive while a commit is in flight wait, and are committed together by the next one: one
 * transaction and one flush for all of them instead of one each, so the cost of the flush is shared by
 * everything that queued behind it (the classic group commit of databases). An item arriving when
 * nothing is in flight starts a commit at once (after the current microtasks, so items enqueued in the
 * same turn go together): a lone writer waits for nothing.
 *
 * The commit function answers each item on its own (`Settled`): one item's failure (a conflict) fails
 * only that item's promise. A commit function that throws fails every item of its batch (e.g. the disk
 * refused the transaction's commit: none of them was committed).
 */

/** One item's outcome in a batch. */
export type Settled<R> = { ok: true; value: R } | { ok: false; error: unknown };

/** Counters of what `GroupCommit` did, for tests and benchmarks. */
export interface GroupCommitStats {
  /** commits run */
  batches: number;
  /** items committed or failed through them */
  items: number;
  /** the most items one commit took */
  largest: number;
}

export class GroupCommit<I, R> {
  private queue: Array<{ item: I; resolve: (r: R) => void; reject: (e: unknown) => void }> = [];
  private inFlight: Promise<void> | null = null;
  readonly stats: GroupCommitStats = { batches: 0, items: 0, largest: 0 };

  /**
   * @param commit commits a batch (1..maxBatch items, in arrival order) and answers each item, in order:
   *   its promise resolves only once the batch is durable
   * @param maxBatch the most items one commit takes; more wait for the next (bounds a commit's latency)
   */
  constructor(
    private readonly commit: (items: I[]) => Promise<Array<Settled<R>>>,
    private readonly maxBatch = 256,
  ) {}

  /**
   * Queues `item` for the next commit. Resolves with its value once its batch is committed; rejects with
   * its own error, or with the commit's error when the whole batch failed.
   */
  enqueue(item: I): Promise<R> {
    return new Promise<R>((resolve, reject) => {
      this.queue.push({ item, resolve, reject });
      if (!this.inFlight) this.inFlight = this.run();
    });
  }

  /** Resolves when nothing is queued or in flight (e.g. before the store closes). */
  async idle(): Promise<void> {
    while (this.inFlight) await this.inFlight;
  }

  /** Commits batches until the queue is empty. Never rejects: each item's promise carries its outcome. */
  private async run(): Promise<void> {
    // Let the requests of this turn join the first batch.
    await Promise.resolve();
    try {
      while (this.queue.length > 0) {
        const batch = this.queue.splice(0, this.maxBatch);
        this.stats.batches += 1;
        this.stats.items += batch.length;
        this.stats.largest = Math.max(this.stats.largest, batch.length);
        let results: Array<Settled<R>>;
        try {
          results = await this.commit(batch.map((b) => b.item));
        } catch (err) {
          for (const b of batch) b.reject(err);
          continue;
        }
        batch.forEach((b, i) => {
          const r = results[i];
          if (!r) b.reject(new Error('group commit: the commit gave no answer for this item'));
          else if (r.ok) b.resolve(r.value);
          else b.reject(r.error);
        });
      }
    } finally {
      this.inFlight = null;
    }
  }
}
