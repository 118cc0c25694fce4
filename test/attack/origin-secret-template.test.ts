/**
 * Attack 5 on the replay edge's origin secret in the synthesized template (infra/stack.ts, infra/edge.ts):
 * the secret's value must never be in the template in clear, only as a Secrets Manager dynamic reference,
 * and that reference must appear exactly where it is needed (CloudFront's origin custom header and the
 * replay function's EDGE_ORIGIN_SECRET), pointing at the one generated secret: not in an output, not in a
 * custom resource (CloudFormation does not resolve secure references there), not in another function,
 * not granted to any role; with a WebACL given by ARN as well as with the stack's own.
 */
import { App } from 'aws-cdk-lib';
import { Template } from 'aws-cdk-lib/assertions';
import { beforeAll, describe, expect, it } from 'vitest';
import { HansardStack, type HansardStackProps } from '../../infra/stack.js';
import { ORIGIN_SECRET_HEADER } from '../../lib/http/origin-secret.js';

type Json = Record<string, unknown>;
interface Resource {
  Type: string;
  Properties?: Json;
}

function synth(props: HansardStackProps): Json {
  const app = new App({ context: { 'aws:cdk:bundling-stacks': [] } });
  return Template.fromStack(new HansardStack(app, 'Hansard', props)).toJSON() as Json;
}

/** Every path in `v` (a.b[0].c) at which a string holding `needle` sits. */
function pathsOf(v: unknown, needle: string, at = ''): string[] {
  if (typeof v === 'string') return v.includes(needle) ? [at] : [];
  if (Array.isArray(v)) return v.flatMap((x, i) => pathsOf(x, needle, `${at}[${i}]`));
  if (v && typeof v === 'object')
    return Object.entries(v).flatMap(([k, x]) => pathsOf(x, needle, `${at}.${k}`));
  return [];
}

const RESOLVE = '{{resolve:secretsmanager:';

// Each synth is ~1 s alone, 30 s and more on a loaded machine.
describe('the origin secret in the template', { timeout: 300_000 }, () => {
  let own: Json;
  let byArn: Json;
  beforeAll(() => {
    own = synth({ edge: {} });
    byArn = synth({ edge: { webAclArn: 'arn:aws:wafv2:us-east-1:111122223333:global/webacl/h/0123abcd' } });
  }, 300_000);

  for (const [name, t] of [
    ['the stack-made WebACL', () => own],
    ['a WebACL given by ARN', () => byArn],
  ] as const) {
    it(`held (${name}): the dynamic reference appears exactly twice, the origin header and the replay env, both the one secret`, () => {
      const template = t();
      const resources = template.Resources as Record<string, Resource>;
      const secrets = Object.entries(resources).filter(([, r]) => r.Type === 'AWS::SecretsManager::Secret');
      expect(secrets).toHaveLength(1);
      const [secretId, secret] = secrets[0]!;
      // generated at deploy: no value of it in the template
      expect(secret.Properties?.SecretString).toBeUndefined();
      expect(secret.Properties?.GenerateSecretString).toBeDefined();

      const where = pathsOf(template, RESOLVE);
      expect(where).toHaveLength(2);
      const [distId] = Object.entries(resources).find(([, r]) => r.Type === 'AWS::CloudFront::Distribution')!;
      const [urlId, url] = Object.entries(resources).find(([, r]) => r.Type === 'AWS::Lambda::Url')!;
      expect(urlId).toBeTruthy();
      const replayId = (url.Properties!.TargetFunctionArn as { 'Fn::GetAtt': [string] })['Fn::GetAtt'][0];
      expect(where.sort()).toEqual(
        [
          `.Resources.${distId}.Properties.DistributionConfig.Origins[0].OriginCustomHeaders[0].HeaderValue['Fn::Join'][1][0]`,
          `.Resources.${replayId}.Properties.Environment.Variables.EDGE_ORIGIN_SECRET['Fn::Join'][1][0]`,
        ]
          .map((p) => p.replace("['Fn::Join']", '.Fn::Join'))
          .sort(),
      );
      // both joins name the same secret, and only it
      const reference = {
        'Fn::Join': ['', [RESOLVE, { Ref: secretId }, ':SecretString:::}}']],
      };
      const dist = resources[distId]!.Properties!.DistributionConfig as Json;
      const headers = (dist.Origins as Json[])[0]!.OriginCustomHeaders as Json[];
      expect(headers).toEqual([{ HeaderName: ORIGIN_SECRET_HEADER, HeaderValue: reference }]);
      const env = (resources[replayId]!.Properties!.Environment as { Variables: Json }).Variables;
      expect(env.EDGE_ORIGIN_SECRET).toEqual(reference);
      // the function URL is the distribution's only origin, and it points at the function holding the env
      expect(dist.Origins as Json[]).toHaveLength(1);
      expect(JSON.stringify((dist.Origins as Json[])[0]!.DomainName)).toContain(urlId);
      expect(url.Properties!.Qualifier).toBeUndefined(); // $LATEST: the env just read, not an older version
    });

    it(`held (${name}): no output, custom resource, role or other function names the secret`, () => {
      const template = t();
      const resources = template.Resources as Record<string, Resource>;
      const [secretId] = Object.entries(resources).find(([, r]) => r.Type === 'AWS::SecretsManager::Secret')!;
      expect(pathsOf(template.Outputs, RESOLVE)).toEqual([]);
      expect(JSON.stringify(template.Outputs ?? {})).not.toContain(secretId);
      // Where else the secret's logical id is used: only the two references (and nothing grants reading it).
      const users = Object.entries(resources)
        .filter(([id, r]) => id !== secretId && JSON.stringify(r).includes(`"${secretId}"`))
        .map(([id, r]) => `${r.Type} ${id}`);
      expect(users).toHaveLength(2);
      expect(users.some((u) => u.startsWith('AWS::CloudFront::Distribution'))).toBe(true);
      expect(users.some((u) => u.startsWith('AWS::Lambda::Function'))).toBe(true);
      for (const [id, r] of Object.entries(resources)) {
        const text = JSON.stringify(r);
        if (r.Type.startsWith('Custom::') || r.Type === 'AWS::CloudFormation::CustomResource') {
          expect(text, id).not.toContain(RESOLVE);
        }
        if (
          r.Type === 'AWS::IAM::Policy' ||
          r.Type === 'AWS::IAM::Role' ||
          r.Type === 'AWS::IAM::ManagedPolicy'
        ) {
          expect(text, id).not.toMatch(/secretsmanager:/i);
        }
        if (r.Type === 'AWS::Lambda::Function') {
          const vars = ((r.Properties?.Environment as { Variables?: Json } | undefined)?.Variables ??
            {}) as Json;
          for (const [k, v] of Object.entries(vars)) {
            if (k !== 'EDGE_ORIGIN_SECRET') expect(JSON.stringify(v), `${id} ${k}`).not.toContain(RESOLVE);
          }
        }
      }
    });
  }
});
