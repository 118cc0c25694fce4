/**
 * `HansardStack`: hansard on AWS (DESIGN §1, §5). One S3 bucket for segments, one DynamoDB table for
 * state, the API function behind an HTTP API, the replay function behind a response-streaming function
 * URL, alarms and the outputs the CLI needs. Everything synthesizes offline: no lookups, no account or
 * region baked in (the stack is environment-agnostic; `cdk deploy` picks the profile's).
 *
 * Both data resources are RETAIN: deleting the stack never deletes the record. docs/deploy.md says how
 * to remove them deliberately.
 */
import { CfnOutput, Duration, RemovalPolicy, Stack, type StackProps } from 'aws-cdk-lib';
import { AccessLogFormat } from 'aws-cdk-lib/aws-apigateway';
import {
  HttpApi,
  HttpStage,
  LogGroupLogDestination,
  PayloadFormatVersion,
  type ThrottleSettings,
} from 'aws-cdk-lib/aws-apigatewayv2';
import { HttpLambdaIntegration } from 'aws-cdk-lib/aws-apigatewayv2-integrations';
import { AttributeType, BillingMode, ProjectionType, StreamViewType, Table } from 'aws-cdk-lib/aws-dynamodb';
import { Rule, Schedule } from 'aws-cdk-lib/aws-events';
import { LambdaFunction } from 'aws-cdk-lib/aws-events-targets';
import { AccountRootPrincipal, PolicyDocument, PolicyStatement } from 'aws-cdk-lib/aws-iam';
import { Key, KeySpec, KeyUsage } from 'aws-cdk-lib/aws-kms';
import { FunctionUrlAuthType, InvokeMode } from 'aws-cdk-lib/aws-lambda';
import { LogGroup, RetentionDays } from 'aws-cdk-lib/aws-logs';
import type { Bucket } from 'aws-cdk-lib/aws-s3';
import { Secret } from 'aws-cdk-lib/aws-secretsmanager';
import { Topic } from 'aws-cdk-lib/aws-sns';
import type { Construct } from 'constructs';
import { digestDynamoAccess, dynamoAccessOf, REPLAY_SIGNING_ACTIONS } from '../functions/access.js';
import { LOG_LEVELS } from '../functions/config.js';
import { GSI1, GSI1_PK, GSI1_SK, PK, SK, TTL_ATTRIBUTE } from '../lib/store/dynamo/schema.js';
import { addAlarms } from './alarms.js';
import { addAlerts, checkedBoardOrigin } from './alerts.js';
import { addCompaction } from './compaction.js';
import { type EdgeOptions, ReplayEdge } from './edge.js';
import { HansardFunction } from './lambda.js';
import { addStoredReplays, REPLAY_BUILD_TIMEOUT } from './replays.js';
import { addSearch, type Search, type SearchOptions } from './search.js';
import { addSignIn } from './sign-in.js';
import { type SegmentLifecycle, segmentBucket } from './storage.js';

export interface HansardStackProps extends StackProps {
  /**
   * the HTTP API's default-stage throttle, requests per second and burst for all callers together;
   * default `DEFAULT_THROTTLE` (docs/scale.md: what it is sized for)
   */
  throttle?: ThrottleSettings;
  /**
   * reserved concurrency of the replay function, which its public function URL exposes without API
   * Gateway's throttle: at most this many replays stream at once, and a flood of requests costs at most
   * this many instances. Default `DEFAULT_REPLAY_CONCURRENCY`; `'none'` reserves none (an account must
   * keep 100 executions unreserved, so one whose concurrency quota is under 150 cannot reserve 50).
   */
  replayConcurrency?: number | 'none';
  logRetention?: RetentionDays;
  /** `LOG_LEVEL` of both functions; default INFO */
  logLevel?: string;
  /**
   * requests a minute per token, the session tokens it minted included (`RATE_LIMIT_PER_MINUTE`; 0 off);
   * default `DEFAULT_TOKEN_RATE_LIMIT`. A tenant's own rate (`hansard tenant set --rate-limit`) overrides it.
   */
  tokenRateLimit?: number;
  /** bytes of segments a tenant may store (`TENANT_QUOTA_BYTES`; the app's default 10 GiB) */
  tenantQuotaBytes?: number;
  /**
   * S3 Object Lock on the segments bucket (issue 15.4): every object (segments and signed digests) is
   * write-once for `days` in `mode` (GOVERNANCE: users with s3:BypassGovernanceRetention may still delete;
   * COMPLIANCE: nobody, not even the account root, until it expires). Off by default: it can only be
   * turned on for a new bucket, and what it keeps is paid for until it expires (docs/deploy.md).
   */
  objectLock?: { mode: 'GOVERNANCE' | 'COMPLIANCE'; days: number };
  /** the digest cadence's base interval in seconds (`DIGEST_INTERVAL_SECONDS`; the app's default 300) */
  digestIntervalSeconds?: number;
  /** the segments bucket's lifecycle rules (infra/storage.ts `DEFAULT_LIFECYCLE`) */
  lifecycle?: SegmentLifecycle;
  /** CloudFront with a WAF rate rule in front of the replay URL (infra/edge.ts); off when absent */
  edge?: EdgeOptions;
  /**
   * the board's origin in alert events' links (`BOARD_ORIGIN` of the delivery function, issue 28) and of
   * sign-in's redirect URI `{origin}/login/oidc/callback` (`BOARD_ORIGIN` of the API function, issue 29),
   * e.g. `https://hansard.example.com` behind a custom domain; default the HTTP API's URL, which serves
   * the board
   */
  boardOrigin?: string;
  /**
   * search on Aurora PostgreSQL Serverless v2 through the Data API, indexed from the table's stream (issue
   * 30, infra/search.ts); off when absent: GET /v1/search answers 503
   */
  search?: SearchOptions;
}

/**
 * 1,000 requests a second, bursts of 2,000, for the whole deployment: the issue-17 tenant's peak (100
 * writers of a session and 20 sessions ingesting at once, ~200 req/s) several times over, below the
 * account's HTTP API quota (10,000/s per region) and, at ~0.2 s a request, ~200 Lambda executions of the
 * account's 1,000 (docs/scale.md).
 */
export const DEFAULT_THROTTLE = { rateLimit: 1_000, burstLimit: 2_000 } as const satisfies ThrottleSettings;
/**
 * 6,000 requests a minute per token (100 a second): the 100 writers of one session sharing a token,
 * each sending a chunk a second. The counter is one DynamoDB item per token and minute, far below a
 * partition's 1,000 writes a second.
 */
export const DEFAULT_TOKEN_RATE_LIMIT = 6_000;
/**
 * 50 replays streaming at once: at up to 2 MB/s each after their first 6 MB, 100 MB/s of replays; a
 * flood of requests costs at most 50 GB-seconds a second (~$0.04 a minute on arm64).
 */
export const DEFAULT_REPLAY_CONCURRENCY = 50;

/**
 * The API's access log line ($context variables of HTTP API access logging): the request id (the
 * function's `request_id`), method, status, sizes (`dataProcessed` is what API Gateway meters, in 512 KB
 * steps), latencies and errors. Strings all, so that a missing value (`-`) never breaks the JSON.
 */
export const ACCESS_LOG_FIELDS = {
  requestId: '$context.requestId',
  requestTime: '$context.requestTimeEpoch',
  method: '$context.httpMethod',
  status: '$context.status',
  protocol: '$context.protocol',
  sourceIp: '$context.identity.sourceIp',
  responseLength: '$context.responseLength',
  dataProcessed: '$context.dataProcessed',
  responseLatency: '$context.responseLatency',
  integrationLatency: '$context.integrationLatency',
  integrationStatus: '$context.integrationStatus',
  integrationError: '$context.integrationErrorMessage',
  error: '$context.error.message',
  errorType: '$context.error.responseType',
} as const;

/** `reservedConcurrentExecutions` for the replay function from its prop (none for `'none'`). */
function replayConcurrency(v: number | 'none' | undefined): number | undefined {
  if (v === 'none') return undefined;
  const n = v ?? DEFAULT_REPLAY_CONCURRENCY;
  // 0 would stop every invocation: a reservation of none is `'none'`.
  if (!Number.isInteger(n) || n < 1)
    throw new Error(`replay concurrency must be a whole number ≥ 1 or 'none', not ${n}`);
  return n;
}

/** API Gateway's HTTP API integration timeout is 30 s (not adjustable); the function must end first. */
export const API_TIMEOUT = Duration.seconds(29);
/** A 200 MB replay streams at 2 MB/s after its first 6 MB: about 100 s, plus reading and merging. */
export const REPLAY_TIMEOUT = Duration.minutes(5);
/** The digester runs every minute; a run ends (DIGESTS_PER_RUN) well before the next would overlap much. */
export const DIGEST_TIMEOUT = Duration.seconds(50);

/**
 * What the account may do with the digest signing key (its key policy): administer it and, through the
 * roles' own IAM policies, use it. Named actions, not `kms:*`: the account cannot, say, re-import it.
 */
export const SIGNING_KEY_ACCOUNT_ACTIONS = [
  'kms:CancelKeyDeletion',
  'kms:CreateAlias',
  'kms:DeleteAlias',
  'kms:DescribeKey',
  'kms:DisableKey',
  'kms:EnableKey',
  'kms:GetKeyPolicy',
  'kms:GetPublicKey',
  'kms:ListAliases',
  'kms:ListResourceTags',
  'kms:PutKeyPolicy',
  'kms:ScheduleKeyDeletion',
  'kms:Sign',
  'kms:TagResource',
  'kms:UntagResource',
  'kms:UpdateAlias',
  'kms:UpdateKeyDescription',
  'kms:Verify',
];

export class HansardStack extends Stack {
  readonly bucket: Bucket;
  readonly table: Table;
  readonly apiFunction: HansardFunction;
  readonly replayFunction: HansardFunction;
  readonly digestFunction: HansardFunction;
  readonly replayBuildFunction: HansardFunction;
  readonly compactFunction: HansardFunction;
  readonly alertsFunction: HansardFunction;
  readonly signingKey: Key;
  /** seals the OIDC client secrets and the cookie keys (issue 29, infra/sign-in.ts) */
  readonly signInKey: Key;
  /** the search index's cluster and indexing function (issue 30), when `search` is on */
  readonly search: Search | null;
  readonly api: HttpApi;

  constructor(scope: Construct, id: string, props: HansardStackProps = {}) {
    super(scope, id, {
      description: 'hansard: session segments (S3), state (DynamoDB), API and replay (Lambda)',
      ...props,
    });

    this.bucket = segmentBucket(this, 'Segments', {
      lifecycle: props.lifecycle,
      objectLock: props.objectLock,
    });

    // The digest signing key (issue 15.2): Ed25519 in KMS, the private half never leaves it. Retained with
    // the data: deleting it would leave every digest it signed unverifiable against a fresh key.
    this.signingKey = new Key(this, 'DigestSigningKey', {
      description: 'hansard: signs the session digests (Ed25519)',
      keySpec: KeySpec.ECC_NIST_EDWARDS25519,
      keyUsage: KeyUsage.SIGN_VERIFY,
      removalPolicy: RemovalPolicy.RETAIN,
      policy: new PolicyDocument({
        statements: [
          new PolicyStatement({
            sid: 'AccountAdministersAndDelegatesToIam',
            principals: [new AccountRootPrincipal()],
            actions: SIGNING_KEY_ACCOUNT_ACTIONS,
            // In a key policy `*` is this key.
            resources: ['*'],
          }),
        ],
      }),
    });

    // `Table` (AWS::DynamoDB::Table), not `TableV2` (AWS::DynamoDB::GlobalTable): one region, and the
    // resource type most tooling and policies expect.
    this.table = new Table(this, 'State', {
      partitionKey: { name: PK, type: AttributeType.STRING },
      sortKey: { name: SK, type: AttributeType.STRING },
      billingMode: BillingMode.PAY_PER_REQUEST,
      timeToLiveAttribute: TTL_ATTRIBUTE,
      pointInTimeRecoverySpecification: { pointInTimeRecoveryEnabled: true },
      deletionProtection: true,
      removalPolicy: RemovalPolicy.RETAIN,
      // The alerts' delivery function wakes on outbox INSERTs (issue 28, infra/alerts.ts).
      stream: StreamViewType.NEW_IMAGE,
    });
    this.table.addGlobalSecondaryIndex({
      indexName: GSI1,
      partitionKey: { name: GSI1_PK, type: AttributeType.STRING },
      sortKey: { name: GSI1_SK, type: AttributeType.STRING },
      projectionType: ProjectionType.ALL,
    });

    const logLevel = (props.logLevel ?? 'INFO').toUpperCase();
    if (!(LOG_LEVELS as readonly string[]).includes(logLevel)) {
      // Caught here rather than as a failed cold start after deploying.
      throw new Error(`log level ${props.logLevel} is not one of ${LOG_LEVELS.join(', ')}`);
    }
    const common = { logRetention: props.logRetention, logLevel };
    this.apiFunction = new HansardFunction(this, 'ApiFunction', {
      ...common,
      entry: 'functions/api.ts',
      description: 'hansard API (behind the HTTP API)',
      timeout: API_TIMEOUT,
    });
    this.apiFunction.bindBucket(this.bucket, 'readwrite');
    this.apiFunction.bindTable(this.table, dynamoAccessOf('all'));
    // The export writes a digest (Sign, and the key id from GetPublicKey); GET /v1/keys lists the keys
    // with their creation dates (GetPublicKey, DescribeKey).
    this.apiFunction.bindSigningKey(this.signingKey, ['kms:Sign', 'kms:GetPublicKey', 'kms:DescribeKey']);

    this.digestFunction = new HansardFunction(this, 'DigestFunction', {
      ...common,
      entry: 'functions/digest.ts',
      description: 'hansard digester: signs a digest of each session due one, every minute',
      timeout: DIGEST_TIMEOUT,
      memorySize: 512,
    });
    this.digestFunction.bindDigests(this.bucket);
    this.digestFunction.bindTable(this.table, digestDynamoAccess());
    this.digestFunction.bindSigningKey(this.signingKey, ['kms:Sign', 'kms:GetPublicKey']);
    new Rule(this, 'DigestSchedule', {
      description: 'hansard: write the signed digests due (functions/digest.ts)',
      schedule: Schedule.rate(Duration.minutes(1)),
      // A failed run is not retried: the sessions stay due and the next run, a minute later, takes them.
      targets: [new LambdaFunction(this.digestFunction, { retryAttempts: 0 })],
    });
    if (props.digestIntervalSeconds !== undefined) {
      for (const fn of [this.apiFunction, this.digestFunction])
        fn.addEnvironment('DIGEST_INTERVAL_SECONDS', String(props.digestIntervalSeconds));
    }

    this.replayFunction = new HansardFunction(this, 'ReplayFunction', {
      ...common,
      entry: 'functions/replay.ts',
      description:
        'hansard streamed replays and segment downloads (function URL, bearer token checked in code)',
      timeout: REPLAY_TIMEOUT,
      reservedConcurrentExecutions: replayConcurrency(props.replayConcurrency),
    });
    // The app's own limits (issue 5), distinct from the HTTP API's throttle: per token and per tenant.
    for (const fn of [this.apiFunction, this.replayFunction]) {
      fn.addEnvironment('RATE_LIMIT_PER_MINUTE', String(props.tokenRateLimit ?? DEFAULT_TOKEN_RATE_LIMIT));
      if (props.tenantQuotaBytes !== undefined)
        fn.addEnvironment('TENANT_QUOTA_BYTES', String(props.tenantQuotaBytes));
    }

    // Its segment reads (`tenants/*`, listing under it) cover the digests an export bundles.
    this.replayFunction.bindBucket(this.bucket, 'read');
    // An export's public keys (REPLAY_SIGNING_ACTIONS); no kms:Sign: the API writes the digests.
    this.replayFunction.bindSigningKey(this.signingKey, REPLAY_SIGNING_ACTIONS);
    // Reads, the tokens' last use and the rate limiter's counters: what its routes send, no more.
    this.replayFunction.bindTable(this.table, dynamoAccessOf('replay'));
    // Sessions too large to stream are answered with a stored copy (issue 17.2): the builder and the grants.
    this.replayBuildFunction = addStoredReplays(this, {
      bucket: this.bucket,
      table: this.table,
      common,
      api: this.apiFunction,
      replay: this.replayFunction,
    });
    // Small chunk objects of settled writers rewritten as compacted runs (issue 17.2), after each digest.
    // Not in the alarms' list: with a concurrency of 1, throttles are how its events queue.
    const alarms = new Topic(this, 'AlarmTopic', { displayName: 'hansard alarms' });
    this.compactFunction = addCompaction(this, {
      bucket: this.bucket,
      table: this.table,
      common,
      failures: alarms,
    });
    // Alerts (issue 28): the delivery function, its schedule and stream trigger, the secrets' key, the DLQ.
    this.alertsFunction = addAlerts(this, {
      bucket: this.bucket,
      table: this.table,
      common,
      api: this.apiFunction,
      alarms,
    }).fn;
    // Team sign-in (issue 29): the API seals and opens the OIDC client secrets and cookie keys with a key
    // of its own (why not the alerts' key: infra/sign-in.ts).
    this.signInKey = addSignIn(this, { api: this.apiFunction });
    // Search (issue 30): the index's cluster, the indexer on the table's stream, the API's grants.
    this.search = props.search
      ? addSearch(this, {
          bucket: this.bucket,
          table: this.table,
          common,
          api: this.apiFunction,
          alarms,
          options: props.search,
        })
      : null;
    // No IAM auth and no authorizer: a function URL has none to offer for a bearer token, so the function
    // itself authenticates every request (the app's `requireAuth`) and serves only GET replay routes.
    const replayUrl = this.replayFunction.addFunctionUrl({
      authType: FunctionUrlAuthType.NONE,
      invokeMode: InvokeMode.RESPONSE_STREAM,
    });

    this.api = new HttpApi(this, 'HttpApi', {
      description: 'hansard API',
      createDefaultStage: false,
      defaultIntegration: new HttpLambdaIntegration('ApiIntegration', this.apiFunction, {
        payloadFormatVersion: PayloadFormatVersion.VERSION_2_0,
      }),
    });
    // Access logs: one JSON line per request, never its path, query or headers (docs/deploy.md "Logs").
    const accessLogs = new LogGroup(this, 'ApiAccessLogs', {
      retention: props.logRetention ?? RetentionDays.ONE_MONTH,
      removalPolicy: RemovalPolicy.DESTROY,
    });
    const stage = new HttpStage(this, 'DefaultStage', {
      httpApi: this.api,
      stageName: '$default',
      autoDeploy: true,
      throttle: props.throttle ?? DEFAULT_THROTTLE,
      accessLogSettings: {
        destination: new LogGroupLogDestination(accessLogs),
        format: AccessLogFormat.custom(JSON.stringify(ACCESS_LOG_FIELDS)),
      },
    });

    addAlarms(this, {
      topic: alarms,
      stage,
      accessLogs,
      table: this.table,
      urlFunction: this.replayFunction,
      // A writer the compactor left as it was (mismatch, conflict, layout) is logged, never a failure.
      logErrors: [{ name: 'Compact', fn: this.compactFunction }],
      functions: [
        { name: 'Api', fn: this.apiFunction, timeout: API_TIMEOUT },
        { name: 'Replay', fn: this.replayFunction, timeout: REPLAY_TIMEOUT },
        { name: 'Digest', fn: this.digestFunction, timeout: DIGEST_TIMEOUT },
        { name: 'ReplayBuild', fn: this.replayBuildFunction, timeout: REPLAY_BUILD_TIMEOUT },
      ],
    });

    if (props.edge) {
      // CloudFront sends this secret with every request it forwards and the function refuses any request
      // without it, so the function URL cannot be called around WAF (lib/http/origin-secret.ts). The
      // template holds only a dynamic reference to it, resolved by CloudFormation at deploy.
      const originSecret = new Secret(this, 'ReplayOriginSecret', {
        description: 'hansard: the header CloudFront adds to the replay requests it forwards',
        generateSecretString: { passwordLength: 48, excludePunctuation: true, includeSpace: false },
      });
      const secretValue = originSecret.secretValue.unsafeUnwrap();
      this.replayFunction.addEnvironment('EDGE_ORIGIN_SECRET', secretValue);
      // A new version updates the function too (its configuration, so the secret is resolved again).
      this.replayFunction.addEnvironment('EDGE_ORIGIN_SECRET_VERSION', props.edge.originSecretVersion ?? '1');
      const edge = new ReplayEdge(this, 'ReplayEdge', {
        ...props.edge,
        url: replayUrl,
        originSecret: secretValue,
      });
      new CfnOutput(this, 'ReplayEdgeUrl', {
        value: `https://${edge.distribution.distributionDomainName}/`,
        description: 'the replay URL behind CloudFront and WAF (use it instead of ReplayUrl)',
      });
    }

    // The links in alert events point at the board, which the API serves (issue 28); sign-in's redirect
    // URI is on the same origin (issue 29), fixed here rather than taken from each request's Host.
    const boardOrigin = checkedBoardOrigin(props.boardOrigin) ?? stage.url;
    this.alertsFunction.addEnvironment('BOARD_ORIGIN', boardOrigin);
    this.apiFunction.addEnvironment('BOARD_ORIGIN', boardOrigin);

    new CfnOutput(this, 'ApiUrl', { value: stage.url, description: 'HANSARD_URL for the CLI' });
    new CfnOutput(this, 'ReplayUrl', {
      value: replayUrl.url,
      description: 'streamed replays and segment downloads of any size (GET only)',
    });
    new CfnOutput(this, 'BucketName', { value: this.bucket.bucketName });
    new CfnOutput(this, 'TableName', {
      value: this.table.tableName,
      description: 'for hansard tenant create',
    });
    new CfnOutput(this, 'SigningKeyArn', {
      value: this.signingKey.keyArn,
      description: 'the KMS key that signs the session digests (its public key: GET /v1/keys)',
    });
    new CfnOutput(this, 'CompactFunctionName', {
      value: this.compactFunction.functionName,
      description: 'compacts a session on demand: aws lambda invoke --payload {"tenant":…,"sid":…}',
    });
    new CfnOutput(this, 'SignInRedirectUri', {
      // stage.url ends with `/`; a checked boardOrigin does not
      value: props.boardOrigin ? `${boardOrigin}/login/oidc/callback` : `${boardOrigin}login/oidc/callback`,
      description: "the redirect URI to register at each tenant's OpenID provider (docs/deploy.md)",
    });
    new CfnOutput(this, 'AlarmTopicArn', { value: alarms.topicArn, description: 'subscribe to get alarms' });
  }
}
