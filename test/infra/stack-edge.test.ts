/**
 * The replay URL behind CloudFront and WAF (issue 17.4, infra/edge.ts), in the template: off by default;
 * on, a distribution whose origin is the replay function URL, that forwards the bearer token (in the
 * cache key: CloudFront forwards Authorization no other way) and caches nothing by default, behind a
 * CLOUDFRONT-scope WebACL with a rate rule per IP; the WebACL made in the stack only where the stack is
 * deployed in us-east-1 (a CloudFormation rule), or given by ARN (the `HansardEdgeWaf` stack's); a
 * generated secret origin header CloudFront sends and only the replay function requires.
 */
import { App } from 'aws-cdk-lib';
import { Template } from 'aws-cdk-lib/assertions';
import { describe, expect, it } from 'vitest';
import { DEFAULT_WAF_RATE_LIMIT, EdgeWafStack, replayWebAcl, WAF_REGION } from '../../infra/edge.js';
import { HansardStack, type HansardStackProps } from '../../infra/stack.js';
import { MIN_ORIGIN_SECRET_LENGTH, ORIGIN_SECRET_HEADER } from '../../lib/http/origin-secret.js';

type Json = Record<string, unknown>;

/** CloudFront's managed origin request policy "AllViewerExceptHostHeader" (its id is fixed by AWS). */
const ALL_VIEWER_EXCEPT_HOST_HEADER = 'b689b0a8-53d0-40ab-baf2-68738e2966ac';
const ARN = 'arn:aws:wafv2:us-east-1:111122223333:global/webacl/hansard/0123abcd';

function synth(props: HansardStackProps = {}): Template {
  const app = new App({ context: { 'aws:cdk:bundling-stacks': [] } });
  return Template.fromStack(new HansardStack(app, 'Hansard', props));
}

const one = (t: Template, type: string): [string, Json] => {
  const found = Object.entries(t.findResources(type));
  expect(found).toHaveLength(1);
  return [found[0]![0], found[0]![1].Properties as Json];
};

// Each case synthesizes the stack: ~1 s alone, 30 s and more on a loaded machine.
describe('the replay URL behind CloudFront and WAF', { timeout: 120_000 }, () => {
  it('is off by default: no distribution, no WebACL, no region rule', () => {
    const t = synth();
    t.resourceCountIs('AWS::CloudFront::Distribution', 0);
    t.resourceCountIs('AWS::WAFv2::WebACL', 0);
    expect(Object.keys((t.toJSON() as { Rules?: Json }).Rules ?? {})).toEqual(['CheckBootstrapVersion']);
    expect(t.findOutputs('ReplayEdgeUrl')).toEqual({});
  });

  it('puts the function URL behind a distribution that forwards the bearer token and caches nothing by default', () => {
    const t = synth({ edge: {} });
    const [, dist] = one(t, 'AWS::CloudFront::Distribution');
    const config = dist.DistributionConfig as Json;
    const [url] = one(t, 'AWS::Lambda::Url');
    const [policyId, policy] = one(t, 'AWS::CloudFront::CachePolicy');
    const origins = config.Origins as Json[];
    expect(origins).toHaveLength(1);
    // the origin is the function URL's host: https://<id>.lambda-url.<region>.on.aws/ → <id>.lambda-url…
    expect(JSON.stringify(origins[0]!.DomainName)).toContain(url);
    expect(origins[0]).toMatchObject({
      CustomOriginConfig: { OriginProtocolPolicy: 'https-only', OriginReadTimeout: 60 },
    });
    const behavior = config.DefaultCacheBehavior as Json;
    expect(behavior).toMatchObject({
      AllowedMethods: ['GET', 'HEAD'],
      ViewerProtocolPolicy: 'https-only',
      CachePolicyId: { Ref: policyId },
      OriginRequestPolicyId: ALL_VIEWER_EXCEPT_HOST_HEADER,
      Compress: false,
    });
    const cp = policy.CachePolicyConfig as Json;
    expect(cp).toMatchObject({ MinTTL: 0, DefaultTTL: 0, MaxTTL: 1 });
    expect(cp.ParametersInCacheKeyAndForwardedToOrigin).toMatchObject({
      HeadersConfig: { HeaderBehavior: 'whitelist', Headers: ['Authorization'] },
      QueryStringsConfig: { QueryStringBehavior: 'all' },
      CookiesConfig: { CookieBehavior: 'none' },
    });
    expect(t.findOutputs('ReplayEdgeUrl')).not.toEqual({});
  });

  it('sends a generated secret origin header that only the replay function requires, never in clear in the template', () => {
    const off = synth();
    off.resourceCountIs('AWS::SecretsManager::Secret', 0);
    const t = synth({ edge: {} });
    const [secretId, secret] = one(t, 'AWS::SecretsManager::Secret');
    expect(secret.GenerateSecretString).toMatchObject({
      PasswordLength: 48,
      ExcludePunctuation: true,
      IncludeSpace: false,
    });
    expect((secret.GenerateSecretString as Json).PasswordLength).toBeGreaterThanOrEqual(
      MIN_ORIGIN_SECRET_LENGTH,
    );
    // A dynamic reference to the secret, resolved by CloudFormation at deploy.
    const reference = {
      'Fn::Join': ['', ['{{resolve:secretsmanager:', { Ref: secretId }, ':SecretString:::}}']],
    };
    const [, dist] = one(t, 'AWS::CloudFront::Distribution');
    const origin = ((dist.DistributionConfig as Json).Origins as Json[])[0]!;
    expect(origin.OriginCustomHeaders).toEqual([
      { HeaderName: ORIGIN_SECRET_HEADER, HeaderValue: reference },
    ]);
    const [, url] = one(t, 'AWS::Lambda::Url');
    const env = (logicalId: string) =>
      (t.toJSON().Resources[logicalId].Properties.Environment?.Variables ?? {}) as Json;
    const replayId = (url.TargetFunctionArn as { 'Fn::GetAtt': [string, string] })['Fn::GetAtt'][0];
    expect(env(replayId).EDGE_ORIGIN_SECRET).toEqual(reference);
    // Every other function goes without it, and without edge nothing has it.
    const functions = Object.keys(t.findResources('AWS::Lambda::Function'));
    expect(functions).toContain(replayId);
    for (const id of functions.filter((f) => f !== replayId))
      expect(env(id).EDGE_ORIGIN_SECRET, id).toBeUndefined();
    for (const [id, f] of Object.entries(off.findResources('AWS::Lambda::Function'))) {
      expect(f.Properties.Environment?.Variables?.EDGE_ORIGIN_SECRET, id).toBeUndefined();
    }
  });

  it('rotates the origin secret by its version label: a new one updates the distribution and the replay function', () => {
    const versionOf = (t: Template) => {
      const [, dist] = one(t, 'AWS::CloudFront::Distribution');
      const [, url] = one(t, 'AWS::Lambda::Url');
      const replayId = (url.TargetFunctionArn as { 'Fn::GetAtt': [string, string] })['Fn::GetAtt'][0];
      const env = t.toJSON().Resources[replayId].Properties.Environment.Variables as Json;
      return { comment: (dist.DistributionConfig as Json).Comment, env: env.EDGE_ORIGIN_SECRET_VERSION };
    };
    expect(versionOf(synth({ edge: {} }))).toEqual({
      comment: 'hansard replay URL behind WAF (origin secret 1)',
      env: '1',
    });
    expect(versionOf(synth({ edge: { originSecretVersion: '2026-12' } }))).toEqual({
      comment: 'hansard replay URL behind WAF (origin secret 2026-12)',
      env: '2026-12',
    });
  });

  it('makes a CLOUDFRONT WebACL with a per-IP rate rule, and refuses to deploy outside us-east-1', () => {
    const t = synth({ edge: { wafRateLimit: 500 } });
    const [, dist] = one(t, 'AWS::CloudFront::Distribution');
    const [aclId, acl] = one(t, 'AWS::WAFv2::WebACL');
    expect((dist.DistributionConfig as Json).WebACLId).toEqual({ 'Fn::GetAtt': [aclId, 'Arn'] });
    expect(acl).toMatchObject({ Scope: 'CLOUDFRONT', DefaultAction: { Allow: {} } });
    expect(acl.Rules).toEqual([
      expect.objectContaining({
        Action: { Block: {} },
        Statement: { RateBasedStatement: { Limit: 500, AggregateKeyType: 'IP', EvaluationWindowSec: 300 } },
      }),
    ]);
    const rules = (t.toJSON() as { Rules: Record<string, { Assertions: Json[] }> }).Rules;
    const region = Object.entries(rules).find(([id]) => id.includes('WebAclRegion'))![1];
    expect(region.Assertions[0]).toMatchObject({
      Assert: { 'Fn::Equals': [{ Ref: 'AWS::Region' }, WAF_REGION] },
    });
    expect(String(region.Assertions[0]!.AssertDescription)).toContain('hansard:webAclArn');
    expect(synth({ edge: {} }).findResources('AWS::WAFv2::WebACL')).not.toEqual({});
  });

  it('uses a WebACL given by ARN, and then needs no region', () => {
    const t = synth({ edge: { webAclArn: ARN } });
    t.resourceCountIs('AWS::WAFv2::WebACL', 0);
    const [, dist] = one(t, 'AWS::CloudFront::Distribution');
    expect((dist.DistributionConfig as Json).WebACLId).toBe(ARN);
    expect(Object.keys((t.toJSON() as { Rules?: Json }).Rules ?? {})).toEqual(['CheckBootstrapVersion']);
  });

  it('HansardEdgeWaf holds the WebACL alone, in us-east-1, and outputs its ARN', () => {
    const app = new App();
    const stack = new EdgeWafStack(app, 'HansardEdgeWaf', {});
    expect(stack.region).toBe('us-east-1');
    const t = Template.fromStack(stack);
    expect(Object.values(t.toJSON().Resources as Json).map((r) => (r as Json).Type)).toEqual([
      'AWS::WAFv2::WebACL',
    ]);
    const [, acl] = one(t, 'AWS::WAFv2::WebACL');
    expect(acl.Rules).toEqual([
      expect.objectContaining({
        Statement: { RateBasedStatement: expect.objectContaining({ Limit: DEFAULT_WAF_RATE_LIMIT }) },
      }),
    ]);
    expect(Object.keys(t.findOutputs('WebAclArn'))).toEqual(['WebAclArn']);
  });

  it('refuses a rate limit WAF would refuse (its bounds: 10 to 2e9 per window)', () => {
    const app = new App();
    expect(() => replayWebAcl(new EdgeWafStack(app, 'A'), 'X', 5)).toThrow(/10 to/);
    expect(() => synth({ edge: { wafRateLimit: 1.5 } })).toThrow(/whole number/);
  });
});
