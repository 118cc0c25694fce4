/**
 * Search on AWS (issue 30 items 4 and 5): the index's Aurora PostgreSQL Serverless v2 cluster, the
 * indexing function fed by the state table's stream, and the API's and indexer's grants.
 *
 * - **The cluster**: Aurora PostgreSQL 16 (`SEARCH_ENGINE_VERSION`, a version whose minimum capacity may be
 *   0 ACU), one Serverless v2 writer from 0 ACU (paused after `autoPause` idle, billed for storage alone)
 *   to `maxCapacity` ACU, the RDS Data API on, storage encrypted, its master credentials generated into
 *   Secrets Manager. Deletion protection on; removed deliberately, it leaves a final snapshot
 *   (`SNAPSHOT`), not a retained cluster: the index is derived from the record (the segments and the state
 *   table, which are RETAIN) and `hansard search --reindex` rebuilds it, and a retained cluster would be
 *   stranded in a VPC the stack deletes.
 * - **Its VPC** has isolated subnets only, in two zones (Aurora's minimum): no NAT, no internet gateway,
 *   no endpoints. Nothing in it calls out, and nothing connects to it over the network: the functions stay
 *   outside any VPC and reach it through the Data API (HTTPS and IAM), so its security group admits
 *   nothing and sends nothing.
 * - **The queue is the stream** (issue 30 item 5): the indexing function (functions/search.ts) is a
 *   second consumer of the table's stream (the alerts' is the first; two per stream is DynamoDB's
 *   guidance), filtered (`searchStreamFilters`) to writer items and to the items that hold a session's
 *   facts: its status record, its work items and its session item (the title). The stream keeps records
 *   24 h; the index's own cursor (each writer's indexed length) makes any later record of a writer catch
 *   up what an earlier one missed. Batches of up to 100 within a second; a batch whose entries fail is
 *   retried from the first failed record (`batchItemFailures`), halved, `SEARCH_STREAM_RETRIES` times,
 *   then described in the dead-letter queue, whose alarm tells the operator which shard range to reindex.
 *   No sweep on a schedule: see docs/scale.md "Search".
 * - **Two secrets, two database roles** (issue 30 item 6): the master user's (generated with the cluster;
 *   it owns the tables) and the app role's (`SearchAppSecret`, user `SEARCH_APP_USER`, a `DatabaseSecret`
 *   attached to the cluster: a generated password, no rotation, since a rotation function would have to
 *   run in this VPC, which has no way to Secrets Manager). The functions search and index as the app role,
 *   which owns nothing, so row-level security holds it and `search_docs` is left unFORCEd for the owner's
 *   `search_matching`, which reads the GIN index (as the owner, FORCEd, every search would read all of a
 *   tenant's rows: 110 ms against 7 ms at 200,000 documents; lib/store/postgres/schema.ts). The API
 *   function has the app secret alone; the indexer has both.
 * - **The schema** is applied by the indexer, once per container, before the index's first use
 *   (lib/deploy/aws-search.ts `migrateAsOwner`; idempotent DDL): as the master user it makes the app role
 *   a login with the app secret's password, then migrates. No custom resource has to run at deploy
 *   against a cluster that may be paused, and the DDL ships in the bundle of the code that needs it. Until
 *   the indexer has run, GET /v1/search answers 503 `search_unavailable`.
 * - **IAM derived from the code**: the Data API actions the runner sends (functions/access.ts
 *   `SEARCH_DATA_API_ACTIONS`) on the cluster alone, `secretsmanager:GetSecretValue` (the Data API reads
 *   a secret as the caller; the indexer reads the app secret's password itself) on the function's secrets
 *   alone: the app secret for the API function (GET /v1/search), both for the indexer; the indexer's
 *   table reads from `SEARCH_STATE_METHODS` through the access map, its stream reads on the stream alone,
 *   its segment reads under `tenants/`.
 */
import { Duration, RemovalPolicy } from 'aws-cdk-lib';
import type { Table } from 'aws-cdk-lib/aws-dynamodb';
import { SecurityGroup, SubnetType, Vpc } from 'aws-cdk-lib/aws-ec2';
import { PolicyStatement } from 'aws-cdk-lib/aws-iam';
import { FilterCriteria, FilterRule } from 'aws-cdk-lib/aws-lambda';
import { FilterPattern, MetricFilter } from 'aws-cdk-lib/aws-logs';
import {
  AuroraPostgresEngineVersion,
  ClusterInstance,
  Credentials,
  DatabaseCluster,
  DatabaseClusterEngine,
  DatabaseSecret,
} from 'aws-cdk-lib/aws-rds';
import type { Bucket } from 'aws-cdk-lib/aws-s3';
import type { ISecret } from 'aws-cdk-lib/aws-secretsmanager';
import type { ITopic } from 'aws-cdk-lib/aws-sns';
import type { Queue } from 'aws-cdk-lib/aws-sqs';
import type { Construct } from 'constructs';
import { SEARCH_DATA_API_ACTIONS, SEARCH_SECRET_ACTIONS, searchDynamoAccess } from '../functions/access.js';
import { keys, PK, SK } from '../lib/store/dynamo/schema.js';
import { ALARM_PERIOD, METRIC_NAMESPACE } from './alarms.js';
import { HansardFunction, type HansardFunctionProps } from './lambda.js';
import { alarmOn, consumeStateStream } from './state-stream.js';

/** Aurora PostgreSQL 16.8: Serverless v2 down to 0 ACU (auto-pause) needs 16.3 or later. */
export const SEARCH_ENGINE_VERSION = AuroraPostgresEngineVersion.VER_16_8;
/** The database the index lives in (`SEARCH_DATABASE`). */
export const SEARCH_DATABASE = 'hansard_search';
/** The cluster's master user (its password generated into Secrets Manager): the tables' owner. */
export const SEARCH_MASTER_USER = 'hansard_admin';
/** The app role the functions search and index as (its password generated into its own secret). */
export const SEARCH_APP_USER = 'hansard_app';
/** The least capacity: 0 ACU, so the cluster pauses when idle. */
export const SEARCH_MIN_ACU = 0;
/** The most capacity by default: 4 ACU (~8 GiB of memory); docs/scale.md "Search" sizes it. */
export const DEFAULT_SEARCH_MAX_ACU = 4;
/** Idle time before the cluster pauses by default (Aurora's least, 5 minutes). */
export const DEFAULT_SEARCH_AUTO_PAUSE = Duration.minutes(5);
/** A batch of catch-up (a writer's many megabytes after an outage) may take minutes; each 1 MiB is kept. */
export const SEARCH_TIMEOUT = Duration.minutes(5);
/** Stream records per invocation, and how long Lambda gathers them (a result lags ingest by seconds). */
export const SEARCH_BATCH_SIZE = 100;
export const SEARCH_BATCH_WINDOW = Duration.seconds(1);
/** Tries of a failed batch after the first (each halving it), before the dead-letter queue. */
export const SEARCH_STREAM_RETRIES = 10;
/** How long the dead-letter queue keeps a failed batch's description: SQS's longest. */
export const SEARCH_DLQ_RETENTION = Duration.days(14);
/** The stream's iterator age that raises its alarm: search results this late are stale. */
export const SEARCH_ITERATOR_AGE_MS = 5 * 60 * 1000;

/** The stack's `search` option. */
export interface SearchOptions {
  /** the most ACU the writer scales to (0.5 steps, 1 to 256); default `DEFAULT_SEARCH_MAX_ACU` */
  maxCapacity?: number;
  /** idle time before the cluster pauses (5 minutes to 24 hours); default `DEFAULT_SEARCH_AUTO_PAUSE` */
  autoPause?: Duration;
}

/** `maxCapacity` checked at synth (rather than as a failed deployment). */
export function checkedMaxCapacity(v: number | undefined): number {
  const n = v ?? DEFAULT_SEARCH_MAX_ACU;
  if (!Number.isFinite(n) || n < 1 || n > 256 || !Number.isInteger(n * 2))
    throw new Error(`search maxCapacity must be 1 to 256 ACU in steps of 0.5, not ${v}`);
  return n;
}

/** What precedes `tail` in `full` (a key builder's output with its variable part cut off). */
function before(full: string, tail: string): string {
  if (!full.endsWith(tail)) throw new Error(`${full} does not end with ${tail}`);
  return full.slice(0, full.length - tail.length);
}

/**
 * The key prefixes the stream filters match, derived from the store's key builders (lib/store/dynamo/
 * schema.ts): a writer's sort key before its id (`W#`), the status record's sort key (`STATUS`), a work
 * item's before its id (`WORK#`), a session item's before the session id (`S#`), and the tenant partitions
 * all four live in (`T#`).
 */
export function searchKeyShapes() {
  const [t, s, w] = ['tenant', 's_session', 'w_writer'];
  const shapes = {
    tenantPk: before(keys.session(t, s).pk, t),
    writerSk: before(keys.writer(t, s, w).sk, w),
    statusSk: keys.status(t, s).sk,
    workSk: before(keys.work(t, 'wk_1').sk, 'wk_1'),
    sessionSk: before(keys.session(t, s).sk, s),
  };
  for (const k of [keys.writer(t, s, w), keys.status(t, s), keys.work(t, 'wk_1'), keys.session(t, s)]) {
    if (!k.pk.startsWith(shapes.tenantPk)) throw new Error(`${k.pk} is not under ${shapes.tenantPk}`);
  }
  return shapes;
}

/**
 * The stream filters (Lambda event filtering, any of them matching): INSERTs and MODIFYs of
 * 1. writer items: sort key under `W#`, without the `offset` attribute that the chunk records written
 *    under `W#{w}#C#…` before issue 17.6 carry;
 * 2. a session's facts: its status record, a work item, its session item.
 * Removals match neither (lib/deploy/aws-search.ts `searchEntryOf` names no entry for one).
 */
export function searchStreamFilters(): Array<Record<string, unknown>> {
  const k = searchKeyShapes();
  const changed = FilterRule.or('INSERT', 'MODIFY');
  return [
    FilterCriteria.filter({
      eventName: changed,
      dynamodb: {
        Keys: {
          [PK]: { S: FilterRule.beginsWith(k.tenantPk) },
          [SK]: { S: FilterRule.beginsWith(k.writerSk) },
        },
        NewImage: { offset: { N: FilterRule.notExists() } },
      },
    }),
    FilterCriteria.filter({
      eventName: changed,
      dynamodb: {
        Keys: {
          [PK]: { S: FilterRule.beginsWith(k.tenantPk) },
          [SK]: { S: [k.statusSk, { prefix: k.workSk }, { prefix: k.sessionSk }] },
        },
      },
    }),
  ];
}

export interface Search {
  cluster: DatabaseCluster;
  /** the app role's secret (attached to the cluster) */
  appSecret: ISecret;
  vpc: Vpc;
  fn: HansardFunction;
  dlq: Queue;
}

/**
 * Adds the cluster, its VPC, the indexing function, its stream trigger, dead-letter queue and alarms to
 * `scope`, and grants `api` the index (GET /v1/search). The table must have a stream (`NEW_IMAGE`).
 */
export function addSearch(
  scope: Construct,
  o: {
    bucket: Bucket;
    table: Table;
    common: Pick<HansardFunctionProps, 'logRetention' | 'logLevel'>;
    /** the API function: it answers GET /v1/search */
    api: HansardFunction;
    alarms: ITopic;
    options: SearchOptions;
  },
): Search {
  const vpc = new Vpc(scope, 'SearchVpc', {
    maxAzs: 2,
    natGateways: 0,
    createInternetGateway: false,
    subnetConfiguration: [{ name: 'search', subnetType: SubnetType.PRIVATE_ISOLATED, cidrMask: 24 }],
    // No custom resource (a Lambda of CDK's own) to strip the default group's rules: nothing runs in the
    // VPC, and the cluster uses its own group.
    restrictDefaultSecurityGroup: false,
  });
  const noTraffic = new SecurityGroup(scope, 'SearchClusterGroup', {
    vpc,
    description: 'hansard search cluster: no traffic in or out (the functions use the Data API)',
    allowAllOutbound: false,
  });
  const cluster = new DatabaseCluster(scope, 'SearchCluster', {
    engine: DatabaseClusterEngine.auroraPostgres({ version: SEARCH_ENGINE_VERSION }),
    writer: ClusterInstance.serverlessV2('writer', { autoMinorVersionUpgrade: true }),
    serverlessV2MinCapacity: SEARCH_MIN_ACU,
    serverlessV2MaxCapacity: checkedMaxCapacity(o.options.maxCapacity),
    serverlessV2AutoPauseDuration: o.options.autoPause ?? DEFAULT_SEARCH_AUTO_PAUSE,
    enableDataApi: true,
    storageEncrypted: true,
    credentials: Credentials.fromGeneratedSecret(SEARCH_MASTER_USER),
    defaultDatabaseName: SEARCH_DATABASE,
    vpc,
    vpcSubnets: { subnetType: SubnetType.PRIVATE_ISOLATED },
    securityGroups: [noTraffic],
    deletionProtection: true,
    removalPolicy: RemovalPolicy.SNAPSHOT,
    copyTagsToSnapshot: true,
  });
  const ownerSecret = cluster.secret;
  if (!ownerSecret) throw new Error('the search cluster has no credentials secret');
  // The app role's login: made a role by the indexer as the master user (lib/deploy/aws-search.ts).
  const appSecret = new DatabaseSecret(scope, 'SearchAppSecret', { username: SEARCH_APP_USER }).attach(
    cluster,
  );

  /** The index's environment and grants: the Data API on the cluster, the value of `secrets` alone. */
  const bindIndex = (fn: HansardFunction, secrets: { app: ISecret; owner?: ISecret }) => {
    fn.addEnvironment('SEARCH_CLUSTER_ARN', cluster.clusterArn);
    fn.addEnvironment('SEARCH_SECRET_ARN', secrets.app.secretArn);
    fn.addEnvironment('SEARCH_DATABASE', SEARCH_DATABASE);
    if (secrets.owner) fn.addEnvironment('SEARCH_OWNER_SECRET_ARN', secrets.owner.secretArn);
    fn.addToRolePolicy(
      new PolicyStatement({
        sid: 'SearchDataApi',
        actions: [...SEARCH_DATA_API_ACTIONS],
        resources: [cluster.clusterArn],
      }),
    );
    fn.addToRolePolicy(
      new PolicyStatement({
        sid: 'SearchSecrets',
        actions: [...SEARCH_SECRET_ACTIONS],
        resources: [secrets.app.secretArn, ...(secrets.owner ? [secrets.owner.secretArn] : [])],
      }),
    );
  };
  // The API searches (and reindexes on request) as the app role only: it never migrates.
  bindIndex(o.api, { app: appSecret });

  const fn = new HansardFunction(scope, 'SearchFunction', {
    ...o.common,
    entry: 'functions/search.ts',
    description: 'hansard search indexer: indexes what the state stream announces (writers, status, work)',
    timeout: SEARCH_TIMEOUT,
  });
  fn.bindBucket(o.bucket, 'read');
  fn.bindTable(o.table, searchDynamoAccess());
  // The indexer indexes as the app role and, once per container, migrates as the master user.
  bindIndex(fn, { app: appSecret, owner: ownerSecret });

  // What came before the deployment is indexed by `hansard search --reindex`.
  const { dlq } = consumeStateStream(scope, {
    prefix: 'Search',
    what: 'search',
    needs: 'search needs one',
    table: o.table,
    fn,
    alarms: o.alarms,
    batchSize: SEARCH_BATCH_SIZE,
    batchWindow: SEARCH_BATCH_WINDOW,
    retries: SEARCH_STREAM_RETRIES,
    dlqRetention: SEARCH_DLQ_RETENTION,
    iteratorAgeMs: SEARCH_ITERATOR_AGE_MS,
    filters: searchStreamFilters(),
    reportBatchItemFailures: true,
    dlqHint: ' (reindex)',
  });

  // An entry that fails is logged (ERROR) and retried, not an invocation error, so the log has its own alarm.
  const alarm = alarmOn(scope, o.alarms);
  alarm('SearchErrorsAlarm', {
    metric: fn.metricErrors({ period: ALARM_PERIOD, statistic: 'Sum' }),
    threshold: 1,
    alarmDescription: 'search indexer errors (5 min): the function failed, not one entry',
  });
  const logged = new MetricFilter(scope, 'SearchLogErrorFilter', {
    logGroup: fn.logs,
    filterPattern: FilterPattern.stringValue('$.level', '=', 'ERROR'),
    metricNamespace: METRIC_NAMESPACE,
    metricName: 'SearchLogErrors',
    metricValue: '1',
    defaultValue: 0,
  });
  alarm('SearchLogErrorsAlarm', {
    metric: logged.metric({ period: ALARM_PERIOD, statistic: 'Sum' }),
    threshold: 1,
    alarmDescription: 'search indexer: indexing an entry failed (5 min; Lambda retries it from its record)',
  });
  return { cluster, appSecret, vpc, fn, dlq };
}
