/**
 * The ports of stored replays of large sessions (issue 17.2, DESIGN §6c; the verbs in ./large-replay.ts):
 * where copies are kept, how builds run elsewhere, and a deployment's settings (`ServiceDeps.largeReplays`).
 * Below the verbs so that the context that carries them (./context.ts) imports no verb.
 */
import { z } from 'zod';
import { SessionId } from '../../contract/ids.js';

/** A stored replay as a client fetches it. */
export interface ArchivedReplay {
  /** a URL that GETs the replay's bytes without a token, until `expires_at` */
  url: string;
  bytes: number;
  /** ISO 8601 */
  expires_at: string;
}

/**
 * Where stored replays are kept (on AWS: S3, lib/store/s3/replay-archive.ts). Keys are `replayArchiveKey`'s;
 * an adapter may put them under a prefix of its own.
 */
export interface ReplayArchive {
  /** The stored replay `key` with a URL valid `ttlSeconds`, or null when there is none (yet). */
  find(key: string, ttlSeconds: number): Promise<ArchivedReplay | null>;
  /**
   * Stores `body` as `key`, streamed (memory stays bounded whatever its size), never replacing a stored
   * one: when `key` already exists (another build finished first) it resolves all the same. A failure
   * leaves no object under `key`. @throws the store's error
   */
  store(key: string, body: AsyncIterable<Uint8Array | string>, contentType: string): Promise<void>;
}

/**
 * What a build needs to run elsewhere (the builder function): who asked, and what. `caller` is the
 * requester's token as the builder acts for it: its id, scopes and session binding.
 */
export const ReplayJob = z.object({
  tenant: z.string().min(1),
  sid: SessionId,
  format: z.enum(['ndjson', 'text']),
  raw: z.boolean(),
  caller: z.object({ id: z.string(), scopes: z.array(z.string()), session: SessionId.nullable() }),
});
export type ReplayJob = z.infer<typeof ReplayJob>;

/** How the newest build of a replay variant (`replayVariant`) stands. */
export type BuildState =
  | { state: 'building'; started_at: string }
  | { state: 'done'; started_at: string; finished_at: string; key: string }
  | {
      state: 'failed';
      started_at: string;
      finished_at: string;
      error: { code: string; message: string; details: Record<string, unknown> };
    };

/**
 * Builds stored replays in the background, one build per variant at a time (on AWS: a marker object per
 * variant, whose creation EventBridge announces to the builder function, lib/store/s3/replay-archive.ts).
 */
export interface ReplayBuilds {
  /** The newest build of `variant` and its job, or null when there was none. */
  status(variant: string): Promise<(BuildState & { job: ReplayJob }) | null>;
  /**
   * Has `job` built, unless a build of its variant started less than `BUILD_CLAIM_MS` ago and has not
   * ended (then nothing happens: of two requests at once, one starts it). Resolves once the build is
   * under way, not done.
   */
  start(job: ReplayJob): Promise<void>;
  /**
   * Records how the build of `job` begun at `startedAt` ended: the copy it stored, or its error. Leaves
   * alone a build of the variant started since (a newer one took over a stale one).
   */
  finish(
    job: ReplayJob,
    startedAt: string,
    outcome: { key: string } | { error: { code: string; message: string; details: Record<string, unknown> } },
  ): Promise<void>;
}

/** A deployment's large-replay settings (`ServiceDeps.largeReplays`). */
export interface LargeReplays {
  /**
   * replays of sessions of at most this many bytes (the writers' indexed lengths summed; three times that
   * for the text replay) are streamed
   */
  inlineBytes: number;
  archive: ReplayArchive;
  /**
   * larger replays of sessions of at most this many bytes (counted as for `inlineBytes`) are merged in the
   * request, when this process may wait that long (the replay function); default: none when `builds` is
   * set, every size when it is not
   */
  inRequestBytes?: number;
  /** when set, replays too large to merge in the request are built by it, the request answered at once */
  builds?: ReplayBuilds;
  /** how long a handed-out URL is valid, s (default 900) */
  urlTtlSeconds?: number;
}
