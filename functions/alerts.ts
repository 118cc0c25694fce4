/**
 * Lambda entry of the alerts' delivery function (issue 28 items 4 and 6): drains the outbox and the due
 * deliveries (`runAlertDrain`, lib/deploy/aws-alerts.ts: `AlertWorker.drainOnce` pass after pass) until
 * nothing is due or 20 s before the invocation's end. Run two ways (infra/alerts.ts):
 *
 * - an EventBridge schedule every minute: retries, their backoff and held-state rules (`--after 10m`)
 *   need a clock, and it is what picks up everything the stream trigger could not;
 * - the state table's stream, filtered to the INSERTs of outbox items (`ALERT_OUTBOX_PREFIX`): an event
 *   goes out within seconds of its change rather than at the next minute.
 *
 * The stream's records are only a wake-up: the outbox items stay in the table until a drain fans them
 * out, so a batch that fails loses nothing. A delivery that fails at its target is no failure of the
 * invocation (the worker records the attempt and its next try); only an error of ours is (the store,
 * KMS): it is logged and thrown, so that the Errors alarm sees it and, for a stream batch, Lambda tries
 * again (halving the batch), then sends the batch's description to the dead-letter queue and its alarm.
 *
 * One instance at a time (reserved concurrency 1): per-session order needs no more than the claims, and
 * one worker keeps it simple. Secrets never reach a log line: the worker's own, and every error logged
 * here has its URLs cut to their host (a Slack webhook URL is a secret) and its tokens masked.
 */
import type { Logger } from '@aws-lambda-powertools/logger';
import type { Context, DynamoDBStreamEvent, ScheduledEvent } from 'aws-lambda';
import { type AlertDrainResult, alertDrainer, awsAlertDeps, maskUrls } from '../lib/deploy/aws-alerts.js';
import { maskTokens } from '../lib/deploy/aws-lambda.js';
import { type AwsClients, createClients } from './clients.js';
import { ConfigError, parseConfig } from './config.js';
import { createLogger } from './logging.js';
import { ALERTS_STATE_METHODS, onlyMethods } from './state-methods.js';

export interface AlertsHandlerOverrides {
  clients?: AwsClients;
  logger?: Logger;
  now?: () => Date;
  /** tests: a loopback receiver */
  allowPrivateTargets?: boolean;
}

/** What a run answers: how it was woken, and what the drain did. */
export interface AlertsAnswer extends AlertDrainResult {
  trigger: 'schedule' | 'stream' | 'invoke';
  /** stream records that woke it (0 otherwise) */
  records: number;
}

/**
 * The delivery function's handler for an environment (@throws ConfigError naming the bad keys, or
 * naming ALERT_KMS_KEY_ID when it is unset: the function opens targets' secrets with it).
 */
export function createAlertsHandler(
  env: Record<string, string | undefined>,
  o: AlertsHandlerOverrides = {},
): (
  event: ScheduledEvent | DynamoDBStreamEvent | Record<string, never>,
  context?: Pick<Context, 'getRemainingTimeInMillis'>,
) => Promise<AlertsAnswer> {
  const config = parseConfig(env);
  if (!config.ALERT_KMS_KEY_ID) {
    throw new ConfigError(
      'invalid Lambda environment: ALERT_KMS_KEY_ID (required by the delivery function)',
      ['ALERT_KMS_KEY_ID'],
    );
  }
  const logger = o.logger ?? createLogger(config);
  const drain = alertDrainer(
    awsAlertDeps({
      clients: o.clients ?? createClients(config),
      bucket: config.BUCKET_NAME,
      table: config.TABLE_NAME,
      keyId: config.ALERT_KMS_KEY_ID,
      boardOrigin: config.BOARD_ORIGIN ?? null,
      now: o.now,
      ...(o.allowPrivateTargets ? { config: { allowPrivateTargets: true } } : {}),
      // Its role allows only what the worker calls (functions/access.ts): a new call fails in tests too.
      wrapState: (state) =>
        onlyMethods(state, ALERTS_STATE_METHODS, { fn: 'delivery function', list: 'ALERTS_STATE_METHODS' }),
    }),
  );
  return async (event, context) => {
    const records = 'Records' in event && Array.isArray(event.Records) ? event.Records.length : 0;
    const trigger = records > 0 ? 'stream' : 'source' in event ? 'schedule' : 'invoke';
    const started = Date.now();
    const left = context?.getRemainingTimeInMillis?.() ?? 2 * 60 * 1000;
    try {
      const result = await drain(started + left);
      logger.info('alerts', { trigger, records, ms: Date.now() - started, ...result });
      return { trigger, records, ...result };
    } catch (err) {
      const e = err instanceof Error ? err : new Error(String(err));
      const message = maskUrls(maskTokens(e.message));
      logger.error('alerts: the drain failed', {
        trigger,
        records,
        error: { name: e.name, message, stack: maskUrls(maskTokens(e.stack ?? '')) },
      });
      // Not `err` itself: the runtime logs a failed invocation's error too, and must see it masked.
      throw new AlertDrainError(`${e.name}: ${message}`);
    }
  };
}

/** The drain failed with an error of ours (its message masked); the invocation fails. */
export class AlertDrainError extends Error {
  override name = 'AlertDrainError';
}

export const handler = createAlertsHandler(process.env);
