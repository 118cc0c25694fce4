/**
 * The CDK stack (infra/), two ways:
 * - in process with `Template.fromStack`, asserting resources, configuration and least-privilege IAM,
 *   with asset bundling skipped through CDK's own context key (`aws:cdk:bundling-stacks: []`) so the
 *   assertions do not wait for esbuild; the template is otherwise the one `cdk synth` writes;
 * - `npx cdk synth` as a child process, as CI runs it: offline, no AWS credentials, real esbuild bundles,
 *   which are then loaded and invoked once each.
 */
import { spawn } from 'node:child_process';
import { existsSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { App } from 'aws-cdk-lib';
import { Match, Template } from 'aws-cdk-lib/assertions';
import { beforeAll, describe, expect, it } from 'vitest';
import { ALERTS_TIMEOUT } from '../../infra/alerts.js';
import { COMPACT_TIMEOUT } from '../../infra/compaction.js';
import { REPLAY_BUILD_TIMEOUT } from '../../infra/replays.js';
import {
  API_TIMEOUT,
  DEFAULT_THROTTLE,
  DIGEST_TIMEOUT,
  HansardStack,
  REPLAY_TIMEOUT,
} from '../../infra/stack.js';
import { CONDITIONAL_PUT_DENY_SID } from '../../infra/storage.js';
import { createTableInput } from '../../lib/store/dynamo/schema.js';
import { arnText, list, sdkCommandsIn } from '../support/template-text.js';

const ROOT = fileURLToPath(new URL('../../', import.meta.url));
const cdkJson = JSON.parse(readFileSync(join(ROOT, 'cdk.json'), 'utf8')) as {
  app: string;
  context: Record<string, unknown>;
};

type Json = Record<string, unknown>;
interface Statement {
  Effect: 'Allow' | 'Deny';
  Action?: string | string[];
  NotAction?: unknown;
  Resource?: unknown;
  NotResource?: unknown;
  Principal?: unknown;
  Condition?: Json;
  Sid?: string;
}

function synthTemplate(): Template {
  const app = new App({ context: { ...cdkJson.context, 'aws:cdk:bundling-stacks': [] } });
  return Template.fromStack(new HansardStack(app, 'Hansard'));
}

/** Every policy statement anywhere in the template (IAM policies, roles, bucket and topic policies). */
function allStatements(template: Json): { where: string; statement: Statement }[] {
  const found: { where: string; statement: Statement }[] = [];
  const walk = (node: unknown, where: string) => {
    if (Array.isArray(node)) {
      node.forEach((n, i) => {
        walk(n, `${where}[${i}]`);
      });
    } else if (node && typeof node === 'object') {
      for (const [k, v] of Object.entries(node)) {
        if (k === 'Statement') for (const s of list(v as Statement)) found.push({ where, statement: s });
        else walk(v, `${where}.${k}`);
      }
    }
  };
  walk(template.Resources, 'Resources');
  return found;
}

function logicalId(template: Template, type: string, props: Json): string {
  const found = Object.keys(template.findResources(type, { Properties: Match.objectLike(props) }));
  expect(found).toHaveLength(1);
  return found[0]!;
}

/** The Allow statements of the role of the function whose description starts with `prefix`. */
function grantsOf(template: Template, prefix: string): Statement[] {
  const fns = template.findResources('AWS::Lambda::Function');
  const fn = Object.values(fns).find((f) => String((f.Properties as Json).Description).startsWith(prefix));
  const roleId = ((fn!.Properties as Json).Role as { 'Fn::GetAtt': string[] })['Fn::GetAtt'][0];
  const policies = template.findResources('AWS::IAM::Policy');
  return Object.values(policies)
    .filter((p) => list((p.Properties as Json).Roles as unknown[]).some((r) => (r as Json).Ref === roleId))
    .flatMap((p) => list(((p.Properties as Json).PolicyDocument as { Statement: Statement[] }).Statement));
}

/** `{ "s3:GetObject": ["<Bucket>/tenants/*"], … }` for a set of statements. */
function actionMap(statements: Statement[]): Record<string, string[]> {
  const map: Record<string, string[]> = {};
  for (const s of statements) {
    for (const a of list(s.Action)) {
      map[a] = [...(map[a] ?? []), ...list(s.Resource).map(arnText)];
    }
  }
  for (const k of Object.keys(map)) map[k]!.sort();
  return map;
}

describe('HansardStack template', () => {
  let t: Template;
  let json: Json;
  let bucket: string;
  let table: string;
  beforeAll(() => {
    t = synthTemplate();
    json = t.toJSON() as Json;
    bucket = Object.keys(t.findResources('AWS::S3::Bucket'))[0]!;
    table = Object.keys(t.findResources('AWS::DynamoDB::Table'))[0]!;
  });

  it('keeps segments in one private, encrypted, versioned bucket that refuses plain HTTP and outlives the stack', () => {
    t.resourceCountIs('AWS::S3::Bucket', 1);
    t.hasResource('AWS::S3::Bucket', {
      DeletionPolicy: 'Retain',
      UpdateReplacePolicy: 'Retain',
      Properties: {
        BucketEncryption: {
          ServerSideEncryptionConfiguration: [{ ServerSideEncryptionByDefault: { SSEAlgorithm: 'AES256' } }],
        },
        PublicAccessBlockConfiguration: {
          BlockPublicAcls: true,
          BlockPublicPolicy: true,
          IgnorePublicAcls: true,
          RestrictPublicBuckets: true,
        },
        VersioningConfiguration: { Status: 'Enabled' },
        OwnershipControls: { Rules: [{ ObjectOwnership: 'BucketOwnerEnforced' }] },
      },
    });
    t.hasResourceProperties('AWS::S3::BucketPolicy', {
      Bucket: { Ref: bucket },
      PolicyDocument: {
        Statement: Match.arrayWith([
          Match.objectLike({
            Effect: 'Deny',
            Action: 's3:*',
            Principal: { AWS: '*' },
            Condition: { Bool: { 'aws:SecureTransport': 'false' } },
          }),
        ]),
      },
    });
  });

  it('declares the state table exactly as dynamo/schema.ts does, on demand, with TTL, PITR, and retained', () => {
    // `dynamodb.Table`, i.e. AWS::DynamoDB::Table (TableV2 would be AWS::DynamoDB::GlobalTable).
    t.resourceCountIs('AWS::DynamoDB::Table', 1);
    t.resourceCountIs('AWS::DynamoDB::GlobalTable', 0);
    const schema = createTableInput('x');
    const sortByName = <T extends { AttributeName?: string }>(a: T[]) =>
      [...a].sort((x, y) => String(x.AttributeName).localeCompare(String(y.AttributeName)));
    const props = (t.findResources('AWS::DynamoDB::Table')[table] as { Properties: Json }).Properties;
    expect(props.KeySchema).toEqual(schema.KeySchema);
    expect(sortByName(props.AttributeDefinitions as { AttributeName: string }[])).toEqual(
      sortByName(schema.AttributeDefinitions!),
    );
    expect(props.GlobalSecondaryIndexes).toEqual(schema.GlobalSecondaryIndexes);
    t.hasResource('AWS::DynamoDB::Table', {
      DeletionPolicy: 'Retain',
      UpdateReplacePolicy: 'Retain',
      Properties: {
        BillingMode: 'PAY_PER_REQUEST',
        TimeToLiveSpecification: { AttributeName: 'expires_at', Enabled: true },
        PointInTimeRecoverySpecification: { PointInTimeRecoveryEnabled: true },
        DeletionProtectionEnabled: true,
      },
    });
  });

  it('runs six functions on nodejs22.x/arm64, each with its own log group, retention and the data names', () => {
    t.resourceCountIs('AWS::Lambda::Function', 6);
    for (const [prefix, timeout] of [
      ['hansard API', API_TIMEOUT.toSeconds()],
      ['hansard streamed replays', REPLAY_TIMEOUT.toSeconds()],
      ['hansard digester', DIGEST_TIMEOUT.toSeconds()],
      ['hansard replay builder', REPLAY_BUILD_TIMEOUT.toSeconds()],
      ['hansard compactor', COMPACT_TIMEOUT.toSeconds()],
      ['hansard alerts delivery', ALERTS_TIMEOUT.toSeconds()],
    ] as const) {
      const id = logicalId(t, 'AWS::Lambda::Function', { Description: Match.stringLikeRegexp(`^${prefix}`) });
      const fn = (t.findResources('AWS::Lambda::Function')[id] as { Properties: Json }).Properties;
      expect(fn).toMatchObject({
        Runtime: 'nodejs22.x',
        Architectures: ['arm64'],
        Handler: 'index.handler',
        Timeout: timeout,
        Environment: {
          Variables: { BUCKET_NAME: { Ref: bucket }, TABLE_NAME: { Ref: table }, LOG_LEVEL: 'INFO' },
        },
      });
      const logGroup = (fn.LoggingConfig as { LogGroup: { Ref: string } }).LogGroup.Ref;
      t.hasResourceProperties('AWS::Logs::LogGroup', Match.objectLike({ RetentionInDays: 30 }));
      expect(t.findResources('AWS::Logs::LogGroup')[logGroup]).toBeDefined();
    }
    expect(API_TIMEOUT.toSeconds()).toBeLessThan(30); // API Gateway's integration timeout
  });

  it('puts the API function behind an HTTP API whose default stage is throttled', () => {
    const apiFn = logicalId(t, 'AWS::Lambda::Function', {
      Description: Match.stringLikeRegexp('^hansard API'),
    });
    t.resourceCountIs('AWS::ApiGatewayV2::Api', 1);
    t.hasResourceProperties('AWS::ApiGatewayV2::Api', { ProtocolType: 'HTTP' });
    t.hasResourceProperties('AWS::ApiGatewayV2::Integration', {
      IntegrationType: 'AWS_PROXY',
      PayloadFormatVersion: '2.0',
      IntegrationUri: { 'Fn::GetAtt': [apiFn, 'Arn'] },
    });
    t.hasResourceProperties('AWS::ApiGatewayV2::Route', { RouteKey: '$default' });
    t.hasResourceProperties('AWS::ApiGatewayV2::Stage', {
      StageName: '$default',
      AutoDeploy: true,
      DefaultRouteSettings: {
        ThrottlingRateLimit: DEFAULT_THROTTLE.rateLimit,
        ThrottlingBurstLimit: DEFAULT_THROTTLE.burstLimit,
      },
    });
  });

  it('gives the replay function a response-streaming function URL, public only to the function URL path', () => {
    const replayFn = logicalId(t, 'AWS::Lambda::Function', {
      Description: Match.stringLikeRegexp('^hansard streamed replays'),
    });
    t.resourceCountIs('AWS::Lambda::Url', 1);
    t.hasResourceProperties('AWS::Lambda::Url', {
      AuthType: 'NONE',
      InvokeMode: 'RESPONSE_STREAM',
      TargetFunctionArn: { 'Fn::GetAtt': [replayFn, 'Arn'] },
    });
    // Anyone may invoke the replay function, but only through its URL; the API function only from its API;
    // the digester only from its schedule (stack-digests.test.ts).
    const digestFn = logicalId(t, 'AWS::Lambda::Function', {
      Description: Match.stringLikeRegexp('^hansard digester'),
    });
    // the replay builder only from its rule (stack-replays.test.ts), the compactor from its (stack-compaction)
    const builderFn = logicalId(t, 'AWS::Lambda::Function', {
      Description: Match.stringLikeRegexp('^hansard replay builder'),
    });
    const compactFn = logicalId(t, 'AWS::Lambda::Function', {
      Description: Match.stringLikeRegexp('^hansard compactor'),
    });
    // the alerts' delivery function from its schedule (alerts-stack.test.ts; its stream needs no permission)
    const alertsFn = logicalId(t, 'AWS::Lambda::Function', {
      Description: Match.stringLikeRegexp('^hansard alerts delivery'),
    });
    for (const p of Object.values(t.findResources('AWS::Lambda::Permission'))) {
      const props = p.Properties as Json;
      if (props.Principal === 'events.amazonaws.com') {
        expect(
          [digestFn, builderFn, compactFn, alertsFn].map((f) => ({ 'Fn::GetAtt': [f, 'Arn'] })),
        ).toContainEqual(props.FunctionName);
      } else if (props.Principal === '*') {
        expect(props.FunctionName).toEqual({ 'Fn::GetAtt': [replayFn, 'Arn'] });
        expect(props.FunctionUrlAuthType === 'NONE' || props.InvokedViaFunctionUrl === true).toBe(true);
      } else {
        expect(props.Principal).toBe('apigateway.amazonaws.com');
      }
    }
  });

  it('alarms on the API 5xx and on every function errors and throttles, to one topic (the rest: stack-limits.test.ts)', () => {
    const topic = Object.keys(t.findResources('AWS::SNS::Topic'))[0]!;
    t.hasResourceProperties('AWS::CloudWatch::Alarm', {
      Namespace: 'AWS/ApiGateway',
      MetricName: '5xx',
      AlarmActions: [{ Ref: topic }],
    });
    // the alerts' delivery function has an errors alarm and no throttles one (concurrency 1: alerts-stack)
    for (const [metric, n] of [
      ['Errors', 5],
      ['Throttles', 4],
    ] as const) {
      const alarms = t.findResources('AWS::CloudWatch::Alarm', {
        Properties: { Namespace: 'AWS/Lambda', MetricName: metric, AlarmActions: [{ Ref: topic }] },
      });
      expect(Object.keys(alarms)).toHaveLength(n);
    }
  });

  it('is environment-agnostic, so synth needs no account, region or lookups', () => {
    const app = new App({ context: { ...cdkJson.context, 'aws:cdk:bundling-stacks': [] } });
    expect(new HansardStack(app, 'Hansard').environment).toBe('aws://unknown-account/unknown-region');
    expect(cdkJson.context['cli-telemetry']).toBe(false);
  });

  it('outputs what the CLI and the operator need', () => {
    for (const name of ['ApiUrl', 'ReplayUrl', 'BucketName', 'TableName', 'AlarmTopicArn']) {
      t.hasOutput(name, {});
    }
    t.hasOutput('BucketName', { Value: { Ref: bucket } });
    t.hasOutput('TableName', { Value: { Ref: table } });
  });

  describe('IAM', () => {
    it('grants nothing with a * action or a * resource, and no managed policies', () => {
      const bad: string[] = [];
      for (const { where, statement: s } of allStatements(json)) {
        if (s.NotAction !== undefined || s.NotResource !== undefined)
          bad.push(`${where}: NotAction/NotResource`);
        if (s.Effect === 'Deny') {
          // enforceSSL's, which must cover every action on the bucket, and the put without a condition's
          // (stack-fail-closed.test.ts).
          if (s.Sid === CONDITIONAL_PUT_DENY_SID) {
            expect(s).toMatchObject({ Action: 's3:PutObject', Principal: { AWS: '*' } });
            continue;
          }
          // the alerts' dead-letter queue refuses plain HTTP too (alerts-stack.test.ts)
          if (/^Resources\.AlertStreamDlqPolicy\w+\./.test(where)) {
            expect(s).toMatchObject({
              Action: 'sqs:*',
              Condition: { Bool: { 'aws:SecureTransport': 'false' } },
            });
            continue;
          }
          expect(s).toMatchObject({
            Action: 's3:*',
            Condition: { Bool: { 'aws:SecureTransport': 'false' } },
          });
          continue;
        }
        for (const a of list(s.Action)) {
          if (a === '*' || a.endsWith(':*')) bad.push(`${where}: action ${a}`);
        }
        // Role trust policies have no Resource; every grant must name its resources. In a key's own policy
        // `*` means that key (stack-digests, alerts-stack and sign-in-stack tests check those statements).
        const keyPolicy =
          /^Resources\.(DigestSigningKey|AlertSecretKey|SignInSecretKey)\w+\.Properties\.KeyPolicy$/.test(
            where,
          );
        if (s.Action && list(s.Action).some((a) => a !== 'sts:AssumeRole') && !keyPolicy) {
          for (const r of list(s.Resource)) if (arnText(r) === '*') bad.push(`${where}: resource *`);
          if (s.Resource === undefined) bad.push(`${where}: no resource`);
        }
      }
      expect(bad).toEqual([]);
      for (const role of Object.values(t.findResources('AWS::IAM::Role'))) {
        expect((role.Properties as Json).ManagedPolicyArns).toBeUndefined();
      }
    });

    it('grants the API function segments under tenants/, the table and its index, and its own logs', () => {
      const grants = grantsOf(t, 'hansard API');
      expect(actionMap(grants)).toEqual({
        // the stored copies of large replays (issue 17.2): it reads and signs them, writes build markers only
        's3:GetObject': [`<${bucket}>/replays/*`, `<${bucket}>/tenants/*`],
        's3:PutObject': [`<${bucket}>/replays/*.building`, `<${bucket}>/tenants/*`],
        's3:ListBucket': [`<${bucket}>`],
        'dynamodb:GetItem': [`<${table}>`],
        'dynamodb:PutItem': [`<${table}>`],
        'dynamodb:UpdateItem': [`<${table}>`],
        // the digest index (issue 15): a due mark deleted
        'dynamodb:DeleteItem': [`<${table}>`],
        'dynamodb:Query': [`<${table}>`, `<${table}>/index/gsi1`],
        // the export signs a digest; GET /v1/keys reads the key (issue 15.2)
        'kms:Sign': [expect.stringMatching(/^<DigestSigningKey/)],
        'kms:GetPublicKey': [expect.stringMatching(/^<DigestSigningKey/)],
        'kms:DescribeKey': [expect.stringMatching(/^<DigestSigningKey/)],
        // it seals alert targets' secrets (issue 28; the purpose condition: alerts-stack.test.ts), and
        // seals and opens sign-in's (issue 29; its purpose condition: sign-in-stack.test.ts)
        'kms:Encrypt': [
          expect.stringMatching(/^<AlertSecretKey/),
          expect.stringMatching(/^<SignInSecretKey/),
        ],
        'kms:Decrypt': [expect.stringMatching(/^<SignInSecretKey/)],
        'logs:CreateLogStream': [expect.stringMatching(/^<ApiFunctionLogs/)],
        'logs:PutLogEvents': [expect.stringMatching(/^<ApiFunctionLogs/)],
      });
      const listing = grants.find((s) => list(s.Action).includes('s3:ListBucket'))!;
      expect(listing.Condition).toEqual({ StringLike: { 's3:prefix': ['tenants/*'] } });
      // it deletes only digest due marks, deferred counts, alert items (a removed target, its
      // deliveries, due marks and outbox events: issue 28) and sign-in items (a tenant's OIDC settings
      // removed: issue 29), never a tenant's own items (T#…)
      const deletes = grants.filter((s) => list(s.Action).includes('dynamodb:DeleteItem'));
      expect(deletes.map((s) => s.Condition)).toEqual([
        {
          'ForAllValues:StringLike': {
            'dynamodb:LeadingKeys': [
              'ALERT#*',
              'ALERT_DUE#*',
              'ALERT_OUT#*',
              'DIGEST_DUE#*',
              'PENDING#*',
              'SIGNIN#*',
            ],
          },
        },
      ]);
    });

    it('grants the replay function reads only (the public half of the key too), plus UpdateItem on token items (last use) and rate-limit counters', () => {
      const grants = grantsOf(t, 'hansard streamed replays');
      expect(actionMap(grants)).toEqual({
        's3:GetObject': [`<${bucket}>/replays/*`, `<${bucket}>/tenants/*`],
        's3:ListBucket': [`<${bucket}>`],
        // writes only the stored copies of large replays (issue 17.2), never under tenants/
        's3:PutObject': [`<${bucket}>/replays/*`],
        's3:AbortMultipartUpload': [`<${bucket}>/replays/*`],
        'dynamodb:GetItem': [`<${table}>`],
        'dynamodb:Query': [`<${table}>`], // its routes query no index
        'dynamodb:UpdateItem': [`<${table}>`],
        // the export's public keys, never kms:Sign (stack-digests.test.ts)
        'kms:DescribeKey': [expect.stringMatching(/^<DigestSigningKey/)],
        'kms:GetPublicKey': [expect.stringMatching(/^<DigestSigningKey/)],
        'logs:CreateLogStream': [expect.stringMatching(/^<ReplayFunctionLogs/)],
        'logs:PutLogEvents': [expect.stringMatching(/^<ReplayFunctionLogs/)],
      });
      const update = grants.find((s) => list(s.Action).includes('dynamodb:UpdateItem'))!;
      // derived from what the replay function's code sends: stack-dynamo.test.ts
      expect(update.Condition).toEqual({
        'ForAllValues:StringLike': { 'dynamodb:LeadingKeys': ['RL#*', 'TOKEN#*'] },
      });
    });

    it('covers every call the AWS adapters make (so a new call fails here, not in production)', () => {
      const granted = new Set(Object.keys(actionMap(grantsOf(t, 'hansard API'))));
      const needed = new Set<string>();
      // every module of the DynamoDB adapter (lib/store/dynamo/*.ts) but the schema's table creation,
      // which the operator's tooling sends (hansard tenant create, tests), never a function
      const dynamo = readdirSync(join(ROOT, 'lib/store/dynamo'))
        .filter((f) => f.endsWith('.ts') && f !== 'schema.ts')
        .map((f) => readFileSync(join(ROOT, 'lib/store/dynamo', f), 'utf8'))
        .join('\n');
      const docActions: Record<string, string[]> = {
        Get: ['GetItem'],
        Put: ['PutItem'],
        Update: ['UpdateItem'],
        Delete: ['DeleteItem'],
        Query: ['Query'],
        Scan: ['Scan'],
        BatchGet: ['BatchGetItem'],
        BatchWrite: ['BatchWriteItem'],
        TransactGet: ['GetItem'],
        TransactWrite: [],
      };
      for (const [, name] of dynamo.matchAll(/\bnew (\w+)Command\(/g)) {
        const actions = docActions[name!];
        expect(actions, `unknown DynamoDB command ${name}Command`).toBeDefined();
        for (const a of actions!) needed.add(`dynamodb:${a}`);
      }
      // Items of TransactWriteItems are authorized as their own actions.
      for (const [, kind] of dynamo.matchAll(/\{\s*(Put|Update|Delete|ConditionCheck)\s*:/g)) {
        needed.add(`dynamodb:${kind === 'ConditionCheck' ? 'ConditionCheckItem' : `${kind}Item`}`);
      }
      const s3 = ['segment-store.ts', 'segment-objects.ts', 'digest-store.ts']
        .map((f) => readFileSync(join(ROOT, 'lib/store/s3', f), 'utf8'))
        .join('\n');
      const s3Actions: Record<string, string> = {
        GetObject: 's3:GetObject',
        HeadObject: 's3:GetObject',
        PutObject: 's3:PutObject',
        ListObjectsV2: 's3:ListBucket',
        DeleteObject: 's3:DeleteObject',
      };
      const s3Commands = sdkCommandsIn(s3);
      // the reads and writes of segments and digests, listings paged by the SDK's paginator included
      expect(s3Commands).toEqual(['GetObject', 'ListObjectsV2', 'PutObject']);
      for (const name of s3Commands) {
        expect(s3Actions[name], `unknown S3 command ${name}Command`).toBeDefined();
        needed.add(s3Actions[name]!);
      }
      // The KMS signer's calls (lib/audit/kms-signer.ts): the API function makes every one of them.
      const kms = readFileSync(join(ROOT, 'lib/audit/kms-signer.ts'), 'utf8');
      const kmsCalls = [...kms.matchAll(/\bnew (\w+)Command\(/g)].map(([, name]) => `kms:${name}`);
      expect(kmsCalls.sort()).toEqual(['kms:DescribeKey', 'kms:GetPublicKey', 'kms:Sign']);
      for (const a of kmsCalls) needed.add(a);
      expect(needed.size).toBeGreaterThan(3);
      expect([...needed].filter((a) => !granted.has(a))).toEqual([]);
    });
  });
});

/** The environment of a CI runner with no AWS account: no credentials anywhere, no metadata service. */
function offlineEnv(): NodeJS.ProcessEnv {
  const env: NodeJS.ProcessEnv = {};
  for (const [k, v] of Object.entries(process.env)) if (!/^(AWS_|CDK_)/.test(k)) env[k] = v;
  return {
    ...env,
    CDK_DISABLE_CLI_TELEMETRY: 'true',
    AWS_EC2_METADATA_DISABLED: 'true',
    AWS_SHARED_CREDENTIALS_FILE: join(ROOT, '.test-results', 'no-such-credentials'),
    AWS_CONFIG_FILE: join(ROOT, '.test-results', 'no-such-config'),
    NO_COLOR: '1',
  };
}

/** Imports a bundle in a node of its own, as Lambda would: its `handler` must be a function. */
async function expectHandlerLoads(bundle: string, env: NodeJS.ProcessEnv): Promise<void> {
  const script = 'const m = await import(process.argv[1]); console.log(typeof m.handler);';
  const loaded = await run('node', ['--input-type=module', '-e', script, bundle], env, 30_000);
  expect(loaded.out.trim().split('\n').at(-1), loaded.out).toBe('function');
}

function run(
  cmd: string,
  args: string[],
  env: NodeJS.ProcessEnv,
  timeoutMs: number,
): Promise<{ code: number | null; out: string; ms: number }> {
  const started = Date.now();
  return new Promise((resolve, reject) => {
    const child = spawn(cmd, args, { cwd: ROOT, env, stdio: ['ignore', 'pipe', 'pipe'] });
    let out = '';
    child.stdout.on('data', (d) => {
      out += d;
    });
    child.stderr.on('data', (d) => {
      out += d;
    });
    const timer = setTimeout(() => child.kill('SIGKILL'), timeoutMs);
    child.on('error', reject);
    child.on('close', (code) => {
      clearTimeout(timer);
      resolve({ code, out, ms: Date.now() - started });
    });
  });
}

/**
 * Loads a bundle with the Lambda globals stubbed and answers one function URL / API Gateway v2 event;
 * prints `{ status, body }` as JSON.
 */
const INVOKE = `
import { PassThrough } from 'node:stream';
let meta = null;
globalThis.awslambda = {
  streamifyResponse: (f) => f,
  HttpResponseStream: { from: (s, m) => { meta = m; return s; } },
};
const [bundle, method, path] = process.argv.slice(1);
const { handler } = await import(bundle);
const event = {
  version: '2.0', routeKey: '$default', rawPath: path, rawQueryString: '', headers: { host: 'test' },
  isBase64Encoded: false,
  requestContext: { requestId: 'req-1', domainName: 'test', http: { method, path } },
};
const context = { awsRequestId: 'aws-1', functionName: 'f', functionVersion: '1', invokedFunctionArn: 'arn', memoryLimitInMB: '1024' };
if (handler.length === 3) {
  const stream = new PassThrough();
  const parts = [];
  stream.on('data', (d) => parts.push(d));
  await handler(event, stream, context);
  const body = Buffer.concat(parts).toString();
  process.stdout.write(JSON.stringify({ status: meta?.statusCode, streamed: true, body }) + '\\n');
} else {
  const r = await handler(event, context);
  process.stdout.write(JSON.stringify({ status: r.statusCode, body: r.body }) + '\\n');
}
`;

describe('cdk synth (as CI runs it)', () => {
  // Its own folder per run: two runs at once (two checkouts' tests, a developer beside CI) must not share one.
  const outdir = join(ROOT, '.test-results', `cdk.out-${process.pid}`);

  it('synthesizes offline without credentials and bundles the seven functions into loadable ESM', async () => {
    rmSync(outdir, { recursive: true, force: true });
    const synth = await run(
      'npx',
      ['cdk', 'synth', '--quiet', '--no-notices', '--output', outdir],
      offlineEnv(),
      120_000,
    );
    expect(synth.out).not.toMatch(/Error/);
    expect(synth.code).toBe(0);
    console.log(`cdk synth took ${(synth.ms / 1000).toFixed(1)} s`);

    const manifest = JSON.parse(readFileSync(join(outdir, 'Hansard.assets.json'), 'utf8')) as {
      files: Record<string, { source: { path: string; packaging?: string } }>;
    };
    const bundles = Object.values(manifest.files)
      .filter((f) => f.source.packaging === 'zip')
      .map((f) => join(outdir, f.source.path, 'index.mjs'));
    // Six, and search's indexer: the app as `cdk synth` runs it has search on (infra/app.ts, issue 30).
    expect(bundles).toHaveLength(7);
    const env = {
      ...offlineEnv(),
      BUCKET_NAME: 'hansard-test-bucket',
      TABLE_NAME: 'hansard-test-table',
      AWS_REGION: 'us-east-1',
      AWS_SDK_JS_NODE_VERSION_SUPPORT_WARNING_DISABLED: 'true',
      SIGNING_KEY_ARN: 'arn:aws:kms:us-east-1:111122223333:key/1111aaaa-2222-3333-4444-555566667777',
      ALERT_KMS_KEY_ID: 'arn:aws:kms:us-east-1:111122223333:key/2222bbbb-2222-3333-4444-555566667777',
      // Search's cluster and secrets (issue 30): the API and the indexer read them at start.
      SEARCH_CLUSTER_ARN: 'arn:aws:rds:us-east-1:111122223333:cluster:hansard-search',
      SEARCH_SECRET_ARN: 'arn:aws:secretsmanager:us-east-1:111122223333:secret:app-AbCdEf',
      SEARCH_OWNER_SECRET_ARN: 'arn:aws:secretsmanager:us-east-1:111122223333:secret:owner-AbCdEf',
      SEARCH_DATABASE: 'hansard',
    };
    const answers: string[] = [];
    for (const bundle of bundles) {
      expect(existsSync(bundle)).toBe(true);
      // The board's scripts beside it (infra/lambda.ts copies them; lib/board/assets.ts reads them there).
      for (const f of ['htmx.min.js', 'sse.min.js']) {
        expect(existsSync(join(dirname(bundle), 'board-assets', f)), f).toBe(true);
      }
      const code = readFileSync(bundle, 'utf8');
      expect(code.startsWith('import { createRequire')).toBe(true);
      // The AWS SDK is bundled (issue 17.5), never imported from the runtime's copy.
      expect(code).not.toMatch(/from\s*"@aws-sdk\//);
      // Nothing of the local deployment went in (its source map names every module that did; the list
      // and the reasons: bundle-contents.test.ts).
      const { sources } = JSON.parse(readFileSync(`${bundle}.map`, 'utf8')) as { sources: string[] };
      expect(sources.some((s) => s.includes('node_modules/@aws-sdk/client-s3/'))).toBe(true);
      if (sources.some((s) => s.endsWith('functions/digest.ts'))) {
        // The digester (stack-digests.test.ts): the stores and the signer, no app; it loads with its
        // environment. It answers EventBridge, not HTTP.
        expect(sources.some((s) => s.endsWith('lib/deploy/aws-stores.ts'))).toBe(true);
        expect(
          sources.filter((s) => /lib\/http\/app\.ts|lib\/deploy\/aws\.ts|sqlite|node-server/.test(s)),
        ).toEqual([]);
        await expectHandlerLoads(bundle, env);
        answers.push('digest');
        continue;
      }
      if (sources.some((s) => s.endsWith('functions/compact.ts'))) {
        // The compactor (issue 17.2, stack-compaction.test.ts): the stores and the plan, no app; it loads
        // with its environment and answers events: one that names no session is left alone.
        expect(
          sources.filter((s) => /lib\/http\/app\.ts|lib\/deploy\/aws\.ts|sqlite|node-server/.test(s)),
        ).toEqual([]);
        const loaded = await run(
          'node',
          [
            '--input-type=module',
            '-e',
            "const m = await import(process.argv[1]); console.log(JSON.stringify((await m.handler({ source: 'aws.s3', 'detail-type': 'Object Created', detail: { bucket: { name: 'b' }, object: { key: 'tenants/x' } } })).outcome));",
            bundle,
          ],
          env,
          30_000,
        );
        expect(loaded.out.trim().split('\n').at(-1), loaded.out).toBe('"not_a_session"');
        answers.push('compact');
        continue;
      }
      if (sources.some((s) => s.endsWith('functions/alerts.ts'))) {
        // The alerts' delivery function (issue 28, alerts-stack.test.ts): the worker and the KMS sealer, no
        // app; it loads with its environment. It answers EventBridge and the stream, not HTTP.
        expect(sources.some((s) => s.endsWith('lib/deploy/aws-sealer.ts'))).toBe(true);
        expect(
          sources.filter((s) => /lib\/http\/app\.ts|lib\/deploy\/aws\.ts|sqlite|node-server/.test(s)),
        ).toEqual([]);
        await expectHandlerLoads(bundle, env);
        answers.push('alerts');
        continue;
      }
      if (sources.some((s) => s.endsWith('functions/search.ts'))) {
        // Search's indexer (issue 30, search-stack.test.ts): the stream drain over the Data API, no app and
        // no `pg` (bundle-contents.test.ts); it loads with its environment.
        expect(
          sources.filter((s) => /lib\/http\/app\.ts|sqlite|node-server|node_modules\/pg\//.test(s)),
        ).toEqual([]);
        await expectHandlerLoads(bundle, env);
        answers.push('search');
        continue;
      }
      if (sources.some((s) => s.endsWith('functions/replay-build.ts'))) {
        // The replay builder (issue 17.2): the AWS wiring and the merge, no HTTP app; it loads with its
        // environment and answers events: one that names no build marker is left alone.
        expect(sources.filter((s) => /lib\/http\/app\.ts|sqlite|node-server/.test(s))).toEqual([]);
        const loaded = await run(
          'node',
          [
            '--input-type=module',
            '-e',
            "const m = await import(process.argv[1]); console.log(JSON.stringify(await m.handler({ source: 'aws.s3', 'detail-type': 'Object Created', detail: { bucket: { name: 'b' }, object: { key: 'tenants/x' } } })));",
            bundle,
          ],
          env,
          30_000,
        );
        expect(loaded.out.trim().split('\n').at(-1), loaded.out).toBe('["not_a_job"]');
        answers.push('replay-build');
        continue;
      }
      expect(sources.some((s) => s.endsWith('lib/deploy/aws.ts'))).toBe(true);
      expect(
        sources.filter((s) =>
          /better-sqlite3|bindings|store\/sqlite\/|store\/fs\/|node-server|deploy\/local/.test(s),
        ),
      ).toEqual([]);
      const invoke = async (method: string, path: string) => {
        const r = await run('node', ['--input-type=module', '-e', INVOKE, bundle, method, path], env, 30_000);
        expect(r.code, r.out).toBe(0);
        const line = r.out.split('\n').find((l) => l.startsWith('{"status"'))!;
        return { ...(JSON.parse(line) as { status: number; streamed?: boolean; body: string }), out: r.out };
      };
      const healthz = await invoke('GET', '/healthz');
      expect(healthz.status).toBe(200);
      expect(JSON.parse(healthz.body)).toMatchObject({ ok: true });
      // One JSON request line on stdout from the logger, with no path and no headers.
      const log = healthz.out.split('\n').find((l) => l.includes('"message":"request"'))!;
      expect(JSON.parse(log)).toMatchObject({
        method: 'GET',
        route: '/healthz',
        status: 200,
        request_id: 'req-1',
      });
      answers.push(healthz.streamed ? 'replay' : 'api');
      if (healthz.streamed) {
        // The public replay URL serves GET replays and segments only, before any authentication.
        const other = await invoke('POST', '/v1/tokens');
        expect(other.status).toBe(404);
        expect(JSON.parse(other.body)).toMatchObject({ error: { code: 'not_found' } });
      }
    }
    expect(answers.sort()).toEqual([
      'alerts',
      'api',
      'compact',
      'digest',
      'replay',
      'replay-build',
      'search',
    ]);
    rmSync(outdir, { recursive: true, force: true });
  }, 180_000);
});

describe('the app limits from context', () => {
  it('reach both functions as RATE_LIMIT_PER_MINUTE and TENANT_QUOTA_BYTES', () => {
    const app = new App({ context: { 'aws:cdk:bundling-stacks': [] } });
    const stack = new HansardStack(app, 'Limits', { tokenRateLimit: 120, tenantQuotaBytes: 1024 });
    const fns = Template.fromStack(stack).findResources('AWS::Lambda::Function');
    // The functions that serve requests; the digester, the replay builder, the compactor and the alerts'
    // delivery function serve none.
    const serving = Object.values(fns).filter(
      (f) =>
        !/^hansard (digester|replay builder|compactor|alerts delivery)/.test(
          String((f as { Properties: { Description?: string } }).Properties.Description),
        ),
    );
    const envs = serving.map(
      (f) =>
        (f as { Properties: { Environment?: { Variables?: Record<string, string> } } }).Properties.Environment
          ?.Variables ?? {},
    );
    const hansard = envs.filter((e) => 'TABLE_NAME' in e);
    expect(hansard).toHaveLength(2);
    for (const e of hansard)
      expect(e).toMatchObject({ RATE_LIMIT_PER_MINUTE: '120', TENANT_QUOTA_BYTES: '1024' });
  });
});
