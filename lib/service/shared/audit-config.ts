/**
 * The cadence of the signed session digests (issue 15.2, DESIGN §6b), in one place so a deployment (and a
 * test) can set it: how often a session with new chunks is attested, how the interval grows while nothing
 * changes (CloudTrail writes a digest every hour whatever happens; hansard doubles the wait instead, so an
 * idle session costs a few digests a day), and when a quiet session is closed.
 */

/** The digester's timing, in seconds. */
export interface AuditConfig {
  /** the wait after a digest that listed chunks: default 300 s */
  intervalSeconds: number;
  /** the longest wait: the interval doubles for each digest in a row with no chunk, up to this (86,400 s) */
  maxIntervalSeconds: number;
  /** a session with no chunk for this long is closed (next_due null): default 7 days */
  idleCloseSeconds: number;
  /**
   * an export (`POST …/digests`, `GET …/export` without `head`) of a session unchanged since its head
   * signs a new digest only when the head is at least this old, else answers the head: default 60 s.
   * Bounds what a read token can make the server store (issue 15 attack, digests-post-flood).
   */
  exportMinAgeSeconds: number;
}

/** 300 s, doubling up to a day, closed after 7 days without a chunk; an unchanged head re-signed for an export after 60 s. */
export const DEFAULT_AUDIT: AuditConfig = {
  intervalSeconds: 300,
  maxIntervalSeconds: 86_400,
  idleCloseSeconds: 7 * 86_400,
  exportMinAgeSeconds: 60,
};

/**
 * A writer whose last chunk is older than this marks its session due a digest with its next chunk
 * (`WriterAdvance.digest_due`), so a session woken after a day is attested at the next tick, not when its
 * doubled interval runs out.
 */
export const WRITER_QUIET_MS = 24 * 3600 * 1000;

/** How often `hansard serve` looks for sessions due a digest, in ms. */
export const DIGESTER_TICK_MS = 5_000;

/** The configuration in force: `DEFAULT_AUDIT` with the deployment's own values over it. */
export function resolveAudit(own: Partial<AuditConfig> | undefined): AuditConfig {
  return { ...DEFAULT_AUDIT, ...own };
}

/**
 * Seconds until the next digest after one that is the `unchanged`-th in a row without chunks (0: it
 * listed chunks): the interval doubled `unchanged` times, at most `maxIntervalSeconds`.
 */
export function nextInterval(config: AuditConfig, unchanged: number): number {
  return Math.min(config.intervalSeconds * 2 ** Math.min(unchanged, 40), config.maxIntervalSeconds);
}
