/**
 * Sign-in's sealer on AWS (lib/deploy/aws-sealer.ts `purpose`, lib/deploy/aws.ts `awsSignInService`, issue
 * 29) against the msw stand-in of a symmetric KMS key (test/support/kms-symmetric.ts: real AES-256-GCM,
 * the encryption context as associated data): it seals and opens (the API opens at every sign-in) under
 * `{tenant, purpose: 'sign-in-secret'}`, never opens an alert secret nor is opened as one, and the
 * Lambda environment names `SIGN_IN_KMS_KEY_ID` when it is malformed.
 */
import { setupServer } from 'msw/node';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { ConfigError, parseConfig } from '../../functions/config.js';
import { awsSignInService } from '../../lib/deploy/aws.js';
import {
  ALERT_SECRET_PURPOSE,
  KmsSecretSealer,
  SealedSecretError,
  SIGN_IN_SECRET_PURPOSE,
} from '../../lib/deploy/aws-sealer.js';
import { DEFAULT_SIGN_IN_CONFIG } from '../../lib/service/sign-in/deps.js';
import { kmsTestClient } from '../support/kms.js';
import { fakeSymmetricKms } from '../support/kms-symmetric.js';

const msw = setupServer();
beforeAll(() => msw.listen({ onUnhandledRequest: 'error' }));
afterEach(() => msw.resetHandlers());
afterAll(() => msw.close());

const KEY = 'arn:aws:kms:us-east-1:111122223333:key/3333cccc-2222-3333-4444-555566667777';
const CLIENT_SECRET = 'oidc-client-secret-Zq8RkX2mVw4t';

describe('awsSignInService', () => {
  it('seals and opens with KMS under {tenant, purpose: sign-in-secret}, with the default settings and the origin', async () => {
    const kms = fakeSymmetricKms(msw, KEY);
    const signIn = awsSignInService({
      kms: kmsTestClient(),
      keyId: KEY,
      publicOrigin: 'https://hansard.example.com',
    });
    // private issuers refused on AWS (no SSRF into the VPC, the metadata service or the sandbox)
    expect(signIn.config).toEqual({
      ...DEFAULT_SIGN_IN_CONFIG,
      publicOrigin: 'https://hansard.example.com',
      allowPrivateIssuers: false,
    });
    expect(
      awsSignInService({ kms: kmsTestClient(), keyId: KEY, allowPrivateIssuers: true }).config
        .allowPrivateIssuers,
    ).toBe(true);
    const sealed = await signIn.sealer.seal('acme', CLIENT_SECRET);
    expect(sealed).toMatch(/^kms1\./);
    expect(sealed).not.toContain('Zq8RkX2');
    expect(await signIn.sealer.open('acme', sealed)).toBe(CLIENT_SECRET);
    expect(kms.calls.map((c) => c.op)).toEqual(['Encrypt', 'Decrypt']);
    for (const c of kms.calls) {
      expect(c.body.KeyId).toBe(KEY);
      expect(c.body.EncryptionContext).toEqual({ tenant: 'acme', purpose: SIGN_IN_SECRET_PURPOSE });
    }
    await expect(signIn.sealer.open('globex', sealed)).rejects.toThrow(SealedSecretError);
    expect(awsSignInService({ kms: kmsTestClient(), keyId: KEY }).config.publicOrigin).toBeNull();
  });

  it('neither opens an alert secret under the same key nor is opened as one: the purpose is in the context', async () => {
    fakeSymmetricKms(msw, KEY);
    const alerts = new KmsSecretSealer({ client: kmsTestClient(), keyId: KEY });
    const signIn = new KmsSecretSealer({
      client: kmsTestClient(),
      keyId: KEY,
      purpose: SIGN_IN_SECRET_PURPOSE,
    });
    const alertSealed = await alerts.seal('acme', 'whsec_x');
    await expect(signIn.open('acme', alertSealed)).rejects.toThrow(
      /sealed sign-in secret for tenant acme \(InvalidCiphertextException/,
    );
    await expect(alerts.open('acme', await signIn.seal('acme', CLIENT_SECRET))).rejects.toThrow(
      /sealed alert secret for tenant acme/,
    );
    await expect(signIn.open('acme', 'v1.a.b.c')).rejects.toThrow(/not a KMS-sealed sign-in secret/);
    expect(ALERT_SECRET_PURPOSE).toBe('alert-target-secret');
  });
});

describe('SIGN_IN_KMS_KEY_ID', () => {
  const base = { BUCKET_NAME: 'hansard-segments', TABLE_NAME: 'hansard-state', AWS_REGION: 'us-east-1' };

  it('is optional, taken as a key ARN, and named (never echoed) when malformed', () => {
    expect(parseConfig(base).SIGN_IN_KMS_KEY_ID).toBeUndefined();
    expect(parseConfig({ ...base, SIGN_IN_KMS_KEY_ID: '' }).SIGN_IN_KMS_KEY_ID).toBeUndefined();
    expect(parseConfig({ ...base, SIGN_IN_KMS_KEY_ID: KEY }).SIGN_IN_KMS_KEY_ID).toBe(KEY);
    let err: unknown;
    try {
      parseConfig({ ...base, SIGN_IN_KMS_KEY_ID: 'not-a-key-secretish' });
    } catch (e) {
      err = e;
    }
    expect(err).toBeInstanceOf(ConfigError);
    expect((err as ConfigError).keys).toEqual(['SIGN_IN_KMS_KEY_ID']);
    expect(String(err)).toMatch(/SIGN_IN_KMS_KEY_ID \(expected a KMS key id/);
    expect(String(err)).not.toContain('secretish');
  });
});
