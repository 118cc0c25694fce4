/**
 * Lambda entry of the compactor (issue 17.2): rewrites the small chunk objects of a session's settled
 * writers as compacted runs (`compactSession`, lib/service/ingest/compaction.ts, over `awsCompactor`,
 * lib/deploy/aws-compaction.ts). Run by the bucket's `Object Created` event of each signed digest the
 * digester (or an export) writes, `tenants/{t}/sessions/{sid}/digests/{seq}.json` (infra/compaction.ts):
 * a session gets one right after a writer ends and, while it is quiet, at a cadence that doubles from
 * 5 minutes, so its settled writers are compacted soon after they settle. An operator runs it for one
 * session with `aws lambda invoke --function-name <CompactFunctionName> --payload
 * '{"tenant":"acme","sid":"s_…"}' out.json` (docs/deploy.md). One at a time (reserved concurrency 1): no
 * two compactions of a writer run at once. No new run starts in the last 2 minutes of the invocation;
 * a pass that leaves runs undone fails, so Lambda runs its event again, twice.
 */
import type { Logger } from '@aws-lambda-powertools/logger';
import type { Context } from 'aws-lambda';
import { assertSessionKey, awsCompactor, type WriterCompaction } from '../lib/deploy/aws-compaction.js';
import { type AwsClients, createClients } from './clients.js';
import { parseConfig } from './config.js';
import { createLogger } from './logging.js';
import { COMPACT_STATE_METHODS, onlyMethods } from './state-methods.js';

/** ms before the invocation's end after which no new run is started (a 64 MiB run of 1 KB objects reads in ~1–2 min). */
export const COMPACT_MARGIN_MS = 2 * 60 * 1000;
/** A digest's key: `tenants/{tenant}/sessions/{sid}/digests/{seq:09}.json` (lib/store/s3/digest-store.ts). */
const DIGEST_KEY = /^tenants\/([^/]+)\/sessions\/([^/]+)\/digests\/\d{9}\.json$/;

export interface CompactOverrides {
  clients?: AwsClients;
  logger?: Logger;
  now?: () => Date;
  /** see `awsCompactor` */
  settledAfterMs?: number;
}

/** What EventBridge hands a target for an S3 object created (the part the compactor reads). */
export interface DigestObjectCreated {
  source: 'aws.s3';
  'detail-type': 'Object Created';
  detail: { bucket: { name: string }; object: { key: string } };
}

/** An operator's invocation: one session. */
export interface CompactRequest {
  tenant: string;
  sid: string;
}

export interface CompactAnswer {
  tenant: string | null;
  sid: string | null;
  /** `not_a_session`: the event names no session (not a digest's key, or not valid ids) */
  outcome: 'compacted' | 'not_a_session';
  writers: WriterCompaction[];
}

/**
 * The compactor's handler for an environment (@throws ConfigError naming the bad keys). A store's error,
 * or a pass that ran out of time (`CompactionUnfinishedError`), fails the invocation (Lambda runs an
 * asynchronous event again twice); a writer's own fault (bytes that do not match the index, a layout
 * no compaction explains) is logged as an error and left as it is.
 */
export function createCompactHandler(
  env: Record<string, string | undefined>,
  o: CompactOverrides = {},
): (
  event: DigestObjectCreated | CompactRequest,
  context?: Pick<Context, 'getRemainingTimeInMillis'>,
) => Promise<CompactAnswer> {
  const config = parseConfig(env);
  const logger = o.logger ?? createLogger(config);
  const compact = awsCompactor({
    clients: o.clients ?? createClients(config),
    bucket: config.BUCKET_NAME,
    table: config.TABLE_NAME,
    ...(o.now ? { now: o.now } : {}),
    ...(o.settledAfterMs !== undefined ? { settledAfterMs: o.settledAfterMs } : {}),
    // Its role allows only what a compaction calls (functions/access.ts): a new call fails in tests too.
    wrapState: (state) =>
      onlyMethods(state, COMPACT_STATE_METHODS, { fn: 'compactor', list: 'COMPACT_STATE_METHODS' }),
  });
  return async (event, context) => {
    const session = sessionOf(event);
    if (!session) {
      logger.warn('compaction: the event names no session', { event });
      return { tenant: null, sid: null, outcome: 'not_a_session', writers: [] };
    }
    const started = Date.now();
    const left = context?.getRemainingTimeInMillis?.() ?? 15 * 60 * 1000;
    const writers = await compact(session.tenant, session.sid, started + left - COMPACT_MARGIN_MS);
    for (const w of writers) {
      if (w.outcome === 'mismatch' || w.outcome === 'conflict' || w.outcome === 'layout') {
        logger.error('compaction left a writer as it is', { ...session, ...w });
      }
    }
    logger.info('compaction', { ...session, ms: Date.now() - started, writers });
    // A writer too large for one invocation (~1 GB of 1 KB objects at S3's pace): fail, so that Lambda
    // runs the event again (twice, a minute and two later), each pass going on from the runs written.
    const unfinished = writers.filter((w) => w.outcome === 'out_of_time').map((w) => w.w);
    if (unfinished.length > 0) {
      throw new CompactionUnfinishedError(
        `compaction of session ${session.sid} ran out of time before writers ${unfinished.join(', ')} were done: run again`,
      );
    }
    return { ...session, outcome: 'compacted', writers };
  };
}

/** A pass that ran out of time (the invocation fails so that Lambda runs the event again). */
export class CompactionUnfinishedError extends Error {
  override name = 'CompactionUnfinishedError';
}

/** The session an event names: a digest's key (EventBridge) or an operator's `{tenant, sid}`. */
function sessionOf(event: DigestObjectCreated | CompactRequest): CompactRequest | null {
  let tenant: unknown;
  let sid: unknown;
  if ('detail' in event) {
    const m = DIGEST_KEY.exec(event.detail?.object?.key ?? '');
    if (!m) return null;
    [tenant, sid] = [m[1], m[2]];
  } else {
    ({ tenant, sid } = event as Partial<CompactRequest>);
  }
  if (typeof tenant !== 'string' || typeof sid !== 'string') return null;
  try {
    assertSessionKey(tenant, sid);
  } catch {
    return null;
  }
  return { tenant, sid };
}

export const handler = createCompactHandler(process.env);
