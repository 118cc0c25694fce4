/**
 * A function fed by the state table's DynamoDB stream, with what every such consumer has (the alerts'
 * delivery, infra/alerts.ts; search's indexer, infra/search.ts): the stream's read grant on the stream
 * alone (CDK's own grant adds `dynamodb:ListStreams` on `*`), the trigger with bisect on error and a
 * dead-letter queue, and the alarms a stream consumer needs (errors, the dead-letter queue, the
 * iterator's age), in the account's 5-minute, quiet-without-data form (infra/alarms.ts).
 */
import type { Duration } from 'aws-cdk-lib';
import { Alarm, ComparisonOperator, TreatMissingData } from 'aws-cdk-lib/aws-cloudwatch';
import { SnsAction } from 'aws-cdk-lib/aws-cloudwatch-actions';
import type { Table } from 'aws-cdk-lib/aws-dynamodb';
import { PolicyStatement } from 'aws-cdk-lib/aws-iam';
import { EventSourceMapping, StartingPosition } from 'aws-cdk-lib/aws-lambda';
import { SqsDlq } from 'aws-cdk-lib/aws-lambda-event-sources';
import type { ITopic } from 'aws-cdk-lib/aws-sns';
import { Queue, QueueEncryption } from 'aws-cdk-lib/aws-sqs';
import type { Construct } from 'constructs';
import { ALARM_PERIOD } from './alarms.js';
import type { HansardFunction } from './lambda.js';

/** An alarm of `scope` on `topic`: 5 minutes, one period, at or over the threshold, quiet without data. */
export function alarmOn(
  scope: Construct,
  topic: ITopic,
): (id: string, a: Omit<ConstructorParameters<typeof Alarm>[2], 'evaluationPeriods'>) => Alarm {
  return (id, a) => {
    const alarm = new Alarm(scope, id, {
      evaluationPeriods: 1,
      comparisonOperator: ComparisonOperator.GREATER_THAN_OR_EQUAL_TO_THRESHOLD,
      treatMissingData: TreatMissingData.NOT_BREACHING,
      ...a,
    });
    alarm.addAlarmAction(new SnsAction(topic));
    return alarm;
  };
}

export interface StateStreamConsumer {
  /** the logical ids' prefix: `<prefix>StreamDlq`, `<prefix>StreamTrigger`, `<prefix>StreamDlqAlarm`, … */
  prefix: string;
  /** what the alarms' descriptions call the consumer (`alerts`, `search`) */
  what: string;
  /** why the state table must have a stream, in its error */
  needs: string;
  table: Table;
  fn: HansardFunction;
  alarms: ITopic;
  batchSize: number;
  batchWindow: Duration;
  retries: number;
  dlqRetention: Duration;
  /** the iterator age past which the consumer is behind, in ms */
  iteratorAgeMs: number;
  filters: Array<Record<string, unknown>>;
  /** partial batch answers (`batchItemFailures`) */
  reportBatchItemFailures?: boolean;
  /** what the dead-letter alarm's description adds (what to do about a batch there) */
  dlqHint?: string;
}

/**
 * `c.fn` fed by the state table's stream from the deployment on, with its dead-letter queue and the
 * dead-letter and iterator-age alarms (the errors alarms are the caller's: their texts differ).
 * @throws Error when the table has no stream
 */
export function consumeStateStream(scope: Construct, c: StateStreamConsumer): { dlq: Queue } {
  const dlq = new Queue(scope, `${c.prefix}StreamDlq`, {
    encryption: QueueEncryption.SQS_MANAGED,
    enforceSSL: true,
    retentionPeriod: c.dlqRetention,
  });
  const streamArn = c.table.tableStreamArn;
  if (!streamArn) throw new Error(`the state table has no stream: ${c.needs} (NEW_IMAGE)`);
  c.fn.addToRolePolicy(
    new PolicyStatement({
      sid: 'StateStreamReads',
      actions: [
        'dynamodb:DescribeStream',
        'dynamodb:GetRecords',
        'dynamodb:GetShardIterator',
        'dynamodb:ListStreams',
      ],
      resources: [streamArn],
    }),
  );
  new EventSourceMapping(scope, `${c.prefix}StreamTrigger`, {
    target: c.fn,
    eventSourceArn: streamArn,
    // From the deployment on: what came before is the consumer's to catch up (a reindex, the outbox's schedule).
    startingPosition: StartingPosition.LATEST,
    batchSize: c.batchSize,
    maxBatchingWindow: c.batchWindow,
    bisectBatchOnError: true,
    ...(c.reportBatchItemFailures ? { reportBatchItemFailures: true } : {}),
    retryAttempts: c.retries,
    onFailure: new SqsDlq(dlq),
    filters: c.filters,
  });
  const alarm = alarmOn(scope, c.alarms);
  alarm(`${c.prefix}StreamDlqAlarm`, {
    metric: dlq.metricApproximateNumberOfMessagesVisible({ period: ALARM_PERIOD, statistic: 'Maximum' }),
    threshold: 1,
    alarmDescription: `${c.what}: a stream batch failed every try and is in the dead-letter queue${c.dlqHint ?? ''}`,
  });
  alarm(`${c.prefix}StreamIteratorAgeAlarm`, {
    metric: c.fn.metric('IteratorAge', { period: ALARM_PERIOD, statistic: 'Maximum' }),
    threshold: c.iteratorAgeMs,
    alarmDescription: `${c.what}: the stream trigger is ${c.iteratorAgeMs / 60_000}+ min behind`,
  });
  return { dlq };
}
