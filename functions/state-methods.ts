/**
 * The state store methods a function may call, without the rate limiter's declarations (functions/access.ts
 * adds those): what the digest function imports, so its bundle holds no limiter (test/infra/stack-dynamo).
 */
import type { StateMethod } from '../lib/deploy/aws-access.js';
import type { StateStore } from '../lib/deploy/aws-lambda.js';

/**
 * The state store methods the digest function (functions/digest.ts, `writeDueDigests`) calls: the due
 * sessions, each one's bytes, head, writers and chunk records, and the head's conditional move.
 */
export const DIGEST_STATE_METHODS = [
  'listDigestsDue',
  'getSession',
  'getDigestHead',
  'listWriters',
  'listChunks',
  'putDigestHead',
  // a broken chain's `record.damaged` alert (issue 28): its claim and outbox item in one transaction
  'claimKey',
] as const satisfies readonly StateMethod[];

/**
 * The state store methods the compactor (functions/compact.ts, `compactSession`) calls: a session's
 * writers (which have settled) and their chunk records (what each run's bytes are checked against).
 * Reads only: a compaction changes no record.
 */
export const COMPACT_STATE_METHODS = ['listWriters', 'listChunks'] as const satisfies readonly StateMethod[];

/**
 * `state`, answering only `methods` (and `close`): any other method throws, naming itself and this file.
 * The replay function's app and the digest function use it so that their roles (`REPLAY_STATE_METHODS`,
 * `DIGEST_STATE_METHODS`) cannot fall behind their code.
 */
export function onlyMethods(
  state: StateStore,
  methods: readonly StateMethod[],
  who: { fn: string; list: string } = { fn: 'replay function', list: 'REPLAY_STATE_METHODS' },
): StateStore {
  const allowed = new Set<PropertyKey>([...methods, 'close']);
  return new Proxy(state, {
    get(target, prop) {
      const value = Reflect.get(target, prop, target) as unknown;
      if (typeof value !== 'function') return value;
      if (!allowed.has(prop)) {
        return () => {
          throw new Error(
            `the ${who.fn} called StateStore.${String(prop)}, which its IAM role does not allow: add it to ${who.list} (functions/access.ts, state-methods.ts)`,
          );
        };
      }
      return (value as (...a: unknown[]) => unknown).bind(target);
    },
  });
}

/**
 * The state store methods the delivery function (functions/alerts.ts, `AlertWorker.drainOnce` of
 * lib/service/alerts/worker.ts, issue 28) calls: the outbox's due events, the tenant's targets, their
 * fan-out to deliveries (atomic with the event's removal) or a new due time (a renewed lease's watch), the
 * due deliveries, their claims and outcomes; and what is read again before an event fires or a held state
 * is sent: the work item (a lease watch), the status, the session and its writers (their agents, and a
 * report's claims checked against the transcript for `claim.unsupported`, lib/service/alerts/watch.ts).
 */
export const ALERTS_STATE_METHODS = [
  'listDueEvents',
  'listAlertTargets',
  'fanOut',
  'rescheduleEvent',
  'listDueDeliveries',
  'claimDelivery',
  'finishAttempt',
  'getAlertTarget',
  'getWork',
  'getStatus',
  'getSession',
  'listWriters',
] as const satisfies readonly StateMethod[];

/**
 * The state store methods the indexing function (functions/search.ts, `indexQueued` of
 * lib/service/search/indexer.ts, issue 30) calls: a writer's record (how far its bytes go), and a
 * session's facts: its status, its work items and its title (the board's copy of the session item).
 * Reads only: indexing changes no record.
 */
export const SEARCH_STATE_METHODS = [
  'getWriter',
  'getStatus',
  'listWork',
  'boardCopies',
] as const satisfies readonly StateMethod[];
