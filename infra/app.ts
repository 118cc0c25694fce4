/**
 * The CDK app (`cdk.json`: `npx tsx infra/app.ts`): one `HansardStack`. Settings come from CDK context,
 * e.g. `npx cdk deploy -c hansard:stackName=HansardStaging -c hansard:replayConcurrency=20`:
 *
 * | context key                  | default   | what                                                   |
 * |------------------------------|-----------|--------------------------------------------------------|
 * | `hansard:stackName`          | `Hansard` | the CloudFormation stack's name                        |
 * | `hansard:logLevel`           | `INFO`    | `LOG_LEVEL` of the functions                           |
 * | `hansard:replayConcurrency`  | none      | reserved concurrency of the public replay function     |
 * | `hansard:rateLimit`/`:burstLimit` | 50 / 100 | the HTTP API's throttle (per second, all callers)  |
 * | `hansard:tokenRateLimit`     | 600       | requests a minute per token (the app's own limit)      |
 * | `hansard:tenantQuotaBytes`   | 10 GiB    | bytes of segments a tenant may store                   |
 * | `hansard:objectLockDays`     | off       | S3 Object Lock retention of every object (new bucket)  |
 * | `hansard:objectLockMode`     | GOVERNANCE | GOVERNANCE or COMPLIANCE (with objectLockDays)        |
 * | `hansard:digestIntervalSeconds` | 300    | base interval of the signed session digests            |
 *
 * No lookups and no account or region: synth works offline and without credentials.
 */
import { App } from 'aws-cdk-lib';
import { HansardStack } from './stack.js';

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

/** S3 Object Lock from `hansard:objectLockDays` (and `:objectLockMode`), or off. */
function objectLock(): { mode: 'GOVERNANCE' | 'COMPLIANCE'; days: number } | undefined {
  const days = num('objectLockDays');
  const mode = (ctx('objectLockMode') ?? 'GOVERNANCE').toUpperCase();
  if (mode !== 'GOVERNANCE' && mode !== 'COMPLIANCE')
    throw new Error(`context hansard:objectLockMode must be GOVERNANCE or COMPLIANCE, not ${mode}`);
  if (days === undefined || days === 0) return undefined;
  return { mode, days };
}

const rateLimit = num('rateLimit');
const burstLimit = num('burstLimit');
new HansardStack(app, ctx('stackName') ?? 'Hansard', {
  logLevel: ctx('logLevel'),
  replayConcurrency: num('replayConcurrency'),
  throttle: { rateLimit: rateLimit ?? 50, burstLimit: burstLimit ?? 100 },
  tokenRateLimit: num('tokenRateLimit'),
  tenantQuotaBytes: num('tenantQuotaBytes'),
  objectLock: objectLock(),
  digestIntervalSeconds: num('digestIntervalSeconds'),
});
app.synth();
