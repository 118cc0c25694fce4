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
import {
  HttpApi,
  HttpStage,
  PayloadFormatVersion,
  type ThrottleSettings,
} from 'aws-cdk-lib/aws-apigatewayv2';
import { HttpLambdaIntegration } from 'aws-cdk-lib/aws-apigatewayv2-integrations';
import { Alarm, ComparisonOperator, type IMetric, TreatMissingData } from 'aws-cdk-lib/aws-cloudwatch';
import { SnsAction } from 'aws-cdk-lib/aws-cloudwatch-actions';
import { AttributeType, BillingMode, ProjectionType, Table } from 'aws-cdk-lib/aws-dynamodb';
import { Rule, Schedule } from 'aws-cdk-lib/aws-events';
import { LambdaFunction } from 'aws-cdk-lib/aws-events-targets';
import { AccountRootPrincipal, PolicyDocument, PolicyStatement } from 'aws-cdk-lib/aws-iam';
import { Key, KeySpec, KeyUsage } from 'aws-cdk-lib/aws-kms';
import { FunctionUrlAuthType, InvokeMode } from 'aws-cdk-lib/aws-lambda';
import type { RetentionDays } from 'aws-cdk-lib/aws-logs';
import {
  BlockPublicAccess,
  Bucket,
  BucketEncryption,
  ObjectLockRetention,
  ObjectOwnership,
} from 'aws-cdk-lib/aws-s3';
import { Topic } from 'aws-cdk-lib/aws-sns';
import type { Construct } from 'constructs';
import { digestDynamoAccess, dynamoAccessOf, REPLAY_SIGNING_ACTIONS } from '../functions/access.js';
import { LOG_LEVELS } from '../functions/config.js';
import { GSI1, GSI1_PK, GSI1_SK, PK, SK, TTL_ATTRIBUTE } from '../lib/store/dynamo-schema.js';
import { HansardFunction } from './lambda.js';

export interface HansardStackProps extends StackProps {
  /** the HTTP API's default-stage throttle (requests per second, burst); default 50 / 100 */
  throttle?: ThrottleSettings;
  /**
   * reserved concurrency of the replay function, which a public function URL exposes without API
   * Gateway's throttle; none by default (an account needs 10 unreserved executions left over)
   */
  replayConcurrency?: number;
  logRetention?: RetentionDays;
  /** `LOG_LEVEL` of both functions; default INFO */
  logLevel?: string;
  /** per-token requests a minute (`RATE_LIMIT_PER_MINUTE`; the app's default 600, 0 off) */
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
  readonly signingKey: Key;
  readonly api: HttpApi;

  constructor(scope: Construct, id: string, props: HansardStackProps = {}) {
    super(scope, id, {
      description: 'hansard: session segments (S3), state (DynamoDB), API and replay (Lambda)',
      ...props,
    });

    this.bucket = new Bucket(this, 'Segments', {
      blockPublicAccess: BlockPublicAccess.BLOCK_ALL,
      encryption: BucketEncryption.S3_MANAGED,
      enforceSSL: true,
      versioned: true,
      objectOwnership: ObjectOwnership.BUCKET_OWNER_ENFORCED,
      removalPolicy: RemovalPolicy.RETAIN,
      ...(props.objectLock
        ? {
            objectLockEnabled: true,
            objectLockDefaultRetention:
              props.objectLock.mode === 'COMPLIANCE'
                ? ObjectLockRetention.compliance(Duration.days(props.objectLock.days))
                : ObjectLockRetention.governance(Duration.days(props.objectLock.days)),
          }
        : {}),
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
      reservedConcurrentExecutions: props.replayConcurrency,
    });
    // The app's own limits (issue 5), distinct from the HTTP API's throttle: per token and per tenant.
    for (const fn of [this.apiFunction, this.replayFunction]) {
      if (props.tokenRateLimit !== undefined)
        fn.addEnvironment('RATE_LIMIT_PER_MINUTE', String(props.tokenRateLimit));
      if (props.tenantQuotaBytes !== undefined)
        fn.addEnvironment('TENANT_QUOTA_BYTES', String(props.tenantQuotaBytes));
    }

    // Its segment reads (`tenants/*`, listing under it) cover the digests an export bundles.
    this.replayFunction.bindBucket(this.bucket, 'read');
    // An export's public keys (REPLAY_SIGNING_ACTIONS); no kms:Sign: the API writes the digests.
    this.replayFunction.bindSigningKey(this.signingKey, REPLAY_SIGNING_ACTIONS);
    // Reads, the tokens' last use and the rate limiter's counters: what its routes send, no more.
    this.replayFunction.bindTable(this.table, dynamoAccessOf('replay'));
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
    const stage = new HttpStage(this, 'DefaultStage', {
      httpApi: this.api,
      stageName: '$default',
      autoDeploy: true,
      throttle: props.throttle ?? { rateLimit: 50, burstLimit: 100 },
    });

    const alarms = new Topic(this, 'AlarmTopic', { displayName: 'hansard alarms' });
    const alarm = (id: string, metric: IMetric, threshold: number, description: string) =>
      new Alarm(this, id, {
        metric,
        threshold,
        evaluationPeriods: 1,
        comparisonOperator: ComparisonOperator.GREATER_THAN_OR_EQUAL_TO_THRESHOLD,
        treatMissingData: TreatMissingData.NOT_BREACHING,
        alarmDescription: description,
      }).addAlarmAction(new SnsAction(alarms));
    const fiveMinutes = { period: Duration.minutes(5), statistic: 'Sum' };
    alarm('Api5xxAlarm', stage.metricServerError(fiveMinutes), 5, 'HTTP API answered 5xx 5+ times in 5 min');
    for (const [name, fn] of [
      ['Api', this.apiFunction],
      ['Replay', this.replayFunction],
      ['Digest', this.digestFunction],
    ] as const) {
      alarm(`${name}ErrorsAlarm`, fn.metricErrors(fiveMinutes), 1, `${name} function errors (5 min)`);
      alarm(
        `${name}ThrottlesAlarm`,
        fn.metricThrottles(fiveMinutes),
        1,
        `${name} function throttled (5 min)`,
      );
    }

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
    new CfnOutput(this, 'AlarmTopicArn', { value: alarms.topicArn, description: 'subscribe to get alarms' });
  }
}
