/**
 * Alerts in HansardStack (infra/alerts.ts, issue 28 item 6), from the synthesized template, each
 * assertion derived from the code it must agree with: the delivery function's DynamoDB grants from
 * `ALERTS_STATE_METHODS` through the access map; its KMS grants, and the API's, from the sealer's calls
 * and its encryption context; the stream filter from the outbox keys `keys.alertOutbox` makes; the
 * dead-letter queue, the schedule and the alarms.
 */
import { spawnSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { App } from 'aws-cdk-lib';
import { Template } from 'aws-cdk-lib/assertions';
import { beforeAll, describe, expect, it } from 'vitest';
import { ALERT_SECRET_PURPOSE, ALERTS_STATE_METHODS, alertsDynamoAccess } from '../../functions/access.js';
import {
  ALERT_DLQ_RETENTION,
  ALERT_ITERATOR_AGE_MS,
  ALERT_KEY_ADMIN_ACTIONS,
  ALERT_PURPOSE_CONDITION,
  ALERT_STREAM_RETRIES,
  ALERTS_CONCURRENCY,
  ALERTS_TIMEOUT,
  checkedBoardOrigin,
} from '../../infra/alerts.js';
import { HansardStack, type HansardStackProps } from '../../infra/stack.js';
import { accessOf, READ_ACTIONS } from '../../lib/store/dynamo/access.js';
import { keys } from '../../lib/store/dynamo/schema.js';
import { arnText, list, sdkCommandsIn } from '../support/template-text.js';
import { bundleLambda, ROOT } from './lambda-bundle.js';

type Json = Record<string, unknown>;
interface Statement {
  Sid?: string;
  Effect: string;
  Action: string | string[];
  Resource?: unknown;
  Condition?: Json;
  Principal?: unknown;
}

const cdkContext = (JSON.parse(readFileSync(join(ROOT, 'cdk.json'), 'utf8')) as { context: Json }).context;

function synth(props: HansardStackProps = {}): Template {
  const app = new App({ context: { ...cdkContext, 'aws:cdk:bundling-stacks': [] } });
  return Template.fromStack(new HansardStack(app, 'Hansard', props));
}

/** The logical id of the one resource of `type` whose properties' `field` starts with `prefix`. */
function idOf(t: Template, type: string, field: string, prefix: string): string {
  const found = Object.entries(t.findResources(type)).filter(([, r]) =>
    String((r.Properties as Json)[field]).startsWith(prefix),
  );
  expect(found).toHaveLength(1);
  return found[0]![0];
}

/** The statements of the IAM policies attached to the role of function `fnId`. */
function statementsOf(t: Template, fnId: string): Statement[] {
  const fn = t.findResources('AWS::Lambda::Function')[fnId]!.Properties as Json;
  const role = (fn.Role as { 'Fn::GetAtt': string[] })['Fn::GetAtt'][0];
  return Object.values(t.findResources('AWS::IAM::Policy'))
    .filter((p) => list((p.Properties as Json).Roles as Json[]).some((r) => r.Ref === role))
    .flatMap((p) => ((p.Properties as Json).PolicyDocument as { Statement: Statement[] }).Statement);
}

/**
 * Whether a Lambda event filter pattern (the subset infra/alerts.ts uses: lists of exact values and
 * `{prefix}`, nested objects) matches `record` (Lambda's filtering rules for DynamoDB stream records).
 */
function filterMatches(pattern: Json, record: Json): boolean {
  return Object.entries(pattern).every(([k, p]) => {
    const v = record[k];
    if (Array.isArray(p)) {
      return p.some((alt) =>
        typeof alt === 'object' && alt !== null && 'prefix' in alt
          ? typeof v === 'string' && v.startsWith(String((alt as Json).prefix))
          : v === alt,
      );
    }
    return typeof v === 'object' && v !== null && filterMatches(p as Json, v as Json);
  });
}

/** A DynamoDB stream record (the parts a filter sees) of an item with key `k`. */
const record = (eventName: 'INSERT' | 'MODIFY' | 'REMOVE', k: { pk: string; sk: string }): Json => ({
  eventName,
  eventSource: 'aws:dynamodb',
  dynamodb: { Keys: { pk: { S: k.pk }, sk: { S: k.sk } }, NewImage: { pk: { S: k.pk }, sk: { S: k.sk } } },
});

describe('alerts in HansardStack', () => {
  let t: Template;
  let fn: string;
  let api: string;
  let key: string;
  let table: string;
  let queue: string;
  let topic: string;
  beforeAll(() => {
    t = synth();
    fn = idOf(t, 'AWS::Lambda::Function', 'Description', 'hansard alerts delivery');
    api = idOf(t, 'AWS::Lambda::Function', 'Description', 'hansard API');
    key = idOf(t, 'AWS::KMS::Key', 'Description', "hansard: seals alert targets' signing secrets");
    table = Object.keys(t.findResources('AWS::DynamoDB::Table'))[0]!;
    queue = Object.keys(t.findResources('AWS::SQS::Queue'))[0]!;
    topic = Object.keys(t.findResources('AWS::SNS::Topic'))[0]!;
  });

  it('runs the delivery function once at a time, for 2 minutes at most, with the table, bucket, key and board', () => {
    const props = t.findResources('AWS::Lambda::Function')[fn]!.Properties as Json;
    expect(props).toMatchObject({
      Runtime: 'nodejs22.x',
      Architectures: ['arm64'],
      Timeout: ALERTS_TIMEOUT.toSeconds(),
      ReservedConcurrentExecutions: ALERTS_CONCURRENCY,
    });
    expect(ALERTS_CONCURRENCY).toBe(1);
    const env = (props.Environment as { Variables: Json }).Variables;
    expect(env).toMatchObject({
      TABLE_NAME: { Ref: table },
      ALERT_KMS_KEY_ID: { 'Fn::GetAtt': [key, 'Arn'] },
    });
    expect(env.BUCKET_NAME).toBeDefined();
    // the board's links point at the API, which serves the board, unless an origin is given
    expect(JSON.stringify(env.BOARD_ORIGIN)).toContain('execute-api');
    const custom = synth({ boardOrigin: 'https://hansard.example.com' });
    const customFn = idOf(custom, 'AWS::Lambda::Function', 'Description', 'hansard alerts delivery');
    expect(
      ((custom.findResources('AWS::Lambda::Function')[customFn]!.Properties as Json).Environment as Json)
        .Variables,
    ).toMatchObject({ BOARD_ORIGIN: 'https://hansard.example.com' });
    expect(() => checkedBoardOrigin('https://hansard.example.com/board')).toThrow(/origin/);
    expect(() => checkedBoardOrigin('ftp://x')).toThrow(/origin/);
    // the API seals with the same key
    const apiEnv = ((t.findResources('AWS::Lambda::Function')[api]!.Properties as Json).Environment as Json)
      .Variables as Json;
    expect(apiEnv.ALERT_KMS_KEY_ID).toEqual({ 'Fn::GetAtt': [key, 'Arn'] });
  });

  it('takes the board origin from -c hansard:boardOrigin (infra/app.ts, as cdk synth runs it)', () => {
    const out = mkdtempSync(join(tmpdir(), 'hansard-app-'));
    try {
      const r = spawnSync('npx', ['tsx', 'infra/app.ts'], {
        cwd: ROOT,
        encoding: 'utf8',
        env: {
          ...process.env,
          CDK_OUTDIR: out,
          CDK_CONTEXT_JSON: JSON.stringify({
            ...cdkContext,
            'aws:cdk:bundling-stacks': [],
            'hansard:boardOrigin': 'https://hansard.example.com',
          }),
        },
        timeout: 120_000,
      });
      expect(r.status, r.stderr).toBe(0);
      const resources = (
        JSON.parse(readFileSync(join(out, 'Hansard.template.json'), 'utf8')) as {
          Resources: Record<string, { Type: string; Properties: Json }>;
        }
      ).Resources;
      const alerts = Object.values(resources).find(
        (r) =>
          r.Type === 'AWS::Lambda::Function' &&
          String(r.Properties.Description).startsWith('hansard alerts delivery'),
      )!;
      expect((alerts.Properties.Environment as { Variables: Json }).Variables.BOARD_ORIGIN).toBe(
        'https://hansard.example.com',
      );
      // Search is on unless `-c hansard:search=false` (issue 30): the app as synthesized has its cluster.
      expect(Object.values(resources).filter((x) => x.Type === 'AWS::RDS::DBCluster')).toHaveLength(1);
    } finally {
      rmSync(out, { recursive: true, force: true });
    }
  }, 120_000);

  it("grants the table exactly what ALERTS_STATE_METHODS declare (the access map), and the stream's reads on the stream alone", () => {
    const statements = statementsOf(t, fn);
    const granted: Record<string, string[]> = {};
    for (const s of statements.filter((x) => x.Sid?.startsWith('State') && x.Sid !== 'StateStreamReads')) {
      const leading = (s.Condition?.['ForAllValues:StringLike'] as Json | undefined)?.[
        'dynamodb:LeadingKeys'
      ] as string[] | undefined;
      for (const a of list(s.Action)) {
        granted[a] = [...(granted[a] ?? []), ...list(s.Resource).map(arnText), ...(leading ?? [])].sort();
      }
    }
    const needed: Record<string, string[]> = {};
    for (const a of accessOf(ALERTS_STATE_METHODS)) {
      const action = `dynamodb:${a.action}`;
      const entries = READ_ACTIONS.includes(a.action)
        ? [a.index ? `<${table}>/index/${a.index}` : `<${table}>`]
        : [`<${table}>`, `${a.pk}*`];
      needed[action] = [...new Set([...(needed[action] ?? []), ...entries])].sort();
    }
    expect(alertsDynamoAccess()).toEqual(accessOf(ALERTS_STATE_METHODS));
    expect(granted).toEqual(needed);
    // it reads segments (claims checked against the transcript) and writes none
    const actions = statements.flatMap((s) => list(s.Action));
    expect(actions.filter((a) => a.startsWith('s3:')).sort()).toEqual(['s3:GetObject', 's3:ListBucket']);
    const stream = statements.find((s) => s.Sid === 'StateStreamReads')!;
    expect(list(stream.Action).sort()).toEqual([
      'dynamodb:DescribeStream',
      'dynamodb:GetRecords',
      'dynamodb:GetShardIterator',
      'dynamodb:ListStreams',
    ]);
    expect(list(stream.Resource)).toEqual([{ 'Fn::GetAtt': [table, 'StreamArn'] }]);
  });

  it('seals with the API (Encrypt) and opens with the delivery function (Decrypt), only under the alerts purpose', () => {
    const sealerCalls = sdkCommandsIn(readFileSync(join(ROOT, 'lib/deploy/aws-sealer.ts'), 'utf8'));
    expect(sealerCalls).toEqual(['Decrypt', 'Encrypt']);
    const purpose = { StringEquals: { [ALERT_PURPOSE_CONDITION]: ALERT_SECRET_PURPOSE } };
    const onKey = (id: string) =>
      statementsOf(t, id).filter((s) => list(s.Resource).some((r) => arnText(r) === `<${key}>`));
    expect(onKey(fn)).toEqual([
      expect.objectContaining({ Action: 'kms:Decrypt', Condition: purpose, Effect: 'Allow' }),
    ]);
    expect(onKey(api)).toEqual([
      expect.objectContaining({ Action: 'kms:Encrypt', Condition: purpose, Effect: 'Allow' }),
    ]);
    // no other function's role names the key
    for (const other of Object.keys(t.findResources('AWS::Lambda::Function')).filter(
      (f) => f !== fn && f !== api,
    )) {
      expect(onKey(other), other).toEqual([]);
    }
  });

  it('makes a retained symmetric key with rotation, whose policy names its actions and delegates use under the purpose alone', () => {
    t.hasResource('AWS::KMS::Key', {
      DeletionPolicy: 'Retain',
      UpdateReplacePolicy: 'Retain',
      Properties: { EnableKeyRotation: true },
    });
    const props = t.findResources('AWS::KMS::Key')[key]!.Properties as Json;
    // symmetric: no spec or usage of an asymmetric key
    expect(props.KeySpec ?? 'SYMMETRIC_DEFAULT').toBe('SYMMETRIC_DEFAULT');
    expect(props.KeyUsage ?? 'ENCRYPT_DECRYPT').toBe('ENCRYPT_DECRYPT');
    const statements = (props.KeyPolicy as { Statement: Statement[] }).Statement;
    expect(statements).toHaveLength(2);
    const [admin, use] = statements as [Statement, Statement];
    expect(list(admin.Action).sort()).toEqual([...ALERT_KEY_ADMIN_ACTIONS].sort());
    expect(admin.Condition).toBeUndefined();
    expect(list(use.Action).sort()).toEqual(['kms:Decrypt', 'kms:Encrypt']);
    expect(use.Condition).toEqual({ StringEquals: { [ALERT_PURPOSE_CONDITION]: ALERT_SECRET_PURPOSE } });
    for (const s of statements) {
      expect(list(s.Action).some((a) => a.endsWith('*'))).toBe(false);
      expect(JSON.stringify(s.Principal)).toContain(':root');
    }
    // using the key is never an administrative grant
    expect(ALERT_KEY_ADMIN_ACTIONS).not.toContain('kms:Decrypt');
    expect(ALERT_KEY_ADMIN_ACTIONS).not.toContain('kms:Encrypt');
  });

  it("turns the table's stream on (NEW_IMAGE) and wakes the function on outbox INSERTs only", () => {
    t.hasResourceProperties('AWS::DynamoDB::Table', { StreamSpecification: { StreamViewType: 'NEW_IMAGE' } });
    const mappings = t.findResources('AWS::Lambda::EventSourceMapping');
    expect(Object.keys(mappings)).toHaveLength(1);
    const m = Object.values(mappings)[0]!.Properties as Json;
    expect(m).toMatchObject({
      FunctionName: { Ref: fn },
      EventSourceArn: { 'Fn::GetAtt': [table, 'StreamArn'] },
      BisectBatchOnFunctionError: true,
      MaximumRetryAttempts: ALERT_STREAM_RETRIES,
      DestinationConfig: { OnFailure: { Destination: { 'Fn::GetAtt': [queue, 'Arn'] } } },
    });
    expect(ALERT_STREAM_RETRIES).toBe(3);
    const filters = (m.FilterCriteria as { Filters: { Pattern: string }[] }).Filters;
    expect(filters).toHaveLength(1);
    const pattern = JSON.parse(filters[0]!.Pattern) as Json;
    // the keys the store makes (lib/store/dynamo/schema.ts): an outbox event's insert matches, nothing else
    const outbox = keys.alertOutbox('acme', 'msg_01JX0000000000000000000000');
    expect(filterMatches(pattern, record('INSERT', outbox))).toBe(true);
    expect(filterMatches(pattern, record('MODIFY', outbox))).toBe(false);
    expect(filterMatches(pattern, record('REMOVE', outbox))).toBe(false);
    for (const other of [
      keys.alertTarget('acme', 'tgt_1'),
      keys.alertDue('acme', 's_01JX0000000000000000000000'),
      keys.alertDelivery('acme', 's_01JX0000000000000000000000', 'tgt_1', '2026-12-07T00:00:00Z#m', 'msg_1'),
      keys.status('acme', 's_01JX0000000000000000000000'),
      keys.session('acme', 's_01JX0000000000000000000000'),
    ]) {
      expect(filterMatches(pattern, record('INSERT', other)), JSON.stringify(other)).toBe(false);
    }
  });

  it('keeps a failed batch in an encrypted, TLS-only queue for 14 days, which only the function may write', () => {
    t.resourceCountIs('AWS::SQS::Queue', 1);
    t.hasResourceProperties('AWS::SQS::Queue', {
      SqsManagedSseEnabled: true,
      MessageRetentionPeriod: ALERT_DLQ_RETENTION.toSeconds(),
    });
    expect(ALERT_DLQ_RETENTION.toDays()).toBe(14);
    const queuePolicy = Object.values(t.findResources('AWS::SQS::QueuePolicy'))[0]!.Properties as Json;
    expect((queuePolicy.PolicyDocument as { Statement: Statement[] }).Statement).toEqual([
      expect.objectContaining({
        Effect: 'Deny',
        Action: 'sqs:*',
        Condition: { Bool: { 'aws:SecureTransport': 'false' } },
      }),
    ]);
    for (const f of Object.keys(t.findResources('AWS::Lambda::Function'))) {
      const sends = statementsOf(t, f).filter((s) => list(s.Action).some((a) => a.startsWith('sqs:')));
      if (f !== fn) expect(sends, f).toEqual([]);
      else {
        expect(sends.flatMap((s) => list(s.Resource).map(arnText))).toEqual([`<${queue}>`]);
        expect(sends.flatMap((s) => list(s.Action))).toContain('sqs:SendMessage');
      }
    }
  });

  it('runs the function every minute from EventBridge, without retries, a busy run waiting a minute at most', () => {
    const rules = Object.values(t.findResources('AWS::Events::Rule')).filter((r) =>
      list((r.Properties as { Targets?: Json[] }).Targets).some((x) => arnText(x.Arn) === `<${fn}>`),
    );
    expect(rules).toHaveLength(1);
    expect(rules[0]!.Properties).toMatchObject({
      ScheduleExpression: 'rate(1 minute)',
      Targets: [{ RetryPolicy: { MaximumRetryAttempts: 0, MaximumEventAgeInSeconds: 60 } }],
    });
    t.hasResourceProperties('AWS::Lambda::EventInvokeConfig', {
      FunctionName: { Ref: fn },
      MaximumRetryAttempts: 0,
      MaximumEventAgeInSeconds: 60,
    });
  });

  it('alarms on the dead-letter queue, the function errors and the stream falling behind, to the topic', () => {
    const alarms = Object.values(t.findResources('AWS::CloudWatch::Alarm')).map((a) => a.Properties as Json);
    const on = (metric: string, dimension: Json) =>
      alarms.filter(
        (a) =>
          a.MetricName === metric &&
          JSON.stringify(a.Dimensions).includes(JSON.stringify(dimension)) &&
          JSON.stringify(a.AlarmActions) === JSON.stringify([{ Ref: topic }]),
      );
    expect(on('ApproximateNumberOfMessagesVisible', { 'Fn::GetAtt': [queue, 'QueueName'] })).toEqual([
      expect.objectContaining({ Threshold: 1, ComparisonOperator: 'GreaterThanOrEqualToThreshold' }),
    ]);
    expect(on('Errors', { Ref: fn })).toEqual([
      expect.objectContaining({ Namespace: 'AWS/Lambda', Threshold: 1, Statistic: 'Sum' }),
    ]);
    expect(on('IteratorAge', { Ref: fn })).toEqual([
      expect.objectContaining({ Threshold: ALERT_ITERATOR_AGE_MS, Statistic: 'Maximum' }),
    ]);
    // no throttles alarm: with a concurrency of 1, a schedule meeting a stream run is throttled by design
    expect(on('Throttles', { Ref: fn })).toEqual([]);
  });

  it('bundles the delivery function without the app, the routes or the rate limiter', async () => {
    const { metafile } = await bundleLambda('functions/alerts.ts');
    const used = Object.values(metafile.outputs).flatMap((o) =>
      Object.entries(o.inputs)
        .filter(([, i]) => i.bytesInOutput > 0)
        .map(([path]) => path),
    );
    expect(used).toContain('lib/service/alerts/worker.ts');
    expect(used).toContain('lib/deploy/aws-sealer.ts');
    for (const m of [
      'lib/deploy/aws.ts',
      'lib/ratelimit/dynamo.ts',
      'lib/http/app.ts',
      'lib/deploy/local-sealer.ts',
    ]) {
      expect(used, m).not.toContain(m);
    }
  }, 60_000);
});
