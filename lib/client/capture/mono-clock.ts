/**
 * The `mono` clock of captured sessions (issue 11), shared by the Claude Code and Codex hooks: every hook
 * runs in a fresh process, so the clock lives in the session's mapping state.
 */

/** `mono` across processes: seconds since the session's first hook, never going back (DESIGN §3). */
export interface MonoClock {
  origin: number;
  last: number;
}

/**
 * A clock starting now. Its origin is one second back: the `writer.start` a new writer stamps with its
 * own clock (a few ms after its opening) must not be above the events that follow it.
 */
export function newMonoClock(): MonoClock {
  return { origin: performance.timeOrigin + performance.now() - 1000, last: 0 };
}

/**
 * The `mono` of this invocation's events: every hook runs in a fresh process, where the writer's own
 * monotonic clock would restart at 0 (verify: mono_backwards). Wall time since the session's origin,
 * held at the last value should the wall clock step back.
 */
export function tickMono(c: MonoClock): number {
  const now = Math.round((performance.timeOrigin + performance.now() - c.origin) * 1000) / 1e6;
  c.last = Math.max(c.last, now);
  return c.last;
}
