/**
 * The delivery function's wiring on AWS (issue 28, functions/alerts.ts): the alerts' deps over the
 * DynamoDB state store, the S3 segments (read: a claim checked against the transcript) and the KMS sealer (lib/deploy/aws-sealer.ts), and the drain that runs the
 * worker (`AlertWorker`, lib/service/alerts/worker.ts) pass after pass until nothing is due or the
 * invocation is near its end. No app, routes or limiter, so the function's bundle holds none (as
 * aws-compaction.ts is for the compactor).
 */

import { type AlertConfig, type AlertDeps, DEFAULT_ALERT_CONFIG } from '../service/alerts/deps.js';
import { AlertWorker } from '../service/alerts/worker.js';
import type { StateStore } from '../store/index.js';
import { KmsSecretSealer } from './aws-sealer.js';
import { type AwsClients, openAwsStores } from './aws-stores.js';

export { ALERT_SECRET_PURPOSE } from './aws-sealer.js';

/** ms before the invocation's end after which no new pass starts (a pass sends at most a few 10 s attempts). */
export const ALERT_DRAIN_MARGIN_MS = 20_000;

export interface AwsAlertOptions {
  clients: AwsClients;
  /** the segments bucket: a report's claims are checked against the transcript (`claim.unsupported`) */
  bucket: string;
  table: string;
  /** the symmetric KMS key of the targets' secrets (`ALERT_KMS_KEY_ID`) */
  keyId: string;
  /** the board's origin for events' links (`BOARD_ORIGIN`); null: relative links */
  boardOrigin?: string | null | undefined;
  now?: (() => Date) | undefined;
  /** the state store as the function may use it (functions/state-methods.ts `ALERTS_STATE_METHODS`) */
  wrapState?: ((state: StateStore) => StateStore) | undefined;
  /** what else of `DEFAULT_ALERT_CONFIG` changes (tests: `allowPrivateTargets` for a loopback receiver) */
  config?: Partial<AlertConfig> | undefined;
}

/**
 * The alerts' deps on AWS. Private targets stay refused (`allowPrivateTargets` false) unless `config`
 * says otherwise: a Lambda function in the account must not be pointed at the VPC or the metadata service.
 * @throws Error when `clients.kms` is absent
 */
export function awsAlertDeps(o: AwsAlertOptions): AlertDeps {
  if (!o.clients.kms) throw new Error('the alerts need a KMS client (ALERT_KMS_KEY_ID)');
  const stores = openAwsStores({
    s3: o.clients.s3,
    bucket: o.bucket,
    dynamo: o.clients.dynamodb,
    table: o.table,
  });
  return {
    state: o.wrapState ? o.wrapState(stores.state) : stores.state,
    segments: stores.segments,
    sealer: new KmsSecretSealer({ client: o.clients.kms, keyId: o.keyId }),
    now: o.now ?? (() => new Date()),
    config: { ...DEFAULT_ALERT_CONFIG, boardOrigin: o.boardOrigin ?? null, ...o.config },
  };
}

/** What one drain did: its passes, the events fanned out and the deliveries attempted, and why it stopped. */
export interface AlertDrainResult {
  passes: number;
  events: number;
  deliveries: number;
  /** `idle`: a pass found nothing due; `deadline`: the invocation's end was near */
  stopped: 'idle' | 'deadline';
}

/**
 * Runs `AlertWorker.drainOnce` pass after pass until a pass does nothing or `marginMs` (default
 * `ALERT_DRAIN_MARGIN_MS`) before `deadlineMs`. A delivery that fails at its target is no error here
 * (the worker records it and sets its next try); an error of ours (the store, KMS) is thrown, so the
 * invocation fails.
 * @param deadlineMs when the invocation ends, epoch ms (`Date.now() + getRemainingTimeInMillis()`)
 * @param o.worker the worker to run (default a new one over `deps`): the function keeps one per instance,
 *   so that its Slack pacing (one message a second per target) holds across invocations
 * @param o.clock epoch ms now (tests)
 */
export async function runAlertDrain(
  deps: AlertDeps,
  deadlineMs: number,
  o: { marginMs?: number; clock?: () => number; worker?: AlertWorker } = {},
): Promise<AlertDrainResult> {
  const clock = o.clock ?? Date.now;
  const stopAt = deadlineMs - (o.marginMs ?? ALERT_DRAIN_MARGIN_MS);
  const worker = o.worker ?? new AlertWorker(deps);
  const total: AlertDrainResult = { passes: 0, events: 0, deliveries: 0, stopped: 'deadline' };
  while (clock() < stopAt) {
    const pass = await worker.drainOnce({ stopAt });
    total.passes += 1;
    total.events += pass.events;
    total.deliveries += pass.deliveries;
    if (pass.events === 0 && pass.deliveries === 0) {
      total.stopped = 'idle';
      break;
    }
  }
  return total;
}

/** `runAlertDrain` over one worker kept for every call (one per Lambda instance). */
export function alertDrainer(deps: AlertDeps): (deadlineMs: number) => Promise<AlertDrainResult> {
  const worker = new AlertWorker(deps);
  return (deadlineMs) => runAlertDrain(deps, deadlineMs, { worker });
}

/**
 * `text` with each URL cut to its scheme and host (`https://hooks.slack.com/…`, credentials dropped): an
 * incoming-webhook URL carries its secret in its path, and an error message may quote a target's URL, so
 * none reaches the logs.
 */
export function maskUrls(text: string): string {
  return text.replace(
    /\b(https?):\/\/(?:[^/\s"'<>@]*@)?([^/\s"'<>?#@]+)[^\s"'<>]*/gi,
    (_, scheme: string, host: string) => `${scheme}://${host}/…`,
  );
}
