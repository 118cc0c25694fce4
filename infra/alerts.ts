/**
 * Alerts on AWS (issue 28 item 6, functions/alerts.ts): the delivery function, its two triggers, the KMS
 * key that seals targets' signing secrets, the stream's dead-letter queue and the alarms.
 *
 * - **Triggers**: an EventBridge rule every minute (retries, their backoff and held-state rules need a
 *   clock) and the state table's stream, filtered to the INSERTs of outbox items (`ALERT_OUT_PREFIX`), so
 *   an event leaves within seconds of its change. A stream batch is only a wake-up (the outbox items stay
 *   in the table until fanned out): a failed one is tried `ALERT_STREAM_RETRIES` more times, halved each
 *   time, then described in the dead-letter queue, whose alarm tells the operator; the schedule still
 *   delivers what it woke the function for.
 * - **One instance** (reserved concurrency 1): the claims keep per-session order, and one worker keeps it
 *   simple; a scheduled run that finds it busy waits at most a minute (the next one comes anyway).
 * - **Secrets**: a symmetric KMS key with yearly rotation, retained with the data (deleting it would
 *   leave every stored secret unreadable). The API function may only Encrypt (it seals a target's secret
 *   when it is made or rotated), the delivery function only Decrypt (it signs); both, and the key policy
 *   itself, only under the encryption context `purpose: alert-target-secret`
 *   (lib/deploy/aws-sealer.ts), so the key serves nothing else.
 * - **IAM for the table**: derived from `ALERTS_STATE_METHODS` through the access map (functions/access.ts
 *   `alertsDynamoAccess`), as every function's; the stream's reads on the stream alone (CDK's own stream
 *   grant adds `dynamodb:ListStreams` on `*`).
 */
import { Duration } from 'aws-cdk-lib';
import type { Table } from 'aws-cdk-lib/aws-dynamodb';
import { Rule, Schedule } from 'aws-cdk-lib/aws-events';
import { LambdaFunction } from 'aws-cdk-lib/aws-events-targets';
import { PolicyStatement } from 'aws-cdk-lib/aws-iam';
import type { Key } from 'aws-cdk-lib/aws-kms';
import { FilterCriteria, FilterRule } from 'aws-cdk-lib/aws-lambda';
import type { Bucket } from 'aws-cdk-lib/aws-s3';
import type { ITopic } from 'aws-cdk-lib/aws-sns';
import type { Queue } from 'aws-cdk-lib/aws-sqs';
import type { Construct } from 'constructs';
import { ALERT_SECRET_PURPOSE, alertsDynamoAccess } from '../functions/access.js';
import { ALERT_OUT_PREFIX, PK } from '../lib/store/dynamo/schema.js';
import { ALARM_PERIOD } from './alarms.js';
import { HansardFunction, type HansardFunctionProps } from './lambda.js';
import { addPurposeKey, KEY_ADMIN_ACTIONS, PURPOSE_CONDITION_KEY, purposeCondition } from './purpose-key.js';
import { alarmOn, consumeStateStream } from './state-stream.js';

/** A drain stops starting passes 20 s before it (lib/deploy/aws-alerts.ts `ALERT_DRAIN_MARGIN_MS`). */
export const ALERTS_TIMEOUT = Duration.minutes(2);
/** One delivery function at a time. */
export const ALERTS_CONCURRENCY = 1;
/** Tries of a failed stream batch after the first (each halving it), before the dead-letter queue. */
export const ALERT_STREAM_RETRIES = 3;
/** How long the dead-letter queue keeps a failed batch's description: SQS's longest. */
export const ALERT_DLQ_RETENTION = Duration.days(14);
/** The stream's iterator age that raises its alarm: wake-ups this late mean the trigger is stuck. */
export const ALERT_ITERATOR_AGE_MS = 10 * 60 * 1000;
/** The IAM condition key that binds the secrets' key to its one purpose. */
export const ALERT_PURPOSE_CONDITION = PURPOSE_CONDITION_KEY;

/**
 * What the account may do with the secrets' key (its key policy): administer it, and delegate to the
 * roles' IAM policies Encrypt and Decrypt under the alerts' purpose alone. Named actions, not `kms:*`.
 */
export const ALERT_KEY_ADMIN_ACTIONS = KEY_ADMIN_ACTIONS;

/** The stream filter: INSERTs of items whose partition key starts with `ALERT_OUT_PREFIX` (outbox events). */
export function outboxInsertFilter(): Record<string, unknown> {
  return FilterCriteria.filter({
    eventName: FilterRule.isEqual('INSERT'),
    dynamodb: { Keys: { [PK]: { S: FilterRule.beginsWith(ALERT_OUT_PREFIX) } } },
  });
}

/** `boardOrigin` checked at synth (an origin alone), rather than as a failed cold start after deploying. */
export function checkedBoardOrigin(v: string | undefined): string | undefined {
  if (v === undefined) return undefined;
  let url: URL | null = null;
  try {
    url = new URL(v);
  } catch {}
  if (!url || !/^https?:$/.test(url.protocol) || url.origin !== v.replace(/\/$/, ''))
    throw new Error(`boardOrigin must be an http(s) origin such as https://hansard.example.com, not ${v}`);
  return url.origin;
}

export interface Alerts {
  fn: HansardFunction;
  key: Key;
  dlq: Queue;
}

/**
 * Adds the delivery function, its triggers, the secrets' key (granting `api` Encrypt), the dead-letter
 * queue and the alarms to `scope`. The table must have a stream (`NEW_IMAGE`, infra/stack.ts). The
 * function's `BOARD_ORIGIN` (the links in events) is the stack's to set once the API exists.
 */
export function addAlerts(
  scope: Construct,
  o: {
    bucket: Bucket;
    table: Table;
    common: Pick<HansardFunctionProps, 'logRetention' | 'logLevel'>;
    /** the API function: it seals targets' secrets */
    api: HansardFunction;
    /** the alarm topic */
    alarms: ITopic;
  },
): Alerts {
  const purpose = purposeCondition(ALERT_SECRET_PURPOSE);
  const key = addPurposeKey(scope, 'AlertSecretKey', {
    description:
      "hansard: seals alert targets' signing secrets (encryption context purpose: alert-target-secret)",
    purpose: ALERT_SECRET_PURPOSE,
    delegateSid: 'AccountDelegatesAlertSecretsToIam',
  });

  const fn = new HansardFunction(scope, 'AlertsFunction', {
    ...o.common,
    entry: 'functions/alerts.ts',
    description: 'hansard alerts delivery: sends the due alert events to their targets, signed',
    timeout: ALERTS_TIMEOUT,
    reservedConcurrentExecutions: ALERTS_CONCURRENCY,
  });
  // a report's claims are checked against the transcript before `claim.unsupported` fires
  fn.bindBucket(o.bucket, 'read');
  fn.bindTable(o.table, alertsDynamoAccess());
  fn.addEnvironment('ALERT_KMS_KEY_ID', key.keyArn);
  fn.addToRolePolicy(
    new PolicyStatement({
      sid: 'AlertSecretsOpen',
      actions: ['kms:Decrypt'],
      resources: [key.keyArn],
      conditions: purpose,
    }),
  );
  o.api.addEnvironment('ALERT_KMS_KEY_ID', key.keyArn);
  o.api.addToRolePolicy(
    new PolicyStatement({
      sid: 'AlertSecretsSeal',
      actions: ['kms:Encrypt'],
      resources: [key.keyArn],
      conditions: purpose,
    }),
  );

  // The schedule: a run that fails is not retried (the next minute's takes what is still due); one that
  // finds the function busy waits a minute at most in Lambda's queue.
  fn.configureAsyncInvoke({ retryAttempts: 0, maxEventAge: Duration.minutes(1) });
  new Rule(scope, 'AlertSchedule', {
    description: 'hansard: deliver the due alerts, retries and held states included (functions/alerts.ts)',
    schedule: Schedule.rate(Duration.minutes(1)),
    targets: [new LambdaFunction(fn, { retryAttempts: 0, maxEventAge: Duration.minutes(1) })],
  });

  // The stream: outbox INSERTs wake it at once.
  const { dlq } = consumeStateStream(scope, {
    prefix: 'Alert',
    what: 'alerts',
    needs: 'the alerts need one',
    table: o.table,
    fn,
    alarms: o.alarms,
    batchSize: 100,
    batchWindow: Duration.seconds(1),
    retries: ALERT_STREAM_RETRIES,
    dlqRetention: ALERT_DLQ_RETENTION,
    iteratorAgeMs: ALERT_ITERATOR_AGE_MS,
    filters: [outboxInsertFilter()],
  });

  // No throttles alarm: with a concurrency of 1, a schedule that meets a stream run is throttled by design.
  alarmOn(scope, o.alarms)('AlertsErrorsAlarm', {
    metric: fn.metricErrors({ period: ALARM_PERIOD, statistic: 'Sum' }),
    threshold: 1,
    alarmDescription: 'alerts delivery function errors (5 min): the store or KMS failed, not a target',
  });
  return { fn, key, dlq };
}
