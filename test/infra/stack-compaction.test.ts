/**
 * The stack's part of compaction (issue 17.2, infra/compaction.ts): a rule runs the compactor for each
 * signed digest of this bucket, one at a time (reserved concurrency 1); its role may read and list the
 * segments, put compacted runs only and delete writers' objects only (the only role that may delete),
 * read only the state a compaction reads, and sign nothing; its bundle holds no app; an ERROR line of its
 * log (a writer it left as it was) raises an alarm. The put and delete
 * patterns are checked against the keys the code makes.
 */
import { App } from 'aws-cdk-lib';
import { Match, Template } from 'aws-cdk-lib/assertions';
import { beforeAll, describe, expect, it } from 'vitest';
import { COMPACT_STATE_METHODS } from '../../functions/access.js';
import { COMPACT_CONCURRENCY, COMPACT_MEMORY_MB, COMPACT_TIMEOUT } from '../../infra/compaction.js';
import { COMPACTED_OBJECTS, DIGEST_OBJECTS, WRITER_OBJECTS } from '../../infra/lambda.js';
import { HansardStack } from '../../infra/stack.js';
import { newId } from '../../lib/log/index.js';
import { digestName } from '../../lib/store/keys.js';
import { chunkObjectKey, compactedObjectKey } from '../../lib/store/s3/segment-objects.js';
import { grantsOf, iamMatches } from '../support/template-text.js';
import { bundleLambda } from './lambda-bundle.js';

// biome-ignore lint/suspicious/noExplicitAny: CloudFormation JSON, read field by field
type Json = Record<string, any>;
let t: Template;
let bucket: string;
let table: string;
let compactor: string;

beforeAll(() => {
  const app = new App({ context: { 'aws:cdk:bundling-stacks': [] } });
  t = Template.fromStack(new HansardStack(app, 'Compaction'));
  bucket = Object.keys(t.findResources('AWS::S3::Bucket'))[0]!;
  table = Object.keys(t.findResources('AWS::DynamoDB::Table'))[0]!;
  compactor = Object.keys(
    t.findResources('AWS::Lambda::Function', {
      Properties: { Description: Match.stringLikeRegexp('^hansard compactor') },
    }),
  )[0]!;
});

/** Each action of `fnId`'s role with its resources, `<LogicalId>/suffix` for a bucket's objects. */
const grants = (fnId: string): Record<string, string[]> => grantsOf(t, fnId);

describe('compaction in HansardStack', () => {
  it('runs the compactor for the digests of this bucket only, one at a time, retried twice', () => {
    const rules = t.findResources('AWS::Events::Rule', {
      Properties: { Targets: [Match.objectLike({ Arn: { 'Fn::GetAtt': [compactor, 'Arn'] } })] },
    });
    expect(Object.keys(rules)).toHaveLength(1);
    const rule = Object.values(rules)[0]!.Properties as Json;
    expect(rule.EventPattern).toEqual({
      source: ['aws.s3'],
      'detail-type': ['Object Created'],
      detail: {
        bucket: { name: [{ Ref: bucket }] },
        object: { key: [{ wildcard: 'tenants/*/sessions/*/digests/*' }] },
      },
    });
    expect(rule.Targets).toHaveLength(1);
    expect(rule.Targets[0]).toMatchObject({ RetryPolicy: { MaximumRetryAttempts: 2 } });
    const fn = t.findResources('AWS::Lambda::Function')[compactor]!.Properties as Json;
    expect(fn).toMatchObject({
      Timeout: COMPACT_TIMEOUT.toSeconds(),
      MemorySize: COMPACT_MEMORY_MB,
      ReservedConcurrentExecutions: COMPACT_CONCURRENCY,
    });
    expect(COMPACT_CONCURRENCY).toBe(1);
    // a pass that ran out of time fails: Lambda runs its event again, twice
    t.hasResourceProperties('AWS::Lambda::EventInvokeConfig', {
      FunctionName: { Ref: compactor },
      MaximumRetryAttempts: 2,
      MaximumEventAgeInSeconds: 6 * 3600,
    });
    t.hasOutput('CompactFunctionName', { Value: { Ref: compactor } });
  });

  it('lets the compactor read segments, put runs only, delete writers’ objects only, and read state', () => {
    const g = grants(compactor);
    expect(g['s3:GetObject']).toEqual([`<${bucket}>/tenants/*`]);
    expect(g['s3:ListBucket']).toEqual([`<${bucket}>`]);
    expect(g['s3:PutObject']).toEqual([`<${bucket}>/${COMPACTED_OBJECTS}`]);
    expect(g['s3:DeleteObject']).toEqual([`<${bucket}>/${WRITER_OBJECTS}`]);
    expect(Object.keys(g).filter((a) => a.startsWith('kms:'))).toEqual([]);
    expect(COMPACT_STATE_METHODS).toEqual(['listWriters', 'listChunks']);
    const dynamo = Object.keys(g).filter((a) => a.startsWith('dynamodb:'));
    expect(dynamo).toEqual(['dynamodb:Query']);
    expect(g['dynamodb:Query']).toEqual([`<${table}>`]);
  });

  it('grants exactly the keys the code makes: runs to put; chunks and runs, never digests, to delete', () => {
    const key = { tenant: 'acme', sid: newId('s'), w: newId('w') };
    const run = compactedObjectKey(key, 0, 4096);
    const chunk = chunkObjectKey(key, 4096);
    const digest = `tenants/acme/sessions/${key.sid}/digests/${digestName(1)}`;
    expect(iamMatches(COMPACTED_OBJECTS, run)).toBe(true);
    expect(iamMatches(COMPACTED_OBJECTS, chunk)).toBe(false);
    expect(iamMatches(COMPACTED_OBJECTS, digest)).toBe(false);
    expect(iamMatches(WRITER_OBJECTS, run)).toBe(true);
    expect(iamMatches(WRITER_OBJECTS, chunk)).toBe(true);
    expect(iamMatches(WRITER_OBJECTS, digest)).toBe(false);
    expect(iamMatches(WRITER_OBJECTS, `replays/acme/${key.sid}/x.jsonl`)).toBe(false);
    expect(iamMatches(DIGEST_OBJECTS, digest)).toBe(true);
  });

  it('sends an event whose passes all failed to the alarm topic, naming its session', () => {
    const topic = Object.keys(t.findResources('AWS::SNS::Topic'))[0]!;
    const configs = Object.values(t.findResources('AWS::Lambda::EventInvokeConfig')).map(
      (c) => c.Properties as Json,
    );
    const mine = configs.filter((c) => c.FunctionName.Ref === compactor);
    expect(mine).toEqual([
      expect.objectContaining({
        MaximumRetryAttempts: 2,
        MaximumEventAgeInSeconds: 6 * 3600,
        DestinationConfig: { OnFailure: { Destination: { Ref: topic } } },
      }),
    ]);
    expect(grants(compactor)['sns:Publish']).toEqual([`<${topic}>`]);
  });

  it("alarms on every ERROR line of the compactor's log (a writer left as it was), to the alarm topic", () => {
    const fn = t.findResources('AWS::Lambda::Function')[compactor]!.Properties as Json;
    const logGroup = fn.LoggingConfig.LogGroup.Ref as string;
    const filters = Object.values(t.findResources('AWS::Logs::MetricFilter')).filter(
      (f) => (f.Properties as Json).LogGroupName.Ref === logGroup,
    );
    expect(filters.map((f) => f.Properties)).toEqual([
      expect.objectContaining({
        FilterPattern: '{ $.level = "ERROR" }',
        MetricTransformations: [
          expect.objectContaining({
            MetricNamespace: 'Hansard',
            MetricName: 'CompactLogErrors',
            MetricValue: '1',
          }),
        ],
      }),
    ]);
    const topic = Object.keys(t.findResources('AWS::SNS::Topic'))[0]!;
    const alarms = Object.values(
      t.findResources('AWS::CloudWatch::Alarm', { Properties: { MetricName: 'CompactLogErrors' } }),
    ).map((a) => a.Properties as Json);
    expect(alarms).toEqual([
      expect.objectContaining({
        Namespace: 'Hansard',
        Statistic: 'Sum',
        Period: 300,
        Threshold: 1,
        ComparisonOperator: 'GreaterThanOrEqualToThreshold',
        TreatMissingData: 'notBreaching',
        AlarmActions: [{ Ref: topic }],
      }),
    ]);
  });

  it('gives no other role s3:DeleteObject', () => {
    const fns = Object.keys(t.findResources('AWS::Lambda::Function')).filter((f) => f !== compactor);
    expect(fns.length).toBeGreaterThanOrEqual(4);
    for (const f of fns) expect(grants(f)['s3:DeleteObject'], f).toBeUndefined();
  });

  it('bundles the compactor without the app, the routes or the rate limiter', async () => {
    const { metafile } = await bundleLambda('functions/compact.ts');
    const used = Object.values(metafile.outputs).flatMap((o) =>
      Object.entries(o.inputs)
        .filter(([, i]) => i.bytesInOutput > 0)
        .map(([path]) => path),
    );
    expect(used).toContain('lib/store/s3/compaction.ts');
    expect(used).toContain('lib/service/ingest/compaction.ts');
    for (const m of ['lib/deploy/aws.ts', 'lib/ratelimit/dynamo.ts', 'lib/http/app.ts']) {
      expect(used, m).not.toContain(m);
    }
    expect(used.some((p) => p.startsWith('node_modules/hono/'))).toBe(false);
  }, 60_000);
});
