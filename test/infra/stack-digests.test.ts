/**
 * The signed digests in the CDK stack (issue 15.2, 15.4): the KMS Ed25519 key, the digest function and
 * its schedule, each role's KMS and S3 grants (derived from the code that calls them), and the S3 Object
 * Lock option (off by default).
 */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { App } from 'aws-cdk-lib';
import { Match, Template } from 'aws-cdk-lib/assertions';
import { beforeAll, describe, expect, it } from 'vitest';
import { REPLAY_SIGNING_ACTIONS } from '../../functions/access.js';
import { DIGEST_OBJECTS } from '../../infra/lambda.js';
import {
  DIGEST_TIMEOUT,
  HansardStack,
  type HansardStackProps,
  SIGNING_KEY_ACCOUNT_ACTIONS,
} from '../../infra/stack.js';
import { grantsOf, list, sdkCommandsIn } from '../support/template-text.js';
import { ROOT } from './lambda-bundle.js';

type Json = Record<string, unknown>;
interface Statement {
  Action?: string | string[];
  Resource?: unknown;
  Principal?: unknown;
  Condition?: Json;
}

const cdkContext = (JSON.parse(readFileSync(join(ROOT, 'cdk.json'), 'utf8')) as { context: Json }).context;

/** The template `cdk synth` writes (cdk.json's context), asset bundling skipped. */
function synth(props: HansardStackProps = {}): Template {
  const app = new App({ context: { ...cdkContext, 'aws:cdk:bundling-stacks': [] } });
  return Template.fromStack(new HansardStack(app, 'Hansard', props));
}

function fnOf(t: Template, prefix: string): { id: string; props: Json } {
  const [id, fn] = Object.entries(t.findResources('AWS::Lambda::Function')).find(([, f]) =>
    String((f.Properties as Json).Description).startsWith(prefix),
  )!;
  return { id, props: fn.Properties as Json };
}

/** `{ action: [resources] }` of the role of the function whose description starts with `prefix`. */
const grants = (t: Template, prefix: string): Record<string, string[]> => grantsOf(t, fnOf(t, prefix).id);

/** The SDK operations a source file sends (`new XCommand(`, `paginateX(`). */
function commandsIn(file: string): string[] {
  return sdkCommandsIn(readFileSync(join(ROOT, file), 'utf8'));
}

describe('the signed digests in HansardStack', () => {
  let t: Template;
  let key: string;
  let bucket: string;
  beforeAll(() => {
    t = synth();
    // the signing key (the alerts' secrets key is symmetric: test/infra/alerts-stack.test.ts)
    key = Object.keys(
      t.findResources('AWS::KMS::Key', { Properties: { KeySpec: 'ECC_NIST_EDWARDS25519' } }),
    )[0]!;
    bucket = Object.keys(t.findResources('AWS::S3::Bucket'))[0]!;
  });

  it('makes one retained Ed25519 signing key whose policy names its actions, no kms:*', () => {
    expect(
      Object.keys(t.findResources('AWS::KMS::Key', { Properties: { KeyUsage: 'SIGN_VERIFY' } })),
    ).toEqual([key]);
    t.hasResource('AWS::KMS::Key', {
      DeletionPolicy: 'Retain',
      Properties: Match.objectLike({
        KeySpec: 'ECC_NIST_EDWARDS25519',
        KeyUsage: 'SIGN_VERIFY',
      }),
    });
    const policy = (t.findResources('AWS::KMS::Key')[key]!.Properties as Json).KeyPolicy as {
      Statement: Statement[];
    };
    expect(policy.Statement).toHaveLength(1);
    const [s] = policy.Statement;
    expect(list(s!.Action).sort()).toEqual([...SIGNING_KEY_ACCOUNT_ACTIONS].sort());
    expect(list(s!.Action).some((a) => a.endsWith('*'))).toBe(false);
    expect(JSON.stringify(s!.Principal)).toContain(':root');
    // The account delegates to IAM every call the signer makes (the roles' policies below).
    for (const c of commandsIn('lib/audit/kms-signer.ts'))
      expect(SIGNING_KEY_ACCOUNT_ACTIONS).toContain(`kms:${c}`);
    t.hasOutput('SigningKeyArn', { Value: { 'Fn::GetAtt': [key, 'Arn'] } });
  });

  it('runs the digester every minute from EventBridge, without retries (the next run takes what is still due)', () => {
    const digester = fnOf(t, 'hansard digester');
    expect(digester.props.Timeout).toBe(DIGEST_TIMEOUT.toSeconds());
    expect(DIGEST_TIMEOUT.toSeconds()).toBeLessThan(60);
    t.hasResourceProperties('AWS::Events::Rule', {
      ScheduleExpression: 'rate(1 minute)',
      State: 'ENABLED',
      Targets: [
        Match.objectLike({
          Arn: { 'Fn::GetAtt': [digester.id, 'Arn'] },
          RetryPolicy: { MaximumRetryAttempts: 0 },
        }),
      ],
    });
  });

  it("grants the digester only the digests' objects, Sign and GetPublicKey on the key, and its table reads and head writes", () => {
    const g = grants(t, 'hansard digester');
    // writeDigest stores a digest create-only and reads one back (a conflict compared, a crash's adopted):
    // the digest store's Put and Get, not its listing (the export's, in the API function).
    expect(commandsIn('lib/store/s3/digest-store.ts')).toEqual(['GetObject', 'ListObjectsV2', 'PutObject']);
    expect(g['s3:GetObject']).toEqual([`<${bucket}>/${DIGEST_OBJECTS}`]);
    expect(g['s3:PutObject']).toEqual([`<${bucket}>/${DIGEST_OBJECTS}`]);
    expect(DIGEST_OBJECTS).toBe('tenants/*/sessions/*/digests/*');
    // current() reads the key id (GetPublicKey) and signs; DescribeKey is publicKeys()' only (GET /v1/keys)
    expect(g['kms:Sign']).toEqual([`<${key}>`]);
    expect(g['kms:GetPublicKey']).toEqual([`<${key}>`]);
    expect(
      Object.keys(g)
        .filter((a) => !/^(dynamodb|logs):/.test(a))
        .sort(),
    ).toEqual(['kms:GetPublicKey', 'kms:Sign', 's3:GetObject', 's3:PutObject']);
    expect(fnOf(t, 'hansard digester').props.Environment).toMatchObject({
      Variables: { SIGNING_KEY_ARN: { 'Fn::GetAtt': [key, 'Arn'] }, BUCKET_NAME: { Ref: bucket } },
    });
  });

  it('lets the API function sign (the export, POST …/digests) and read the key (GET /v1/keys)', () => {
    const api = grants(t, 'hansard API');
    for (const c of commandsIn('lib/audit/kms-signer.ts')) expect(api[`kms:${c}`], c).toEqual([`<${key}>`]);
    expect(fnOf(t, 'hansard API').props.Environment).toMatchObject({
      Variables: { SIGNING_KEY_ARN: { 'Fn::GetAtt': [key, 'Arn'] } },
    });
  });

  it("lets the replay function read what its export bundles (digests, the key's public half) and sign nothing", () => {
    const replay = grants(t, 'hansard streamed replays');
    // The key: exactly the read-only actions its code declares, every KMS call of the signer but Sign.
    expect(commandsIn('lib/audit/kms-signer.ts').filter((c) => c !== 'Sign')).toEqual(
      REPLAY_SIGNING_ACTIONS.map((a) => a.replace('kms:', '')).sort(),
    );
    expect(Object.keys(replay).filter((a) => a.startsWith('kms:'))).toEqual([...REPLAY_SIGNING_ACTIONS]);
    for (const a of REPLAY_SIGNING_ACTIONS) expect(replay[a]).toEqual([`<${key}>`]);
    expect(replay['kms:Sign']).toBeUndefined();
    const vars = (fnOf(t, 'hansard streamed replays').props.Environment as { Variables: Json }).Variables;
    expect(vars.SIGNING_KEY_ARN).toEqual({ 'Fn::GetAtt': [key, 'Arn'] });
    // The digests: the digest store's reads (GetObject, ListObjectsV2 = s3:ListBucket) cover their
    // objects; its only writes are the stored copies of large replays under replays/ (issue 17.2), so no
    // digest (nor segment) can be written through this role.
    expect(commandsIn('lib/store/s3/digest-store.ts')).toEqual(['GetObject', 'ListObjectsV2', 'PutObject']);
    expect(replay['s3:PutObject']).toEqual([`<${bucket}>/replays/*`]);
    expect(Object.keys(replay).some((a) => /^s3:Delete/.test(a) || a === 's3:*')).toBe(false);
    const covers = (pattern: string, objects: string) =>
      new RegExp(`^${pattern.replaceAll(/[.+?^$()|[\]\\]/g, '\\$&').replaceAll('*', '.*')}$`).test(
        objects.replaceAll('*', 'x'),
      );
    expect(replay['s3:GetObject']!.some((r) => covers(r, `<${bucket}>/${DIGEST_OBJECTS}`))).toBe(true);
    expect(replay['s3:ListBucket']).toEqual([`<${bucket}>`]);
  });

  it('sets DIGEST_INTERVAL_SECONDS on the API and the digester when given', () => {
    const with60 = synth({ digestIntervalSeconds: 60 });
    for (const prefix of ['hansard API', 'hansard digester']) {
      expect(fnOf(with60, prefix).props.Environment).toMatchObject({
        Variables: { DIGEST_INTERVAL_SECONDS: '60' },
      });
    }
    expect(
      (fnOf(t, 'hansard API').props.Environment as { Variables: Json }).Variables.DIGEST_INTERVAL_SECONDS,
    ).toBeUndefined();
  });

  describe('S3 Object Lock', () => {
    it('is off by default', () => {
      const props = t.findResources('AWS::S3::Bucket')[bucket]!.Properties as Json;
      expect(props.ObjectLockEnabled).toBeUndefined();
      expect(props.ObjectLockConfiguration).toBeUndefined();
    });

    for (const mode of ['GOVERNANCE', 'COMPLIANCE'] as const) {
      it(`${mode}: the bucket is made with Object Lock and a default retention of the days given`, () => {
        const locked = synth({ objectLock: { mode, days: 365 } });
        locked.hasResourceProperties('AWS::S3::Bucket', {
          ObjectLockEnabled: true,
          ObjectLockConfiguration: {
            ObjectLockEnabled: 'Enabled',
            Rule: { DefaultRetention: { Mode: mode, Days: 365 } },
          },
          VersioningConfiguration: { Status: 'Enabled' },
        });
      });
    }
  });
});
