/**
 * The KMS sealer of alert targets' secrets (lib/deploy/aws-sealer.ts, issue 28 item 6) against msw
 * answering KMS's JSON protocol (`X-Amz-Target: TrentService.Encrypt|Decrypt`): there is no KMS emulator.
 * The stand-in (test/support/kms-symmetric.ts) encrypts for real (AES-256-GCM, the encryption context as
 * associated data) and answers Decrypt under another context with InvalidCiphertextException, as KMS does.
 */
import { setupServer } from 'msw/node';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import {
  ALERT_SECRET_PURPOSE,
  KmsSecretSealer,
  SealedSecretError,
  sealOnly,
} from '../../lib/deploy/aws-sealer.js';
import { kmsTestClient } from '../support/kms.js';
import { fakeSymmetricKms as fakeKms } from '../support/kms-symmetric.js';

const msw = setupServer();
beforeAll(() => msw.listen({ onUnhandledRequest: 'error' }));
afterEach(() => msw.resetHandlers());
afterAll(() => msw.close());

const KEY = 'arn:aws:kms:us-east-1:111122223333:key/2222bbbb-2222-3333-4444-555566667777';
const SECRET = 'whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw';

const fakeSymmetricKms = (o: { deny?: 'Encrypt' | 'Decrypt' } = {}) => fakeKms(msw, KEY, o);

describe('KmsSecretSealer', () => {
  it('seals with Encrypt under {tenant, purpose} and opens with Decrypt under the same context', async () => {
    const kms = fakeSymmetricKms();
    const sealer = new KmsSecretSealer({ client: kmsTestClient(), keyId: KEY });
    const sealed = await sealer.seal('acme', SECRET);
    expect(sealed).toMatch(/^kms1\.[A-Za-z0-9+/]+=*$/);
    expect(sealed).not.toContain('MfKQ9r8');
    expect(await sealer.open('acme', sealed)).toBe(SECRET);
    expect(kms.calls.map((c) => c.op)).toEqual(['Encrypt', 'Decrypt']);
    for (const c of kms.calls) {
      expect(c.body.KeyId).toBe(KEY);
      expect(c.body.EncryptionContext).toEqual({ tenant: 'acme', purpose: ALERT_SECRET_PURPOSE });
    }
    expect(Buffer.from(String(kms.calls[0]!.body.Plaintext), 'base64').toString()).toBe(SECRET);
    expect(kms.calls[1]!.body.CiphertextBlob).toBe(sealed.slice('kms1.'.length));
  });

  it("does not open another tenant's sealed secret (KMS: InvalidCiphertextException)", async () => {
    const kms = fakeSymmetricKms();
    const sealer = new KmsSecretSealer({ client: kmsTestClient(), keyId: KEY });
    const sealed = await sealer.seal('acme', SECRET);
    const err = await sealer.open('globex', sealed).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(SealedSecretError);
    expect(String(err)).toMatch(/InvalidCiphertextException/);
    expect(String(err)).not.toContain('MfKQ9r8');
    expect(kms.calls[1]!.body.EncryptionContext).toEqual({ tenant: 'globex', purpose: ALERT_SECRET_PURPOSE });
  });

  it('refuses an altered or foreign sealed text', async () => {
    fakeSymmetricKms();
    const sealer = new KmsSecretSealer({ client: kmsTestClient(), keyId: KEY });
    const sealed = await sealer.seal('acme', SECRET);
    const blob = Buffer.from(sealed.slice(5), 'base64');
    blob[blob.length - 1]! ^= 1;
    await expect(sealer.open('acme', `kms1.${blob.toString('base64')}`)).rejects.toThrow(SealedSecretError);
    // a local sealer's text is no KMS one: refused before any call
    await expect(sealer.open('acme', 'v1.aaaa.bbbb.cccc')).rejects.toThrow(/not a KMS-sealed/);
  });

  it("passes KMS's other errors on as they are (a delivery is tried again later)", async () => {
    fakeSymmetricKms({ deny: 'Decrypt' });
    const sealer = new KmsSecretSealer({ client: kmsTestClient(), keyId: KEY });
    const sealed = await sealer.seal('acme', SECRET);
    const err = await sealer.open('acme', sealed).catch((e: unknown) => e);
    expect(err).not.toBeInstanceOf(SealedSecretError);
    expect((err as Error).name).toBe('AccessDeniedException');
  });

  it('sealOnly seals through KMS and refuses to open without calling it (the API role has kms:Encrypt alone)', async () => {
    const kms = fakeSymmetricKms();
    const sealer = sealOnly(new KmsSecretSealer({ client: kmsTestClient(), keyId: KEY }));
    const sealed = await sealer.seal('acme', SECRET);
    await expect(sealer.open('acme', sealed)).rejects.toThrow(/kms:Encrypt only/);
    expect(kms.calls.map((c) => c.op)).toEqual(['Encrypt']);
  });
});
