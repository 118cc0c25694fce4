/**
 * The stack's alarms (issue 17.3), all to one SNS topic, each over 5 minutes and quiet when its metric
 * has no data (a deployment nobody calls raises none). What each watches and what to do when it fires:
 * docs/deploy.md "Alarms".
 */
import { Duration } from 'aws-cdk-lib';
import type { HttpStage } from 'aws-cdk-lib/aws-apigatewayv2';
import {
  Alarm,
  ComparisonOperator,
  type IMetric,
  MathExpression,
  Metric,
  TreatMissingData,
} from 'aws-cdk-lib/aws-cloudwatch';
import { SnsAction } from 'aws-cdk-lib/aws-cloudwatch-actions';
import { Operation, type Table } from 'aws-cdk-lib/aws-dynamodb';
import { FilterPattern, type ILogGroup, MetricFilter } from 'aws-cdk-lib/aws-logs';
import type { Topic } from 'aws-cdk-lib/aws-sns';
import type { Construct } from 'constructs';
import { GSI1 } from '../lib/store/dynamo/schema.js';
import type { HansardFunction } from './lambda.js';

/** Every alarm evaluates one period of this length. */
export const ALARM_PERIOD = Duration.minutes(5);
/** A rate alarm (4xx, 429) stays quiet below this many requests in a period: a few errors are not a rate. */
export const RATE_ALARM_MIN_REQUESTS = 100;
/** Share of the API's requests answered 4xx in a period that raises the 4xx alarm, in percent. */
export const API_4XX_PERCENT = 10;
/** Share of the API's requests answered 429 (the stage throttle or the app's limits) that raises its alarm. */
export const API_429_PERCENT = 5;
/** p99 Duration at this share of a function's timeout raises its alarm: requests are about to time out. */
export const DURATION_ALARM_SHARE = 0.8;
/**
 * Transaction conflicts in a period that raise the alarm. Ingest retries them (DynamoStateStore
 * `transact`); until issue 17.1 takes the session item out of the ingest transaction, the writers of one
 * busy session meet there, so a few are normal and only many say writers are queuing.
 */
export const TRANSACTION_CONFLICTS = 100;
/** The namespace of the metrics the stack makes itself (from the API's access log). */
export const METRIC_NAMESPACE = 'Hansard';

/** A function the alarms watch: its name in alarm ids, and its timeout. */
export interface WatchedFunction {
  name: string;
  fn: HansardFunction;
  timeout: Duration;
}

export interface AlarmsProps {
  topic: Topic;
  stage: HttpStage;
  /** the API's access log (JSON lines with a string `status`): the 429 count is filtered from it */
  accessLogs: ILogGroup;
  table: Table;
  functions: WatchedFunction[];
  /** the function behind the public function URL: its Url4xxCount/Url5xxCount */
  urlFunction: HansardFunction;
  /**
   * functions whose every ERROR log line raises an alarm (a metric filter on `$.level`, the Powertools
   * logger's field): the compactor logs a writer it left as it was (bytes that do not match the index, a
   * conflict, an unknown layout), which is no failed invocation and no Lambda metric shows
   */
  logErrors?: Array<{ name: string; fn: HansardFunction }>;
}

/** Creates every alarm of the stack under `scope`. */
export function addAlarms(scope: Construct, p: AlarmsProps): void {
  const alarm = (
    id: string,
    metric: IMetric,
    threshold: number,
    description: string,
    comparison = ComparisonOperator.GREATER_THAN_OR_EQUAL_TO_THRESHOLD,
  ) =>
    new Alarm(scope, id, {
      metric,
      threshold,
      evaluationPeriods: 1,
      comparisonOperator: comparison,
      treatMissingData: TreatMissingData.NOT_BREACHING,
      alarmDescription: description,
    }).addAlarmAction(new SnsAction(p.topic));
  const sum = { period: ALARM_PERIOD, statistic: 'Sum' };
  /** `100 * part / whole` when whole ≥ RATE_ALARM_MIN_REQUESTS, else 0 */
  const percent = (part: IMetric, whole: IMetric, label: string) =>
    new MathExpression({
      expression: `IF(whole >= ${RATE_ALARM_MIN_REQUESTS}, 100 * part / whole, 0)`,
      usingMetrics: { part, whole },
      period: ALARM_PERIOD,
      label,
    });

  // The HTTP API.
  alarm('Api5xxAlarm', p.stage.metricServerError(sum), 5, 'HTTP API answered 5xx 5+ times in 5 min');
  alarm(
    'Api4xxRateAlarm',
    percent(p.stage.metricClientError(sum), p.stage.metricCount(sum), 'API 4xx %'),
    API_4XX_PERCENT,
    `HTTP API answered ${API_4XX_PERCENT}%+ of its requests 4xx in 5 min (of ${RATE_ALARM_MIN_REQUESTS}+)`,
  );
  // API Gateway has no 429 metric of its own: the access log has every answer's status.
  const api429 = new MetricFilter(scope, 'Api429Filter', {
    logGroup: p.accessLogs,
    filterPattern: FilterPattern.stringValue('$.status', '=', '429'),
    metricNamespace: METRIC_NAMESPACE,
    metricName: 'Api429',
    metricValue: '1',
    defaultValue: 0,
  });
  alarm(
    'Api429RateAlarm',
    percent(api429.metric(sum), p.stage.metricCount(sum), 'API 429 %'),
    API_429_PERCENT,
    `HTTP API answered ${API_429_PERCENT}%+ of its requests 429 (throttle or per-token limit) in 5 min`,
  );

  // The functions: errors are system errors (an unhandled error, a timeout, an init failure); the app's
  // own error answers are responses, counted by the API and URL alarms.
  for (const { name, fn, timeout } of p.functions) {
    alarm(`${name}ErrorsAlarm`, fn.metricErrors(sum), 1, `${name} function errors (5 min)`);
    alarm(`${name}ThrottlesAlarm`, fn.metricThrottles(sum), 1, `${name} function throttled (5 min)`);
    const near = Math.round(timeout.toMilliseconds() * DURATION_ALARM_SHARE);
    alarm(
      `${name}DurationAlarm`,
      fn.metricDuration({ period: ALARM_PERIOD, statistic: 'p99' }),
      near,
      `${name} function p99 duration at ${DURATION_ALARM_SHARE * 100}% of its ${timeout.toSeconds()} s timeout (5 min)`,
    );
  }

  for (const { name, fn } of p.logErrors ?? []) {
    const logged = new MetricFilter(scope, `${name}LogErrorFilter`, {
      logGroup: fn.logs,
      filterPattern: FilterPattern.stringValue('$.level', '=', 'ERROR'),
      metricNamespace: METRIC_NAMESPACE,
      metricName: `${name}LogErrors`,
      metricValue: '1',
      defaultValue: 0,
    });
    alarm(`${name}LogErrorsAlarm`, logged.metric(sum), 1, `${name} function logged an error (5 min)`);
  }

  // The public replay URL (Lambda's function URL metrics).
  const url = (metricName: string) =>
    new Metric({
      namespace: 'AWS/Lambda',
      metricName,
      dimensionsMap: { FunctionName: p.urlFunction.functionName },
      ...sum,
    });
  alarm('ReplayUrl5xxAlarm', url('Url5xxCount'), 5, 'replay function URL answered 5xx 5+ times in 5 min');
  alarm(
    'ReplayUrl4xxRateAlarm',
    percent(url('Url4xxCount'), url('UrlRequestCount'), 'replay URL 4xx %'),
    API_4XX_PERCENT,
    `replay function URL answered ${API_4XX_PERCENT}%+ of its requests 4xx in 5 min (a flood of refused requests costs invocations)`,
  );

  // DynamoDB: throttles of the table and of its index (an index's write throttle throttles the table's
  // writes too), transaction conflicts, and DynamoDB's own errors.
  const table = (metricName: string, index?: string) =>
    p.table.metric(metricName, {
      ...sum,
      ...(index ? { dimensionsMap: { TableName: p.table.tableName, GlobalSecondaryIndexName: index } } : {}),
    });
  for (const kind of ['Read', 'Write'] as const) {
    alarm(
      `State${kind}ThrottleAlarm`,
      table(`${kind}ThrottleEvents`),
      1,
      `state table ${kind.toLowerCase()} throttled`,
    );
    alarm(
      `StateIndex${kind}ThrottleAlarm`,
      table(`${kind}ThrottleEvents`, GSI1),
      1,
      `state table index ${GSI1} ${kind.toLowerCase()} throttled`,
    );
  }
  alarm(
    'StateTransactionConflictAlarm',
    table('TransactionConflict'),
    TRANSACTION_CONFLICTS,
    `${TRANSACTION_CONFLICTS}+ DynamoDB transaction conflicts in 5 min (writers of one session queuing)`,
  );
  alarm(
    'StateSystemErrorsAlarm',
    p.table.metricSystemErrorsForOperations({
      ...sum,
      operations: [
        Operation.GET_ITEM,
        Operation.QUERY,
        Operation.UPDATE_ITEM,
        Operation.TRANSACT_WRITE_ITEMS,
      ],
    }),
    1,
    'DynamoDB answered 5xx (its own errors) on the state table',
  );
}
