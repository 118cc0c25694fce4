/**
 * The service's configurable limits (DESIGN §7, issue 5): lines per chunk and the per-tenant storage
 * quota (the deployment's; a tenant may have its own, DESIGN §6c, lib/service/tenants/limits.ts), and the chunk body limit (at most 5 MiB, DESIGN §7; lower behind a gateway that needs it); and
 * the whole-session reads a token may run at once and how long a streamed answer may wait for its client
 * (issue 8). A deployment passes its own values through `createApp({ limits })` (`hansard serve
 * --quota-bytes`, `--max-concurrent-replays`, `--stream-idle-seconds`, the Lambda environment); anything it
 * leaves out takes the default below.
 */

/** The limits ingest and the whole-session reads enforce. */
export interface Limits {
  /**
   * most bytes one chunk body may hold (DESIGN §7: 5 MiB). A deployment behind a smaller gateway lowers it
   * (on AWS 4 MiB: API Gateway hands a binary body to Lambda base64-encoded, and Lambda takes 6 MB).
   * Clients read it from `GET /healthz` and size their chunks to it.
   */
  maxChunkBytes: number;
  /** most lines (events) one chunk may hold; more is refused with 413 `too_many_lines` */
  maxChunkLines: number;
  /**
   * bytes of segments a tenant may store in all (the sum of its writers' lengths); a chunk that would
   * pass it is refused with 413 `quota_exceeded`. null: no quota. The deployment's: a tenant whose record
   * has a `quota_bytes` of its own is held to that instead (lib/service/tenants/limits.ts, issue 17.1).
   */
  tenantQuotaBytes: number | null;
  /**
   * ms a tenant's own limits (its quota and rate, `StateStore.getTenantSettings`) are taken from this
   * process's copy before they are read again (default 30 s): `hansard tenant set` applies within it, and
   * a chunk or a request pays no read for them in between (lib/service/tenants/limits.ts)
   */
  tenantSettingsMaxAgeMs: number;
  /**
   * most whole-session reads (replay, segment download, verify, inspect, attribution) one token may run
   * at once; one more is refused with 429 `too_many_replays` (issue 8, docs/operations.md)
   */
  maxConcurrentReplays: number;
  /**
   * ms a streamed answer (replay, segment download) waits for a client that takes none of its bytes: past
   * it the answer is aborted, its files closed and its replay slot given back (docs/operations.md "Replay
   * caps and abandoned requests"). A client reading slowly but steadily is never cut off.
   */
  streamIdleMs: number;
  /**
   * bytes of segment blocks one replay response reads ahead, spread over the session's writers (a block is
   * 16 KiB to 1 MiB a writer; lib/log/read/segment-blocks.ts). Small on a server that holds many responses at
   * once (256 KiB, issue 8); large where a process serves one replay at a time from a store far away
   * (the replay function on S3: 16 MiB, issue 16.4), since each block is a ranged GET of the store.
   */
  replayReadBytes: number;
}

/** Largest chunk body any deployment takes, in bytes (DESIGN §4, §7: 5 MiB); a deployment may set less. */
export const MAX_CHUNK_BYTES = 5 * 1024 * 1024;
/** Most lines one chunk holds by default (DESIGN §7, issue 5); more is refused with 413 `too_many_lines`. */
export const MAX_CHUNK_LINES = 10_000;

/**
 * 5 MiB and 10,000 lines per chunk, 10 GiB per tenant (its own settings read at most every 30 s), 4
 * whole-session reads at once per token, 60 s for a client to take some of a streamed answer, and 256 KiB
 * read ahead per replay response.
 */
export const DEFAULT_LIMITS: Limits = {
  maxChunkBytes: MAX_CHUNK_BYTES,
  maxChunkLines: MAX_CHUNK_LINES,
  tenantQuotaBytes: 10 * 1024 ** 3,
  tenantSettingsMaxAgeMs: 30_000,
  maxConcurrentReplays: 4,
  streamIdleMs: 60_000,
  replayReadBytes: 256 * 1024,
};

/** The limits in force: `DEFAULT_LIMITS` with the deployment's own values over them. */
export function resolveLimits(own: Partial<Limits> | undefined): Limits {
  return {
    maxChunkBytes: Math.min(own?.maxChunkBytes ?? DEFAULT_LIMITS.maxChunkBytes, DEFAULT_LIMITS.maxChunkBytes),
    maxChunkLines: own?.maxChunkLines ?? DEFAULT_LIMITS.maxChunkLines,
    tenantQuotaBytes:
      own?.tenantQuotaBytes === undefined ? DEFAULT_LIMITS.tenantQuotaBytes : own.tenantQuotaBytes,
    tenantSettingsMaxAgeMs: own?.tenantSettingsMaxAgeMs ?? DEFAULT_LIMITS.tenantSettingsMaxAgeMs,
    maxConcurrentReplays: own?.maxConcurrentReplays ?? DEFAULT_LIMITS.maxConcurrentReplays,
    streamIdleMs: own?.streamIdleMs ?? DEFAULT_LIMITS.streamIdleMs,
    replayReadBytes: own?.replayReadBytes ?? DEFAULT_LIMITS.replayReadBytes,
  };
}

const UNITS: Record<string, number> = { '': 1, k: 1024, m: 1024 ** 2, g: 1024 ** 3, t: 1024 ** 4 };

/**
 * A byte count as an operator writes it: digits, optionally followed by a binary unit (`512MiB`, `10GiB`,
 * `1T`; `K`/`KiB`, `M`/`MiB`, `G`/`GiB`, `T`/`TiB`, case-insensitive). Returns null for anything else.
 * @example parseByteSize('10GiB') // 10737418240
 */
export function parseByteSize(text: string): number | null {
  const m = /^\s*(\d{1,16})\s*(?:([kmgt])(?:i?b)?|b)?\s*$/i.exec(text);
  if (!m) return null;
  const n = Number(m[1]) * UNITS[(m[2] ?? '').toLowerCase()]!;
  return Number.isSafeInteger(n) ? n : null;
}

/**
 * A byte count as `parseByteSize` reads it back: the largest binary unit it is a whole number of
 * (`1048576` → `1 MiB`, `10737418240` → `10 GiB`), else plain bytes (`1500` → `1500`).
 */
export function formatByteSize(bytes: number): string {
  for (const [unit, size] of [
    ['TiB', UNITS.t!],
    ['GiB', UNITS.g!],
    ['MiB', UNITS.m!],
    ['KiB', UNITS.k!],
  ] as const) {
    if (bytes >= size && bytes % size === 0) return `${bytes / size} ${unit}`;
  }
  return String(bytes);
}
