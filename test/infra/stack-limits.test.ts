/**
 * Limits sized and watched (issue 17.3), in the template `cdk synth` writes: the HTTP API's throttle and
 * the per-token limit with their defaults and their context keys (infra/app.ts, run as `cdk synth` runs
 * it), the API's JSON access log, every alarm (what it measures, its threshold, its topic), the bucket's
 * lifecycle rules and the replay function's reserved concurrency (issue 17.4).
 */
import { spawnSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { App } from 'aws-cdk-lib';
import { Match, Template } from 'aws-cdk-lib/assertions';
import { beforeAll, describe, expect, it } from 'vitest';
import {
  API_4XX_PERCENT,
  API_429_PERCENT,
  DURATION_ALARM_SHARE,
  RATE_ALARM_MIN_REQUESTS,
  TRANSACTION_CONFLICTS,
} from '../../infra/alarms.js';
import {
  ACCESS_LOG_FIELDS,
  API_TIMEOUT,
  DEFAULT_REPLAY_CONCURRENCY,
  DEFAULT_THROTTLE,
  DEFAULT_TOKEN_RATE_LIMIT,
  DIGEST_TIMEOUT,
  HansardStack,
  type HansardStackProps,
  REPLAY_TIMEOUT,
} from '../../infra/stack.js';
import { DEFAULT_LIFECYCLE } from '../../infra/storage.js';
import { ROOT } from './lambda-bundle.js';

type Json = Record<string, unknown>;
type Resource = { Type: string; Properties: Json };

const cdkContext = (JSON.parse(readFileSync(join(ROOT, 'cdk.json'), 'utf8')) as { context: Json }).context;

function synth(props: HansardStackProps = {}): Template {
  const app = new App({ context: { ...cdkContext, 'aws:cdk:bundling-stacks': [] } });
  return Template.fromStack(new HansardStack(app, 'Hansard', props));
}

/** The function whose description starts with `prefix`: its logical id and properties. */
function fnOf(t: Template, prefix: string): { id: string; props: Json } {
  const [id, fn] = Object.entries(t.findResources('AWS::Lambda::Function')).find(([, f]) =>
    String((f.Properties as Json).Description).startsWith(prefix),
  )!;
  return { id, props: fn.Properties as Json };
}

/** Every alarm by logical id. */
function alarms(t: Template): Record<string, Json> {
  return Object.fromEntries(
    Object.entries(t.findResources('AWS::CloudWatch::Alarm')).map(([id, a]) => [id, a.Properties as Json]),
  );
}

/** The one alarm whose logical id starts with `name`. */
function alarm(t: Template, name: string): Json {
  const found = Object.entries(alarms(t)).filter(([id]) => id.startsWith(name));
  expect(found.map(([id]) => id)).toHaveLength(1);
  return found[0]![1];
}

/**
 * The template `infra/app.ts` makes with the given `-c hansard:…` context, as `cdk synth` runs it (the
 * app reads its context from `CDK_CONTEXT_JSON`; bundling skipped, so no esbuild).
 */
function appTemplate(context: Record<string, string>): Record<string, Resource> {
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
          ...Object.fromEntries(Object.entries(context).map(([k, v]) => [`hansard:${k}`, v])),
        }),
      },
      timeout: 120_000,
    });
    expect(r.status, r.stderr).toBe(0);
    return (
      JSON.parse(readFileSync(join(out, 'Hansard.template.json'), 'utf8')) as {
        Resources: Record<string, Resource>;
      }
    ).Resources;
  } finally {
    rmSync(out, { recursive: true, force: true });
  }
}

// Each case synthesizes the stack: ~1 s alone, 30 s and more on a loaded machine.
describe('limits and alarms in HansardStack', { timeout: 120_000 }, () => {
  let t: Template;
  let topic: string;
  let table: string;
  beforeAll(() => {
    t = synth();
    topic = Object.keys(t.findResources('AWS::SNS::Topic'))[0]!;
    table = Object.keys(t.findResources('AWS::DynamoDB::Table'))[0]!;
  });

  it('throttles the HTTP API stage at the sized default and gives each token 6,000 requests a minute', () => {
    expect(DEFAULT_THROTTLE).toEqual({ rateLimit: 1000, burstLimit: 2000 });
    t.hasResourceProperties('AWS::ApiGatewayV2::Stage', {
      DefaultRouteSettings: { ThrottlingRateLimit: 1000, ThrottlingBurstLimit: 2000 },
    });
    for (const prefix of ['hansard API', 'hansard streamed replays']) {
      expect(fnOf(t, prefix).props.Environment).toMatchObject({
        Variables: { RATE_LIMIT_PER_MINUTE: String(DEFAULT_TOKEN_RATE_LIMIT) },
      });
    }
    expect(DEFAULT_TOKEN_RATE_LIMIT).toBe(6000);
  });

  it('reserves concurrency for the public replay function by default, and none when told', () => {
    expect(fnOf(t, 'hansard streamed replays').props.ReservedConcurrentExecutions).toBe(
      DEFAULT_REPLAY_CONCURRENCY,
    );
    expect(DEFAULT_REPLAY_CONCURRENCY).toBe(50);
    expect(fnOf(t, 'hansard API').props.ReservedConcurrentExecutions).toBeUndefined();
    const none = synth({ replayConcurrency: 'none' });
    expect(fnOf(none, 'hansard streamed replays').props.ReservedConcurrentExecutions).toBeUndefined();
    expect(
      fnOf(synth({ replayConcurrency: 7 }), 'hansard streamed replays').props.ReservedConcurrentExecutions,
    ).toBe(7);
    // 0 would stop every replay
    expect(() => synth({ replayConcurrency: 0 })).toThrow(/none/);
  });

  it('takes the throttle, the token limit, the replay concurrency and the lifecycle from -c hansard:… context', () => {
    const r = appTemplate({
      rateLimit: '300',
      burstLimit: '600',
      tokenRateLimit: '1200',
      replayConcurrency: 'none',
      noncurrentVersionDays: '7',
      coldStorageDays: '0',
    });
    const of = (type: string) => Object.values(r).filter((x) => x.Type === type);
    expect(of('AWS::ApiGatewayV2::Stage')[0]!.Properties.DefaultRouteSettings).toMatchObject({
      ThrottlingRateLimit: 300,
      ThrottlingBurstLimit: 600,
    });
    const serving = of('AWS::Lambda::Function').filter(
      (f) =>
        !/^hansard (digester|replay builder|compactor|alerts delivery|search indexer)/.test(
          String(f.Properties.Description),
        ),
    );
    expect(serving).toHaveLength(2);
    for (const f of serving) {
      expect(f.Properties.Environment).toMatchObject({ Variables: { RATE_LIMIT_PER_MINUTE: '1200' } });
      expect(f.Properties.ReservedConcurrentExecutions).toBeUndefined();
    }
    const rules = (of('AWS::S3::Bucket')[0]!.Properties.LifecycleConfiguration as { Rules: Json[] }).Rules;
    expect(rules.map((x) => x.Id)).toEqual([
      'ExpireNoncurrentVersions',
      'ExpireStoredReplays',
      'AbortIncompleteMultipartUploads',
    ]);
    expect(rules[0]).toMatchObject({ NoncurrentVersionExpiration: { NoncurrentDays: 7 } });
  }, 150_000);

  it('writes a JSON access log of the API stage, with a retention, that names no path, query or header', () => {
    const stage = Object.values(t.findResources('AWS::ApiGatewayV2::Stage'))[0]!.Properties as Json;
    const settings = stage.AccessLogSettings as {
      DestinationArn: { 'Fn::GetAtt': string[] };
      Format: string;
    };
    const logGroup = settings.DestinationArn['Fn::GetAtt'][0]!;
    expect((t.findResources('AWS::Logs::LogGroup')[logGroup]!.Properties as Json).RetentionInDays).toBe(30);
    const format = JSON.parse(settings.Format) as Record<string, string>;
    expect(format).toEqual(ACCESS_LOG_FIELDS);
    // every value one $context variable, so the line stays JSON whatever it holds
    for (const v of Object.values(format)) expect(v).toMatch(/^\$context\.[A-Za-z.]+$/);
    expect(format.requestId).toBe('$context.requestId');
    expect(format.status).toBe('$context.status');
    expect(format.dataProcessed).toBe('$context.dataProcessed');
    expect(
      Object.values(format).filter((v) => /path|querystring|header|authorization|userAgent/i.test(v)),
    ).toEqual([]);
  });

  it('counts 429s from the access log and alarms on their share and on the 4xx share of the requests', () => {
    const stage = Object.values(t.findResources('AWS::ApiGatewayV2::Stage'))[0]!.Properties as Json;
    const logGroup = (stage.AccessLogSettings as { DestinationArn: { 'Fn::GetAtt': string[] } })
      .DestinationArn['Fn::GetAtt'][0];
    t.hasResourceProperties('AWS::Logs::MetricFilter', {
      LogGroupName: { Ref: logGroup },
      FilterPattern: '{ $.status = "429" }',
      MetricTransformations: [
        Match.objectLike({ MetricNamespace: 'Hansard', MetricName: 'Api429', MetricValue: '1' }),
      ],
    });
    for (const [name, percent, metric] of [
      ['Api429RateAlarm', API_429_PERCENT, 'Api429'],
      ['Api4xxRateAlarm', API_4XX_PERCENT, '4xx'],
    ] as const) {
      const a = alarm(t, name);
      expect(a).toMatchObject({
        Threshold: percent,
        AlarmActions: [{ Ref: topic }],
        TreatMissingData: 'notBreaching',
      });
      const metrics = a.Metrics as { Id: string; Expression?: string; MetricStat?: { Metric: Json } }[];
      expect(metrics.find((m) => m.Expression)!.Expression).toBe(
        `IF(whole >= ${RATE_ALARM_MIN_REQUESTS}, 100 * part / whole, 0)`,
      );
      expect(metrics.find((m) => m.Id === 'part')!.MetricStat!.Metric).toMatchObject({ MetricName: metric });
      expect(metrics.find((m) => m.Id === 'whole')!.MetricStat!.Metric).toMatchObject({
        Namespace: 'AWS/ApiGateway',
        MetricName: 'Count',
      });
    }
  });

  it('alarms when a function p99 duration reaches 80% of its timeout, for each function', () => {
    for (const [name, prefix, timeout] of [
      ['ApiDurationAlarm', 'hansard API', API_TIMEOUT],
      ['ReplayDurationAlarm', 'hansard streamed replays', REPLAY_TIMEOUT],
      ['DigestDurationAlarm', 'hansard digester', DIGEST_TIMEOUT],
    ] as const) {
      expect(alarm(t, name)).toMatchObject({
        Namespace: 'AWS/Lambda',
        MetricName: 'Duration',
        ExtendedStatistic: 'p99',
        Threshold: timeout.toMilliseconds() * DURATION_ALARM_SHARE,
        Dimensions: [{ Name: 'FunctionName', Value: { Ref: fnOf(t, prefix).id } }],
        AlarmActions: [{ Ref: topic }],
      });
    }
    expect(alarm(t, 'ApiDurationAlarm').Threshold).toBe(23_200);
  });

  it("alarms on the replay function URL's 5xx count and 4xx share", () => {
    const replay = fnOf(t, 'hansard streamed replays').id;
    expect(alarm(t, 'ReplayUrl5xxAlarm')).toMatchObject({
      Namespace: 'AWS/Lambda',
      MetricName: 'Url5xxCount',
      Dimensions: [{ Name: 'FunctionName', Value: { Ref: replay } }],
      Threshold: 5,
    });
    const metrics = alarm(t, 'ReplayUrl4xxRateAlarm').Metrics as {
      Id: string;
      MetricStat?: { Metric: Json };
    }[];
    expect(metrics.find((m) => m.Id === 'part')!.MetricStat!.Metric).toMatchObject({
      MetricName: 'Url4xxCount',
    });
    expect(metrics.find((m) => m.Id === 'whole')!.MetricStat!.Metric).toMatchObject({
      MetricName: 'UrlRequestCount',
      Dimensions: [{ Name: 'FunctionName', Value: { Ref: replay } }],
    });
  });

  it('alarms on DynamoDB read and write throttles (table and index), transaction conflicts and system errors', () => {
    for (const kind of ['Read', 'Write']) {
      expect(alarm(t, `State${kind}ThrottleAlarm`)).toMatchObject({
        Namespace: 'AWS/DynamoDB',
        MetricName: `${kind}ThrottleEvents`,
        Dimensions: [{ Name: 'TableName', Value: { Ref: table } }],
        Threshold: 1,
      });
      expect(alarm(t, `StateIndex${kind}ThrottleAlarm`)).toMatchObject({
        MetricName: `${kind}ThrottleEvents`,
        Dimensions: [
          { Name: 'GlobalSecondaryIndexName', Value: 'gsi1' },
          { Name: 'TableName', Value: { Ref: table } },
        ],
      });
    }
    expect(alarm(t, 'StateTransactionConflictAlarm')).toMatchObject({
      MetricName: 'TransactionConflict',
      Threshold: TRANSACTION_CONFLICTS,
    });
    const system = alarm(t, 'StateSystemErrorsAlarm').Metrics as { MetricStat?: { Metric: Json } }[];
    const ops = system.flatMap((m) =>
      m.MetricStat
        ? [
            (m.MetricStat.Metric.Dimensions as { Name: string; Value: string }[]).find(
              (d) => d.Name === 'Operation',
            )!.Value,
          ]
        : [],
    );
    expect(ops.sort()).toEqual(['GetItem', 'Query', 'TransactWriteItems', 'UpdateItem']);
  });

  it('sends every alarm to the one topic and none while there is no data', () => {
    const all = Object.values(alarms(t));
    // 5xx, 4xx %, 429 %; 4 functions x errors, throttles, duration; the compactor's logged errors;
    // URL 5xx, 4xx %; 4 throttles, conflicts, system errors; the alerts' errors, DLQ, iterator age
    expect(all).toHaveLength(3 + 12 + 1 + 2 + 6 + 3);
    for (const a of all) {
      expect(a.AlarmActions).toEqual([{ Ref: topic }]);
      expect(a.TreatMissingData).toBe('notBreaching');
      expect(a.EvaluationPeriods).toBe(1);
    }
  });

  it('expires noncurrent versions, moves cold segments to Intelligent-Tiering and aborts multipart uploads', () => {
    const bucket = Object.values(t.findResources('AWS::S3::Bucket'))[0]!.Properties as Json;
    const rules = (bucket.LifecycleConfiguration as { Rules: Json[] }).Rules;
    expect(rules).toEqual([
      {
        Id: 'ExpireNoncurrentVersions',
        Status: 'Enabled',
        NoncurrentVersionExpiration: { NoncurrentDays: DEFAULT_LIFECYCLE.noncurrentVersionDays },
        // the delete markers a compaction leaves (issue 17.2), once their old versions are gone
        ExpiredObjectDeleteMarker: true,
      },
      {
        Id: 'ColdSegmentsToIntelligentTiering',
        Status: 'Enabled',
        Prefix: 'tenants/',
        Transitions: [
          { StorageClass: 'INTELLIGENT_TIERING', TransitionInDays: DEFAULT_LIFECYCLE.coldTransitionDays },
        ],
      },
      {
        // the stored copies of large replays (issue 17.2): made again on demand
        Id: 'ExpireStoredReplays',
        Status: 'Enabled',
        Prefix: 'replays/',
        ExpirationInDays: DEFAULT_LIFECYCLE.storedReplayDays,
        NoncurrentVersionExpiration: { NoncurrentDays: 1 },
      },
      {
        Id: 'AbortIncompleteMultipartUploads',
        Status: 'Enabled',
        AbortIncompleteMultipartUpload: { DaysAfterInitiation: DEFAULT_LIFECYCLE.abortMultipartDays },
      },
    ]);
    expect(DEFAULT_LIFECYCLE).toEqual({
      noncurrentVersionDays: 30,
      coldTransitionDays: 30,
      abortMultipartDays: 1,
      storedReplayDays: 1,
    });
    const off = Object.values(
      synth({
        lifecycle: {
          noncurrentVersionDays: 0,
          coldTransitionDays: 0,
          abortMultipartDays: 0,
          storedReplayDays: 0,
        },
      }).findResources('AWS::S3::Bucket'),
    )[0]!.Properties as Json;
    expect(off.LifecycleConfiguration).toBeUndefined();
  });
});
