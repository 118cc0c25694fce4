/**
 * The gate of the passes that read a whole session without a client to hold them back (issue 8): the
 * corrections pass of a replay (pass 1, before its first byte), and verify, inspect and attribution. They
 * read as fast as the disk allows, and each holds a few MiB of reads while it runs; two hundred at once
 * took the local server to gigabytes and seconds-long `/healthz`. At most `size` run at once in a process;
 * the others wait their turn in order, holding nothing. A streaming pass (the merge of a replay, a segment
 * download) is not gated: the client's pace bounds it.
 */
import { Semaphore } from 'async-mutex';

/** Whole-session passes one server process runs at once by default. */
export const DEFAULT_SCANS_AT_ONCE = 4;

export class ScanGate {
  private readonly semaphore: Semaphore;

  /** @param size passes at once (1 or more) */
  constructor(readonly size: number = DEFAULT_SCANS_AT_ONCE) {
    this.semaphore = new Semaphore(Math.max(1, Math.floor(size)));
  }

  /**
   * Runs `pass` once a place is free, and frees it when `pass` settles.
   * @param signal a caller gone while waiting leaves the queue: `run` rejects with the signal's reason and
   *   `pass` never runs
   */
  async run<T>(pass: () => Promise<T>, signal?: AbortSignal): Promise<T> {
    signal?.throwIfAborted();
    const acquiring = this.semaphore.acquire();
    let release: () => void;
    if (signal) {
      let onAbort = () => {};
      const aborted = new Promise<never>((_, reject) => {
        onAbort = () => reject(signal.reason);
        signal.addEventListener('abort', onAbort, { once: true });
      });
      try {
        [, release] = await Promise.race([acquiring, aborted]);
      } catch (err) {
        // Its turn still comes: give the place straight back then.
        void acquiring.then(([, r]) => r());
        throw err;
      } finally {
        signal.removeEventListener('abort', onAbort);
      }
    } else {
      [, release] = await acquiring;
    }
    try {
      return await pass();
    } finally {
      release();
    }
  }
}
