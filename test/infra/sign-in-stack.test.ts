/**
 * Team sign-in in HansardStack (infra/sign-in.ts, issue 29), from the synthesized template: the key of
 * sign-in's secrets, the API role's use of it (Encrypt and Decrypt, only under the sign-in purpose, as the
 * sealer's calls need), the API's environment (the key, the board's origin) and the redirect URI output;
 * and the alerts' key and grants exactly as issue 28 left them (the API still may not Decrypt there).
 */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { App } from 'aws-cdk-lib';
import { Template } from 'aws-cdk-lib/assertions';
import { beforeAll, describe, expect, it } from 'vitest';
import { ALERT_SECRET_PURPOSE, SIGN_IN_SECRET_PURPOSE } from '../../functions/access.js';
import { ALERT_KEY_ADMIN_ACTIONS, ALERT_PURPOSE_CONDITION } from '../../infra/alerts.js';
import {
  SIGN_IN_KEY_ADMIN_ACTIONS,
  SIGN_IN_KEY_USE_ACTIONS,
  SIGN_IN_PURPOSE_CONDITION,
} from '../../infra/sign-in.js';
import { HansardStack, type HansardStackProps } from '../../infra/stack.js';
import { arnText, list, sdkCommandsIn } from '../support/template-text.js';
import { ROOT } from './lambda-bundle.js';

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

const envOf = (t: Template, fnId: string) =>
  ((t.findResources('AWS::Lambda::Function')[fnId]!.Properties as Json).Environment as { Variables: Json })
    .Variables;

describe('sign-in in HansardStack', () => {
  let t: Template;
  let api: string;
  let delivery: string;
  let key: string;
  let alertKey: string;
  const signInPurpose = { StringEquals: { [SIGN_IN_PURPOSE_CONDITION]: SIGN_IN_SECRET_PURPOSE } };
  const alertPurpose = { StringEquals: { [ALERT_PURPOSE_CONDITION]: ALERT_SECRET_PURPOSE } };
  beforeAll(() => {
    t = synth();
    api = idOf(t, 'AWS::Lambda::Function', 'Description', 'hansard API');
    delivery = idOf(t, 'AWS::Lambda::Function', 'Description', 'hansard alerts delivery');
    key = idOf(t, 'AWS::KMS::Key', 'Description', "hansard: seals the tenants' OIDC client secrets");
    alertKey = idOf(t, 'AWS::KMS::Key', 'Description', "hansard: seals alert targets' signing secrets");
  });

  it('lets the API role Encrypt and Decrypt the sign-in key only under the sign-in purpose, and Decrypt nothing else', () => {
    expect(SIGN_IN_PURPOSE_CONDITION).toBe('kms:EncryptionContext:purpose');
    expect(SIGN_IN_SECRET_PURPOSE).toBe('sign-in-secret');
    expect(SIGN_IN_SECRET_PURPOSE).not.toBe(ALERT_SECRET_PURPOSE);
    const statements = statementsOf(t, api);
    const onKey = statements.filter((s) => list(s.Resource).some((r) => arnText(r) === `<${key}>`));
    expect(onKey).toEqual([
      {
        Sid: 'SignInSecretsSealAndOpen',
        Effect: 'Allow',
        Action: ['kms:Decrypt', 'kms:Encrypt'],
        Resource: { 'Fn::GetAtt': [key, 'Arn'] },
        Condition: signInPurpose,
      },
    ]);
    // every Decrypt the API holds is that one: on the sign-in key, under its purpose (none on the alerts')
    const decrypts = statements.filter((s) => list(s.Action).includes('kms:Decrypt'));
    expect(decrypts).toEqual(onKey);
    // what the sealer sends is what is granted, no more
    expect(
      sdkCommandsIn(readFileSync(join(ROOT, 'lib/deploy/aws-sealer.ts'), 'utf8')).map((c) => `kms:${c}`),
    ).toEqual([...SIGN_IN_KEY_USE_ACTIONS].sort());
    // no other function's role names the key
    for (const other of Object.keys(t.findResources('AWS::Lambda::Function')).filter((f) => f !== api)) {
      const named = statementsOf(t, other).filter((s) =>
        list(s.Resource).some((r) => arnText(r) === `<${key}>`),
      );
      expect(named, other).toEqual([]);
    }
  });

  it('makes a retained symmetric key with rotation, whose policy delegates use under the sign-in purpose alone', () => {
    const res = t.findResources('AWS::KMS::Key')[key]!;
    expect(res).toMatchObject({ DeletionPolicy: 'Retain', UpdateReplacePolicy: 'Retain' });
    const props = res.Properties as Json;
    expect(props.EnableKeyRotation).toBe(true);
    expect(props.KeySpec ?? 'SYMMETRIC_DEFAULT').toBe('SYMMETRIC_DEFAULT');
    expect(props.KeyUsage ?? 'ENCRYPT_DECRYPT').toBe('ENCRYPT_DECRYPT');
    const statements = (props.KeyPolicy as { Statement: Statement[] }).Statement;
    expect(statements).toHaveLength(2);
    const [admin, use] = statements as [Statement, Statement];
    expect(list(admin.Action).sort()).toEqual([...SIGN_IN_KEY_ADMIN_ACTIONS].sort());
    expect(admin.Condition).toBeUndefined();
    expect(SIGN_IN_KEY_ADMIN_ACTIONS).not.toContain('kms:Decrypt');
    expect(SIGN_IN_KEY_ADMIN_ACTIONS).not.toContain('kms:Encrypt');
    expect(list(use.Action).sort()).toEqual(['kms:Decrypt', 'kms:Encrypt']);
    expect(use.Condition).toEqual(signInPurpose);
    for (const s of statements) {
      expect(s.Effect).toBe('Allow');
      expect(list(s.Action).some((a) => a.endsWith('*'))).toBe(false);
      expect(JSON.stringify(s.Principal)).toContain(':root');
    }
  });

  it("leaves the alerts' key and grants as they were: the API Encrypts, the delivery function Decrypts, under the alerts purpose", () => {
    const onAlertKey = (fnId: string) =>
      statementsOf(t, fnId).filter((s) => list(s.Resource).some((r) => arnText(r) === `<${alertKey}>`));
    const resource = { 'Fn::GetAtt': [alertKey, 'Arn'] };
    expect(onAlertKey(api)).toEqual([
      {
        Sid: 'AlertSecretsSeal',
        Effect: 'Allow',
        Action: 'kms:Encrypt',
        Resource: resource,
        Condition: alertPurpose,
      },
    ]);
    expect(onAlertKey(delivery)).toEqual([
      {
        Sid: 'AlertSecretsOpen',
        Effect: 'Allow',
        Action: 'kms:Decrypt',
        Resource: resource,
        Condition: alertPurpose,
      },
    ]);
    // the delivery function holds nothing of sign-in
    expect(JSON.stringify(statementsOf(t, delivery))).not.toContain(key);
    expect(envOf(t, delivery).SIGN_IN_KMS_KEY_ID).toBeUndefined();
    const policy = (t.findResources('AWS::KMS::Key')[alertKey]!.Properties as Json).KeyPolicy as {
      Statement: Statement[];
    };
    expect(policy.Statement.map((s) => ({ ...s, Action: list(s.Action).sort() }))).toEqual([
      {
        Sid: 'AccountAdministers',
        Effect: 'Allow',
        Principal: expect.anything(),
        Action: [...ALERT_KEY_ADMIN_ACTIONS].sort(),
        Resource: '*',
      },
      {
        Sid: 'AccountDelegatesAlertSecretsToIam',
        Effect: 'Allow',
        Principal: expect.anything(),
        Action: ['kms:Decrypt', 'kms:Encrypt'],
        Resource: '*',
        Condition: alertPurpose,
      },
    ]);
  });

  it("names the key and the board's origin in the API's environment, and outputs the redirect URI to register", () => {
    const env = envOf(t, api);
    expect(env.SIGN_IN_KMS_KEY_ID).toEqual({ 'Fn::GetAtt': [key, 'Arn'] });
    // the API's URL by default, the same origin as the alert links'
    expect(JSON.stringify(env.BOARD_ORIGIN)).toContain('execute-api');
    expect(env.BOARD_ORIGIN).toEqual(envOf(t, delivery).BOARD_ORIGIN);
    const uri = t.findOutputs('SignInRedirectUri').SignInRedirectUri!.Value as Json;
    expect(JSON.stringify(uri)).toContain('execute-api');
    // stage.url ends with `/`: one slash before the path
    expect(JSON.stringify(uri)).toContain('"/login/oidc/callback"');

    const custom = synth({ boardOrigin: 'https://hansard.example.com/' });
    const customApi = idOf(custom, 'AWS::Lambda::Function', 'Description', 'hansard API');
    const customDelivery = idOf(custom, 'AWS::Lambda::Function', 'Description', 'hansard alerts delivery');
    expect(envOf(custom, customApi).BOARD_ORIGIN).toBe('https://hansard.example.com');
    expect(envOf(custom, customDelivery).BOARD_ORIGIN).toBe('https://hansard.example.com');
    expect(custom.findOutputs('SignInRedirectUri').SignInRedirectUri!.Value).toBe(
      'https://hansard.example.com/login/oidc/callback',
    );
  });
});
