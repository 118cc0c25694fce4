/**
 * Search in HansardStack (infra/search.ts, issue 30 items 4 and 5), from the synthesized template, each
 * assertion derived from the code it must agree with: the Data API actions the runner's source sends
 * (lib/store/postgres/data-api-runner.ts) are exactly what the API and indexing roles hold, on the
 * cluster alone, with GetSecretValue (what the Data API needs of a secret, and what the indexer sends) on
 * the app role's secret alone for the API and on it and the master user's for the indexer, which alone
 * migrates; the stream filters match the items the store's
 * key builders make for writers and a session's facts and no other item, and the drain's decoder names
 * the entry of each item the filters pass; the cluster pauses at 0 ACU, has the Data API on and sits in a
 * VPC with no way out, while no function is in a VPC.
 */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { App, Duration } from 'aws-cdk-lib';
import { Template } from 'aws-cdk-lib/assertions';
import { beforeAll, describe, expect, it } from 'vitest';
import {
  SEARCH_DATA_API_ACTIONS,
  SEARCH_SECRET_ACTIONS,
  SEARCH_STATE_METHODS,
  searchDynamoAccess,
} from '../../functions/access.js';
import { ConfigError, parseConfig, searchTargetOf } from '../../functions/config.js';
import {
  checkedMaxCapacity,
  DEFAULT_SEARCH_MAX_ACU,
  SEARCH_APP_USER,
  SEARCH_BATCH_SIZE,
  SEARCH_DATABASE,
  SEARCH_DLQ_RETENTION,
  SEARCH_ENGINE_VERSION,
  SEARCH_ITERATOR_AGE_MS,
  SEARCH_STREAM_RETRIES,
  SEARCH_TIMEOUT,
} from '../../infra/search.js';
import { HansardStack, type HansardStackProps } from '../../infra/stack.js';
import { SearchStreamRecord, searchEntryOf } from '../../lib/deploy/aws-search.js';
import { accessOf } from '../../lib/store/dynamo/access.js';
import { keys } from '../../lib/store/dynamo/schema.js';
import { passesFilters } from '../support/dynamo-stream.js';
import { arnText, grantsOf, list, sdkCommandsIn } from '../support/template-text.js';
import { ROOT } from './lambda-bundle.js';

type Json = Record<string, unknown>;

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

const one = (t: Template, type: string): [string, Json] => {
  const all = Object.entries(t.findResources(type));
  expect(all, type).toHaveLength(1);
  return [all[0]![0], all[0]![1] as Json];
};

const envOf = (t: Template, fnId: string) =>
  ((t.findResources('AWS::Lambda::Function')[fnId]!.Properties as Json).Environment as { Variables: Json })
    .Variables;

/** An item's attributes as DynamoDB JSON (strings and numbers: what the filters and decoder read). */
const ddb = (item: Record<string, string | number>): Json =>
  Object.fromEntries(
    Object.entries(item).map(([k, v]) => [k, typeof v === 'number' ? { N: String(v) } : { S: v }]),
  );

/** A stream record (view NEW_IMAGE) of `item`, as Lambda hands it to the function. */
const record = (
  eventName: 'INSERT' | 'MODIFY' | 'REMOVE',
  item: { pk: string; sk: string } & Record<string, string | number>,
  seq = '100000000000000000001',
): Json => ({
  eventID: 'e1',
  eventName,
  eventVersion: '1.1',
  eventSource: 'aws:dynamodb',
  awsRegion: 'us-east-1',
  dynamodb: {
    ApproximateCreationDateTime: 1_765_000_000,
    Keys: ddb({ pk: item.pk, sk: item.sk }),
    ...(eventName === 'REMOVE' ? {} : { NewImage: ddb(item) }),
    SequenceNumber: seq,
    SizeBytes: 200,
    StreamViewType: 'NEW_IMAGE',
  },
  eventSourceARN: 'arn:aws:dynamodb:us-east-1:111122223333:table/State/stream/2026-12-07T00:00:00.000',
});

const T = 'acme';
const SID = 's_01JX0000000000000000000000';
const W = 'w_01JX0000000000000000000001';
const AT = '2026-12-07T00:00:00.000Z';

/** Items as the store writes them (lib/store/dynamo: the keys from `keys`, the attributes it sets). */
const ITEMS = {
  writer: { ...keys.writer(T, SID, W), tenant: T, sid: SID, w: W, length: 4096, lines: 12, updated_at: AT },
  status: { ...keys.status(T, SID), tenant: T, sid: SID, record_json: '{}', version: 2 },
  work: {
    ...keys.work(T, 'wk_01JX0000000000000000000002'),
    tenant: T,
    sid: SID,
    item_json: '{}',
    version: 1,
  },
  session: { ...keys.session(T, SID), tenant: T, sid: SID, title: 'fix the parser', writers: 1, bytes: 4096 },
};
/** Items of the same partitions, and others, that change no indexed fact. */
const OTHERS = {
  chunk: { ...keys.chunk(T, SID, W, 0), tenant: T, sid: SID, w: W, offset: 0, length: 4096 },
  legacyChunk: { ...keys.legacyChunk(T, SID, W, 0), tenant: T, sid: SID, w: W, offset: 0, length: 4096 },
  writerUsage: { ...keys.writerUsage(T, SID, W), tenant: T, sid: SID, w: W },
  sessionUsage: { ...keys.sessionUsage(T, SID), tenant: T, sid: SID },
  digestHead: { ...keys.digestHead(T, SID), tenant: T, sid: SID },
  tenantUsage: { ...keys.usage(T, 3), tenant: T },
  claim: { ...keys.claim(T, 'ab'.repeat(32)), tenant: T },
  pending: { ...keys.pending(T, SID, W), tenant: T, sid: SID, w: W },
  digestDue: { ...keys.digestDue(T, SID), tenant: T, sid: SID },
  tenant: { ...keys.tenant(T) },
  token: { ...keys.token('cd'.repeat(32)), tenant: T },
  outbox: { ...keys.alertOutbox(T, 'msg_1'), tenant: T, sid: SID },
  person: { ...keys.person(T, 'priya@example.com'), tenant: T },
  rateLimit: { ...keys.rateLimit('tok_1', 1_765_000_000) },
};

describe('search in HansardStack', () => {
  let t: Template;
  let fn: string;
  let api: string;
  let cluster: string;
  /** the attachments (`Ref`: the secret's ARN) of the master user's secret and of the app role's */
  let ownerRef: string;
  let appRef: string;
  let ownerSecret: string;
  let appSecret: string;
  let queue: string;
  beforeAll(() => {
    t = synth({ search: {} });
    fn = idOf(t, 'AWS::Lambda::Function', 'Description', 'hansard search indexer');
    api = idOf(t, 'AWS::Lambda::Function', 'Description', 'hansard API');
    cluster = one(t, 'AWS::RDS::DBCluster')[0];
    const secrets = Object.keys(t.findResources('AWS::SecretsManager::Secret'));
    expect(secrets).toHaveLength(2);
    appSecret = secrets.find((id) => id.startsWith('SearchAppSecret'))!;
    ownerSecret = secrets.find((id) => id !== appSecret)!;
    const attachments = Object.entries(t.findResources('AWS::SecretsManager::SecretTargetAttachment'));
    expect(attachments).toHaveLength(2);
    const attachmentOf = (secret: string) =>
      attachments.find(([, a]) => ((a.Properties as Json).SecretId as Json).Ref === secret)![0];
    ownerRef = attachmentOf(ownerSecret);
    appRef = attachmentOf(appSecret);
    queue = Object.entries(t.findResources('AWS::SQS::Queue')).find(([id]) =>
      id.startsWith('SearchStreamDlq'),
    )![0];
  });

  it('is off unless asked for: no cluster, no indexer, and the API has no search variables', () => {
    const off = synth();
    off.resourceCountIs('AWS::RDS::DBCluster', 0);
    off.resourceCountIs('AWS::EC2::VPC', 0);
    for (const [id, f] of Object.entries(off.findResources('AWS::Lambda::Function'))) {
      expect(String((f.Properties as Json).Description), id).not.toMatch(/search/);
      expect(
        Object.keys(envOf(off, id)).filter((k) => k.startsWith('SEARCH_')),
        id,
      ).toEqual([]);
    }
  });

  it('makes an Aurora PostgreSQL Serverless v2 cluster that pauses at 0 ACU, with the Data API on and its storage encrypted', () => {
    const [, c] = one(t, 'AWS::RDS::DBCluster');
    const props = c.Properties as Json;
    expect(props).toMatchObject({
      Engine: 'aurora-postgresql',
      EngineVersion: SEARCH_ENGINE_VERSION.auroraPostgresFullVersion,
      EnableHttpEndpoint: true,
      StorageEncrypted: true,
      DeletionProtection: true,
      DatabaseName: SEARCH_DATABASE,
      ServerlessV2ScalingConfiguration: {
        MinCapacity: 0,
        MaxCapacity: DEFAULT_SEARCH_MAX_ACU,
        SecondsUntilAutoPause: 300,
      },
    });
    // 0 ACU needs Aurora PostgreSQL 16.3 or later in the 16 line
    const [major, minor] = SEARCH_ENGINE_VERSION.auroraPostgresFullVersion.split('.').map(Number);
    expect(major).toBe(16);
    expect(minor).toBeGreaterThanOrEqual(3);
    // removed on purpose only (deletion protection), and then with a final snapshot
    expect(c.DeletionPolicy).toBe('Snapshot');
    // the master password comes from the generated secret, never from the template
    expect(JSON.stringify(props.MasterUserPassword)).toContain('resolve:secretsmanager');
    const [, instance] = one(t, 'AWS::RDS::DBInstance');
    expect(instance.Properties).toMatchObject({
      DBInstanceClass: 'db.serverless',
      DBClusterIdentifier: { Ref: cluster },
    });
    expect((instance.Properties as Json).PubliclyAccessible).not.toBe(true);
    // the capacity and the pause are settings of the stack
    const big = synth({ search: { maxCapacity: 16, autoPause: Duration.hours(1) } });
    expect((one(big, 'AWS::RDS::DBCluster')[1].Properties as Json).ServerlessV2ScalingConfiguration).toEqual({
      MinCapacity: 0,
      MaxCapacity: 16,
      SecondsUntilAutoPause: 3600,
    });
    for (const bad of [0, 0.25, 1.3, 300]) expect(() => checkedMaxCapacity(bad), String(bad)).toThrow(/ACU/);
    expect(checkedMaxCapacity(undefined)).toBe(DEFAULT_SEARCH_MAX_ACU);
  });

  it('puts the cluster in a VPC of isolated subnets in two zones, with no NAT, gateway or route out, and a group that admits nothing', () => {
    for (const type of [
      'AWS::EC2::NatGateway',
      'AWS::EC2::InternetGateway',
      'AWS::EC2::EIP',
      'AWS::EC2::Route',
      'AWS::EC2::VPCEndpoint',
      'AWS::EC2::SecurityGroupIngress',
    ]) {
      t.resourceCountIs(type, 0);
    }
    const subnets = Object.values(t.findResources('AWS::EC2::Subnet')).map((s) => s.Properties as Json);
    expect(subnets).toHaveLength(2);
    for (const s of subnets) expect(s.MapPublicIpOnLaunch).toBe(false);
    expect(new Set(subnets.map((s) => JSON.stringify(s.AvailabilityZone))).size).toBe(2);
    const [group, sg] = one(t, 'AWS::EC2::SecurityGroup');
    const props = sg.Properties as Json;
    expect(props.SecurityGroupIngress).toBeUndefined();
    // CDK's stand-in for "no egress": one rule to a single unroutable address
    expect(props.SecurityGroupEgress).toEqual([
      expect.objectContaining({ CidrIp: '255.255.255.255/32', IpProtocol: 'icmp' }),
    ]);
    const clusterProps = one(t, 'AWS::RDS::DBCluster')[1].Properties as Json;
    expect(clusterProps.VpcSecurityGroupIds).toEqual([{ 'Fn::GetAtt': [group, 'GroupId'] }]);
  });

  it('keeps every function outside any VPC: the index is reached through the Data API', () => {
    for (const [id, f] of Object.entries(t.findResources('AWS::Lambda::Function'))) {
      expect((f.Properties as Json).VpcConfig, id).toBeUndefined();
    }
  });

  it('grants the Data API actions the runner sends, on the cluster alone; the app secret to the API, both secrets to the indexer', () => {
    // the commands lib/store/postgres/data-api-runner.ts sends, from its source
    const runner = readFileSync(join(ROOT, 'lib/store/postgres/data-api-runner.ts'), 'utf8');
    const sent = sdkCommandsIn(runner).map((c) => `rds-data:${c}`);
    expect([...SEARCH_DATA_API_ACTIONS].sort()).toEqual(sent);
    expect(SEARCH_DATA_API_ACTIONS).not.toContain('rds-data:BatchExecuteStatement');
    // what the indexer asks of Secrets Manager itself (the app password), from its source: the action
    // the Data API needs of a secret too
    const indexer = readFileSync(join(ROOT, 'functions/search.ts'), 'utf8');
    expect(sdkCommandsIn(indexer).map((c) => `secretsmanager:${c}`)).toEqual([...SEARCH_SECRET_ACTIONS]);
    const clusterArn = `arn:<AWS::Partition>:rds:<AWS::Region>:<AWS::AccountId>:cluster:<${cluster}>`;
    // both secrets are attached to the cluster
    for (const [ref, secret] of [
      [ownerRef, ownerSecret],
      [appRef, appSecret],
    ] as const) {
      const attachment = t.findResources('AWS::SecretsManager::SecretTargetAttachment')[ref]!
        .Properties as Json;
      expect(attachment.SecretId).toEqual({ Ref: secret });
      expect(attachment.TargetId).toEqual({ Ref: cluster });
    }
    // the app role's secret: its user name, a generated password, no rotation
    const app = t.findResources('AWS::SecretsManager::Secret')[appSecret]!.Properties as Json;
    const generated = app.GenerateSecretString as Json;
    expect(JSON.parse(String(generated.SecretStringTemplate))).toEqual({ username: SEARCH_APP_USER });
    expect(generated.GenerateStringKey).toBe('password');
    t.resourceCountIs('AWS::SecretsManager::RotationSchedule', 0);
    for (const id of Object.keys(t.findResources('AWS::Lambda::Function'))) {
      const grants = grantsOf(t, id);
      const search = Object.keys(grants).filter(
        (a) => a.startsWith('rds-data:') || a.startsWith('secretsmanager:'),
      );
      if (id !== fn && id !== api) {
        expect(search, id).toEqual([]);
        continue;
      }
      expect(search.sort(), id).toEqual([...SEARCH_DATA_API_ACTIONS, ...SEARCH_SECRET_ACTIONS].sort());
      for (const a of SEARCH_DATA_API_ACTIONS) expect(grants[a], `${id} ${a}`).toEqual([clusterArn]);
      // the API never has the master user's secret: it cannot migrate, nor act as the tables' owner
      const secrets = id === api ? [`<${appRef}>`] : [`<${appRef}>`, `<${ownerRef}>`].sort();
      for (const a of SEARCH_SECRET_ACTIONS) expect(grants[a], `${id} ${a}`).toEqual(secrets);
      expect(
        Object.keys(grants).some((a) => a.includes('*')),
        id,
      ).toBe(false);
    }
  });

  it('names the cluster, the app secret and the database to both functions, the master secret to the indexer alone, as functions/config.ts reads them', () => {
    for (const id of [fn, api]) {
      const env = envOf(t, id);
      expect(arnText(env.SEARCH_CLUSTER_ARN)).toBe(
        `arn:<AWS::Partition>:rds:<AWS::Region>:<AWS::AccountId>:cluster:<${cluster}>`,
      );
      expect(env.SEARCH_SECRET_ARN).toEqual({ Ref: appRef });
      expect(env.SEARCH_DATABASE).toBe(SEARCH_DATABASE);
    }
    expect(envOf(t, fn).SEARCH_OWNER_SECRET_ARN).toEqual({ Ref: ownerRef });
    expect(envOf(t, api).SEARCH_OWNER_SECRET_ARN).toBeUndefined();
    // deployed values of those shapes parse
    const base = { BUCKET_NAME: 'hansard-segments', TABLE_NAME: 'Hansard-State', AWS_REGION: 'eu-west-1' };
    const deployed = {
      ...base,
      SEARCH_CLUSTER_ARN: 'arn:aws:rds:eu-west-1:111122223333:cluster:hansard-searchcluster-abc123',
      SEARCH_SECRET_ARN:
        'arn:aws:secretsmanager:eu-west-1:111122223333:secret:SearchClusterSecret3fdaad7e-AbCdEf',
      SEARCH_DATABASE,
    };
    expect(searchTargetOf(parseConfig(deployed))).toEqual({
      resourceArn: deployed.SEARCH_CLUSTER_ARN,
      secretArn: deployed.SEARCH_SECRET_ARN,
      database: SEARCH_DATABASE,
      ownerSecretArn: null,
    });
    const owner = 'arn:aws:secretsmanager:eu-west-1:111122223333:secret:SearchClusterSecretAttachment-XyZ123';
    expect(searchTargetOf(parseConfig({ ...deployed, SEARCH_OWNER_SECRET_ARN: owner }))).toMatchObject({
      secretArn: deployed.SEARCH_SECRET_ARN,
      ownerSecretArn: owner,
    });
    expect(() => searchTargetOf(parseConfig({ ...base, SEARCH_OWNER_SECRET_ARN: owner }))).toThrow(
      ConfigError,
    );
    expect(() => parseConfig({ ...deployed, SEARCH_OWNER_SECRET_ARN: 'hansard_admin' })).toThrow(
      /SEARCH_OWNER_SECRET_ARN/,
    );
    expect(searchTargetOf(parseConfig(base))).toBeNull();
    expect(() => searchTargetOf(parseConfig({ ...base, SEARCH_DATABASE }))).toThrow(
      /SEARCH_CLUSTER_ARN \(required with SEARCH_DATABASE\); SEARCH_SECRET_ARN/,
    );
    expect(() => parseConfig({ ...deployed, SEARCH_CLUSTER_ARN: 'hansard-search' })).toThrow(
      /SEARCH_CLUSTER_ARN/,
    );
  });

  it("gives the indexer the table reads its methods send, the segments' reads and the stream's, nothing else", () => {
    const grants = grantsOf(t, fn);
    const table = one(t, 'AWS::DynamoDB::Table')[0];
    const expected = new Set(accessOf(SEARCH_STATE_METHODS).map((a) => `dynamodb:${a.action}`));
    expect(searchDynamoAccess().every((a) => ['GetItem', 'Query'].includes(a.action))).toBe(true);
    const dynamo = Object.keys(grants).filter((a) => a.startsWith('dynamodb:'));
    expect(dynamo.sort()).toEqual(
      [
        ...expected,
        'dynamodb:DescribeStream',
        'dynamodb:GetRecords',
        'dynamodb:GetShardIterator',
        'dynamodb:ListStreams',
      ].sort(),
    );
    for (const a of [
      'dynamodb:DescribeStream',
      'dynamodb:GetRecords',
      'dynamodb:GetShardIterator',
      'dynamodb:ListStreams',
    ])
      expect(grants[a], a).toEqual([`<${table}>`]);
    // no write of any kind to the table, the bucket or elsewhere but the logs and the dead-letter queue
    expect(
      Object.keys(grants).filter(
        (a) => /:(Put|Update|Delete|BatchWrite|TransactWrite)/.test(a) && !a.startsWith('logs:'),
      ),
    ).toEqual([]);
    expect(grants['s3:GetObject']).toBeDefined();
    expect(grants['s3:PutObject']).toBeUndefined();
  });

  it('triggers the indexer from the stream in batches, reporting failed items, halving and retrying, then the dead-letter queue', () => {
    const mappings = Object.values(t.findResources('AWS::Lambda::EventSourceMapping')).map(
      (m) => m.Properties as Json,
    );
    const mine = mappings.filter((m) => (m.FunctionName as Json).Ref === fn);
    expect(mine).toHaveLength(1);
    const table = one(t, 'AWS::DynamoDB::Table')[0];
    expect(mine[0]).toMatchObject({
      EventSourceArn: { 'Fn::GetAtt': [table, 'StreamArn'] },
      StartingPosition: 'LATEST',
      BatchSize: SEARCH_BATCH_SIZE,
      MaximumBatchingWindowInSeconds: 1,
      BisectBatchOnFunctionError: true,
      FunctionResponseTypes: ['ReportBatchItemFailures'],
      MaximumRetryAttempts: SEARCH_STREAM_RETRIES,
      DestinationConfig: { OnFailure: { Destination: { 'Fn::GetAtt': [queue, 'Arn'] } } },
    });
    // the alerts' trigger is the stream's other consumer: two per stream, DynamoDB's guidance
    expect(mappings).toHaveLength(2);
    const fnProps = t.findResources('AWS::Lambda::Function')[fn]!.Properties as Json;
    expect(fnProps).toMatchObject({ Timeout: SEARCH_TIMEOUT.toSeconds(), Runtime: 'nodejs22.x' });
  });

  it('filters the stream to writer items and the items of a session’s facts, made by the store’s key builders, and to no other item', () => {
    const m = Object.values(t.findResources('AWS::Lambda::EventSourceMapping'))
      .map((x) => x.Properties as Json)
      .find((x) => (x.FunctionName as Json).Ref === fn)!;
    const filters = (m.FilterCriteria as { Filters: Json[] }).Filters;
    const passes = (r: Json) => passesFilters(filters, r);
    for (const [name, item] of Object.entries(ITEMS)) {
      for (const ev of ['INSERT', 'MODIFY'] as const)
        expect(passes(record(ev, item)), `${ev} ${name}`).toBe(true);
      expect(passes(record('REMOVE', item)), `REMOVE ${name}`).toBe(false);
    }
    for (const [name, item] of Object.entries(OTHERS)) {
      for (const ev of ['INSERT', 'MODIFY'] as const)
        expect(passes(record(ev, item)), `${ev} ${name}`).toBe(false);
    }
  });

  it('decodes each record the filters pass into its entry, as the drain queues it, and the others into none', () => {
    const decode = (r: Json) => {
      const parsed = SearchStreamRecord.safeParse(r);
      expect(parsed.success).toBe(true);
      return parsed.success ? searchEntryOf(parsed.data) : undefined;
    };
    expect(decode(record('MODIFY', ITEMS.writer))).toEqual({ tenant: T, sid: SID, w: W });
    for (const facts of [ITEMS.status, ITEMS.work, ITEMS.session])
      expect(decode(record('INSERT', facts)), facts.sk).toEqual({ tenant: T, sid: SID, w: '' });
    for (const [name, item] of Object.entries(OTHERS))
      expect(decode(record('INSERT', item)), name).toBeNull();
    expect(decode(record('REMOVE', ITEMS.writer))).toBeNull();
    // attributes that disagree with the key name nothing (the key is rebuilt from them)
    expect(decode(record('MODIFY', { ...ITEMS.writer, sid: 's_other' }))).toBeNull();
    expect(decode(record('MODIFY', { ...ITEMS.status, tenant: 'other' }))).toBeNull();
  });

  it('keeps failed batches in an encrypted, TLS-only queue for 14 days that only the indexer writes, and alarms on it, errors and lag', () => {
    const q = t.findResources('AWS::SQS::Queue')[queue]!.Properties as Json;
    expect(q).toMatchObject({
      SqsManagedSseEnabled: true,
      MessageRetentionPeriod: SEARCH_DLQ_RETENTION.toSeconds(),
    });
    const policy = Object.values(t.findResources('AWS::SQS::QueuePolicy'))
      .map((p) => p.Properties as Json)
      .find((p) => list(p.Queues as Json[]).some((x) => x.Ref === queue))!;
    expect((policy.PolicyDocument as { Statement: Json[] }).Statement).toEqual([
      expect.objectContaining({ Effect: 'Deny', Condition: { Bool: { 'aws:SecureTransport': 'false' } } }),
    ]);
    for (const id of Object.keys(t.findResources('AWS::Lambda::Function'))) {
      const onQueue = Object.entries(grantsOf(t, id)).filter(([, rs]) => rs.includes(`<${queue}>`));
      if (id === fn) expect(onQueue.map(([a]) => a)).toContain('sqs:SendMessage');
      else expect(onQueue, id).toEqual([]);
    }
    const alarms = Object.entries(t.findResources('AWS::CloudWatch::Alarm')).filter(([id]) =>
      id.startsWith('Search'),
    );
    expect(alarms.map(([id]) => id.replace(/[0-9A-F]{8}$/, '')).sort()).toEqual([
      'SearchErrorsAlarm',
      'SearchLogErrorsAlarm',
      'SearchStreamDlqAlarm',
      'SearchStreamIteratorAgeAlarm',
    ]);
    const topic = one(t, 'AWS::SNS::Topic')[0];
    for (const [id, a] of alarms) expect((a.Properties as Json).AlarmActions, id).toEqual([{ Ref: topic }]);
    const age = alarms.find(([id]) => id.startsWith('SearchStreamIteratorAge'))![1].Properties as Json;
    expect(age).toMatchObject({ MetricName: 'IteratorAge', Threshold: SEARCH_ITERATOR_AGE_MS });
  });
});
