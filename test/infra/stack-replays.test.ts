/**
 * The stack's part of large replays (issue 17.2, infra/replays.ts): the bucket sends its object events to
 * EventBridge (a bucket property: no notification custom resource), a rule runs the replay builder for
 * build markers `replays/*.building` of this bucket only, the builder may read segments and write only
 * stored copies, read only the state a build reads, and sign nothing; stored copies expire.
 */
import { App } from 'aws-cdk-lib';
import { Match, Template } from 'aws-cdk-lib/assertions';
import { beforeAll, describe, expect, it } from 'vitest';
import { REPLAY_BUILD_STATE_METHODS } from '../../functions/access.js';
import { REPLAY_BUILD_MEMORY_MB, REPLAY_BUILD_TIMEOUT } from '../../infra/replays.js';
import { HansardStack } from '../../infra/stack.js';
import { grantsOf } from '../support/template-text.js';

// biome-ignore lint/suspicious/noExplicitAny: CloudFormation JSON, read field by field
type Json = Record<string, any>;
let t: Template;
let bucket: string;
let table: string;
let builder: string;

beforeAll(() => {
  const app = new App({ context: { 'aws:cdk:bundling-stacks': [] } });
  t = Template.fromStack(new HansardStack(app, 'Replays'));
  bucket = Object.keys(t.findResources('AWS::S3::Bucket'))[0]!;
  table = Object.keys(t.findResources('AWS::DynamoDB::Table'))[0]!;
  builder = Object.keys(
    t.findResources('AWS::Lambda::Function', {
      Properties: { Description: Match.stringLikeRegexp('^hansard replay builder') },
    }),
  )[0]!;
});

/** Each action of `fnId`'s role with its resources, `<LogicalId>/suffix` for a bucket's objects. */
const grants = (fnId: string): Record<string, string[]> => grantsOf(t, fnId);

describe('stored replays in HansardStack', () => {
  it('has the bucket send its object events to EventBridge, and nothing else as notifications', () => {
    const props = t.findResources('AWS::S3::Bucket')[bucket]!.Properties as Json;
    expect(props.NotificationConfiguration).toEqual({
      EventBridgeConfiguration: { EventBridgeEnabled: true },
    });
    expect(Object.keys(t.findResources('Custom::S3BucketNotifications'))).toEqual([]);
  });

  it('runs the builder for build markers of this bucket only, retried twice', () => {
    // (the other rule of the bucket's events runs the compactor for digests: stack-compaction.test.ts)
    const rules = t.findResources('AWS::Events::Rule', {
      Properties: {
        EventPattern: Match.objectLike({ source: ['aws.s3'] }),
        Targets: [Match.objectLike({ Arn: { 'Fn::GetAtt': [builder, 'Arn'] } })],
      },
    });
    expect(Object.keys(rules)).toHaveLength(1);
    const rule = Object.values(rules)[0]!.Properties as Json;
    expect(rule.EventPattern).toEqual({
      source: ['aws.s3'],
      'detail-type': ['Object Created'],
      detail: { bucket: { name: [{ Ref: bucket }] }, object: { key: [{ wildcard: 'replays/*.building' }] } },
    });
    expect(rule.Targets).toHaveLength(1);
    expect(rule.Targets[0]).toMatchObject({
      Arn: { 'Fn::GetAtt': [builder, 'Arn'] },
      RetryPolicy: { MaximumRetryAttempts: 2 },
    });
    const fn = t.findResources('AWS::Lambda::Function')[builder]!.Properties as Json;
    expect(fn).toMatchObject({
      Timeout: REPLAY_BUILD_TIMEOUT.toSeconds(),
      MemorySize: REPLAY_BUILD_MEMORY_MB,
    });
  });

  it('lets the builder read segments and state, write only stored copies, and sign nothing', () => {
    const g = grants(builder);
    expect(g['s3:GetObject']).toEqual([`<${bucket}>/replays/*`, `<${bucket}>/tenants/*`]);
    expect(g['s3:PutObject']).toEqual([`<${bucket}>/replays/*`]);
    expect(g['s3:AbortMultipartUpload']).toEqual([`<${bucket}>/replays/*`]);
    expect(Object.keys(g).filter((a) => a.startsWith('kms:'))).toEqual([]);
    // what a build calls of the state store: reads only (listWriters and getStatus are queries)
    expect(REPLAY_BUILD_STATE_METHODS).toEqual(['getSession', 'listWriters', 'getWriter', 'getStatus']);
    const writes = Object.keys(g).filter((a) => /^dynamodb:(Put|Update|Delete|BatchWrite)/.test(a));
    expect(writes).toEqual([]);
    expect(g['dynamodb:Query']).toEqual([`<${table}>`]);
  });
});
