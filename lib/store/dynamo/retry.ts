/**
 * Retries of the DynamoDB adapter's requests (issue 17.1, docs/adr/0008-no-hot-keys-on-ingest.md):
 * throttling (`ProvisionedThroughputExceededException`, `ThrottlingException`, `RequestLimitExceeded`, a
 * transaction cancelled for `ThrottlingError`) and conflicts (`TransactionConflictException`, a
 * transaction cancelled for `TransactionConflict` only) are tried again after a full-jitter exponential
 * backoff, through p-retry; anything else, and a condition that failed, is thrown at once as the SDK gave
 * it. Nothing of a cancelled or throttled request was written, so sending it again is safe.
 *
 * The SDK retries throttling itself (3 attempts, its own backoff) before an error reaches here; these
 * retries come on top and are the ones counted (`RetryCounts`), for the tests and the bench to report.
 */
import pRetry, { AbortError } from 'p-retry';
import { cancellationCodes, errorName } from './items.js';

/** What the adapter retried, since the store was made. */
export interface RetryCounts {
  /** attempts tried again after a transaction conflict (`TransactionConflict`) */
  conflicts: number;
  /** attempts tried again after throttling */
  throttles: number;
  /** requests that failed for a retryable reason after their last attempt */
  exhausted: number;
  /**
   * counter updates after a committed advance (session counters, tenant usage, board position) that
   * failed for good: their counts were kept on a pending item for a sweep to apply (dynamo/pending.ts);
   * and token usage follow-ups that failed for good, kept on the writer's usage item (dynamo/usage.ts)
   */
  deferred: number;
}

/** A fresh set of counts, all 0. */
export function newRetryCounts(): RetryCounts {
  return { conflicts: 0, throttles: 0, exhausted: 0, deferred: 0 };
}

/** How often and how patiently one kind of request is tried. */
export interface RetryPolicy {
  /** tries in all, the first included (≥ 1) */
  attempts: number;
  /** the cap of the first backoff, ms; each later one doubles, up to `capMs` */
  baseMs: number;
  capMs: number;
}

/**
 * Transactions (the writer advance, status reports, digest heads): 10 tries over at most ~5 s of backoff,
 * enough for the first chunks of 100 writers of one session, which all write its digest due mark.
 */
export const TRANSACT_RETRY: RetryPolicy = { attempts: 10, baseMs: 20, capMs: 1000 };
/** Single-item writes and reads (counter updates, merges): 8 tries, ~3 s of backoff at most. */
export const ITEM_RETRY: RetryPolicy = { attempts: 8, baseMs: 20, capMs: 800 };

const THROTTLE_NAMES = new Set([
  'ProvisionedThroughputExceededException',
  'ThrottlingException',
  'RequestLimitExceeded',
]);

/**
 * Why `err` may be retried: `conflict`, `throttle`, or null for an error that must not be (a failed
 * condition, a validation error, a missing table…). A cancelled transaction is retried only when no
 * item's condition failed and every reason is a conflict, throttling or `None`.
 */
export function retryReason(err: unknown): 'conflict' | 'throttle' | null {
  const name = errorName(err);
  if (name !== undefined && THROTTLE_NAMES.has(name)) return 'throttle';
  if (name === 'TransactionConflictException') return 'conflict';
  const codes = cancellationCodes(err);
  if (codes.length === 0) return null;
  const retryable = new Set([
    'None',
    'TransactionConflict',
    'ThrottlingError',
    'ProvisionedThroughputExceeded',
  ]);
  if (!codes.every((c) => retryable.has(c))) return null;
  if (codes.includes('TransactionConflict')) return 'conflict';
  return codes.some((c) => c !== 'None') ? 'throttle' : null;
}

/**
 * `send()`, tried again per `policy` while it fails for a `retryReason`, each retry counted in `counts`.
 * The backoff before retry n (1, 2, …) is uniform in [0, min(capMs, baseMs · 2ⁿ⁻¹)] ("full jitter"), so
 * requests that conflicted once do not meet again in step.
 * @throws the last error when it is not retryable or the attempts are spent (`counts.exhausted` + 1)
 */
export async function withRetry<T>(
  send: () => Promise<T>,
  counts: RetryCounts,
  policy: RetryPolicy = ITEM_RETRY,
): Promise<T> {
  return pRetry(
    async () => {
      try {
        return await send();
      } catch (err) {
        if (retryReason(err) === null) throw new AbortError(err as Error);
        throw err;
      }
    },
    {
      retries: policy.attempts - 1,
      minTimeout: 0,
      onFailedAttempt: async ({ error, attemptNumber, retriesLeft }) => {
        if (retriesLeft <= 0) {
          counts.exhausted += 1;
          return;
        }
        if (retryReason(error) === 'conflict') counts.conflicts += 1;
        else counts.throttles += 1;
        const cap = Math.min(policy.capMs, policy.baseMs * 2 ** (attemptNumber - 1));
        await new Promise((r) => setTimeout(r, Math.random() * cap));
      },
    },
  );
}
