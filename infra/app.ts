/**
 * The CDK app (`cdk.json`: `npx tsx infra/app.ts`): one `HansardStack`, and the `HansardEdgeWaf` stack in
 * us-east-1 when asked for. Settings come from CDK context, e.g.
 * `npx cdk deploy -c hansard:stackName=HansardStaging -c hansard:replayConcurrency=20`:
 *
 * | context key                  | default   | what                                                   |
 * |------------------------------|-----------|--------------------------------------------------------|
 * | `hansard:stackName`          | `Hansard` | the CloudFormation stack's name                        |
 * | `hansard:logLevel`           | `INFO`    | `LOG_LEVEL` of the functions                           |
 * | `hansard:rateLimit`/`:burstLimit` | 1000 / 2000 | the HTTP API's throttle (per second, all callers) |
 * | `hansard:tokenRateLimit`     | 6000      | requests a minute per token (the app's own limit)      |
 * | `hansard:tenantQuotaBytes`   | 10 GiB    | bytes of segments a tenant may store                   |
 * | `hansard:replayConcurrency`  | 50        | reserved concurrency of the public replay function; `none` for none |
 * | `hansard:noncurrentVersionDays` | 30     | older versions of an object deleted after; 0 keeps them |
 * | `hansard:coldStorageDays`    | 30        | objects to Intelligent-Tiering after; 0 never          |
 * | `hansard:edge`               | false     | CloudFront + WAF in front of the replay URL            |
 * | `hansard:webAclArn`          | none      | the WebACL for `edge` (made in us-east-1); none: the stack makes one (us-east-1 only) |
 * | `hansard:wafRateLimit`       | 300       | requests per client IP per 5 minutes, for the WebACL the stack makes (ignored with `webAclArn`: set it on `HansardEdgeWaf`) |
 * | `hansard:edgeWafStack`       | false     | also define `HansardEdgeWaf` (the WebACL alone, us-east-1) |
 * | `hansard:edgeSecretVersion`  | 1         | label of the edge's origin secret: change it to rotate     |
 * | `hansard:objectLockDays`     | off       | S3 Object Lock retention of every object (new bucket)  |
 * | `hansard:objectLockMode`     | GOVERNANCE | GOVERNANCE or COMPLIANCE (with objectLockDays)        |
 * | `hansard:digestIntervalSeconds` | 300    | base interval of the signed session digests            |
 * | `hansard:boardOrigin`        | the API URL | the board's origin (a custom domain): alert events' links, sign-in's redirect URI |
 * | `hansard:search`             | true      | search: an Aurora Serverless v2 cluster (0 ACU when idle) and its indexer (infra/search.ts); false leaves both out and GET /v1/search answers 503 |
 * | `hansard:searchMaxAcu`       | 4         | the most ACU the search cluster scales to (docs/scale.md "Search") |
 *
 * No lookups and no account or region in the main stack: synth works offline and without credentials.
 */
import { App } from 'aws-cdk-lib';
import { EdgeWafStack } from './edge.js';
import { DEFAULT_THROTTLE, HansardStack } from './stack.js';
import { DEFAULT_LIFECYCLE } from './storage.js';

const app = new App();
const ctx = (key: string): string | undefined => {
  const v: unknown = app.node.tryGetContext(`hansard:${key}`);
  return v === undefined || v === null || v === '' ? undefined : String(v);
};
const num = (key: string): number | undefined => {
  const v = ctx(key);
  if (v === undefined) return undefined;
  const n = Number(v);
  if (!Number.isInteger(n) || n < 0)
    throw new Error(`context hansard:${key} must be a whole number, not ${v}`);
  return n;
};
const flag = (key: string, byDefault = false): boolean => {
  const v = ctx(key)?.toLowerCase();
  if (v === undefined) return byDefault;
  if (v === 'false') return false;
  if (v === 'true') return true;
  throw new Error(`context hansard:${key} must be true or false, not ${v}`);
};

/** S3 Object Lock from `hansard:objectLockDays` (and `:objectLockMode`), or off. */
function objectLock(): { mode: 'GOVERNANCE' | 'COMPLIANCE'; days: number } | undefined {
  const days = num('objectLockDays');
  const mode = (ctx('objectLockMode') ?? 'GOVERNANCE').toUpperCase();
  if (mode !== 'GOVERNANCE' && mode !== 'COMPLIANCE')
    throw new Error(`context hansard:objectLockMode must be GOVERNANCE or COMPLIANCE, not ${mode}`);
  if (days === undefined || days === 0) return undefined;
  return { mode, days };
}

/** `hansard:replayConcurrency`: a whole number ≥ 1, or `none` (0 would stop the function, so it is refused). */
function replayConcurrency(): number | 'none' | undefined {
  if (ctx('replayConcurrency')?.toLowerCase() === 'none') return 'none';
  const n = num('replayConcurrency');
  if (n === 0) throw new Error('context hansard:replayConcurrency=0 would stop every replay: use none');
  return n;
}

/** `hansard:searchMaxAcu`: ACU in steps of 0.5 (infra/search.ts checks the range). */
function searchMaxAcu(): number | undefined {
  const v = ctx('searchMaxAcu');
  if (v === undefined) return undefined;
  const n = Number(v);
  if (!Number.isFinite(n)) throw new Error(`context hansard:searchMaxAcu must be a number of ACU, not ${v}`);
  return n;
}

const wafRateLimit = num('wafRateLimit');
new HansardStack(app, ctx('stackName') ?? 'Hansard', {
  logLevel: ctx('logLevel'),
  replayConcurrency: replayConcurrency(),
  throttle: {
    rateLimit: num('rateLimit') ?? DEFAULT_THROTTLE.rateLimit,
    burstLimit: num('burstLimit') ?? DEFAULT_THROTTLE.burstLimit,
  },
  tokenRateLimit: num('tokenRateLimit'),
  tenantQuotaBytes: num('tenantQuotaBytes'),
  objectLock: objectLock(),
  digestIntervalSeconds: num('digestIntervalSeconds'),
  ...(ctx('boardOrigin') ? { boardOrigin: ctx('boardOrigin') } : {}),
  // On unless told otherwise: a deployment's board and CLI offer search (issue 30); idle, the cluster is
  // paused at 0 ACU and costs its storage (docs/scale.md "Search").
  ...(flag('search', true) ? { search: { maxCapacity: searchMaxAcu() } } : {}),
  lifecycle: {
    noncurrentVersionDays: num('noncurrentVersionDays') ?? DEFAULT_LIFECYCLE.noncurrentVersionDays,
    coldTransitionDays: num('coldStorageDays') ?? DEFAULT_LIFECYCLE.coldTransitionDays,
  },
  ...(flag('edge')
    ? {
        edge: {
          ...(ctx('webAclArn') ? { webAclArn: ctx('webAclArn') } : {}),
          ...(wafRateLimit !== undefined ? { wafRateLimit } : {}),
          ...(ctx('edgeSecretVersion') ? { originSecretVersion: ctx('edgeSecretVersion') } : {}),
        },
      }
    : {}),
});
if (flag('edgeWafStack')) {
  new EdgeWafStack(app, 'HansardEdgeWaf', {
    account: process.env.CDK_DEFAULT_ACCOUNT,
    ...(wafRateLimit !== undefined ? { wafRateLimit } : {}),
  });
}
app.synth();
