/**
 * The guards of whole-session reads (./replay-slots.ts says what they bound and why): a count of the
 * reads each token runs and the process's scan gate, one pair per `createApp`. Below ./auth.ts (whose
 * `AppServices` holds them) and ./replay-slots.ts (which takes a request's slot), so that neither imports
 * the other back.
 */
import { ScanGate } from '../service/shared/scan-gate.js';

/** Counts the whole-session reads each token has running. */
export class ReplaySlots {
  private readonly held = new Map<string, number>();

  /** How many reads `key` has running now. */
  inUse(key: string): number {
    return this.held.get(key) ?? 0;
  }

  /**
   * Takes a slot of `key` unless it already holds `cap`. Returns the function that gives it back (calling
   * it more than once gives back one slot only), or null when the cap is reached.
   */
  tryTake(key: string, cap: number): (() => void) | null {
    const n = this.inUse(key);
    if (n >= cap) return null;
    this.held.set(key, n + 1);
    let given = false;
    return () => {
      if (given) return;
      given = true;
      const left = this.inUse(key) - 1;
      if (left > 0) this.held.set(key, left);
      else this.held.delete(key);
    };
  }
}

/** The app's guards of whole-session reads: one per `createApp`. */
export interface WholeSessionReads {
  slots: ReplaySlots;
  gate: ScanGate;
}

/** Fresh guards (`gateSize`: passes at once in the process, default `DEFAULT_SCANS_AT_ONCE`). */
export function wholeSessionReads(gateSize?: number): WholeSessionReads {
  return { slots: new ReplaySlots(), gate: new ScanGate(gateSize) };
}
