/**
 * When a failed delivery is tried again (issue 28 item 4): exponential backoff with jitter, for a day,
 * then a dead letter. The n-th retry waits `min(1 h, 30 s × 2^(n-1))`, a random part of it ("equal jitter":
 * between half and all of it), so that a target back after an outage is not hit by every sender at once.
 */

/** The first retry's wait, ms. */
export const RETRY_BASE_MS = 30_000;
/** The longest wait between two attempts, ms. */
export const RETRY_CAP_MS = 3_600_000;

/**
 * The wait before attempt `attempts + 1`, after `attempts` failed ones (1 or more), ms.
 * @param random a number in [0, 1) (Math.random; tests fix it)
 */
export function retryDelayMs(attempts: number, random: number = Math.random()): number {
  const full = Math.min(RETRY_CAP_MS, RETRY_BASE_MS * 2 ** Math.max(0, attempts - 1));
  return Math.round(full / 2 + (full / 2) * random);
}

/**
 * The next try after a failed attempt, or null when the delivery has been tried for `retryForMs` since it
 * was first due (it goes to the dead letter).
 */
export function nextTry(
  firstDueAt: string,
  attempts: number,
  now: Date,
  retryForMs: number,
  random: number = Math.random(),
): string | null {
  const deadline = Date.parse(firstDueAt) + retryForMs;
  if (now.getTime() >= deadline) return null;
  return new Date(Math.min(deadline, now.getTime() + retryDelayMs(attempts, random))).toISOString();
}
