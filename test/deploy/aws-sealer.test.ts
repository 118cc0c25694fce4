/**
 * The KMS sealer of alert targets' secrets (lib/deploy/aws-sealer.ts, issue 28 item 6) against msw
 * answering KMS's JSON protocol (`X-Amz-Target: TrentService.Encrypt|Decrypt`): there is no KMS emulator.
 * The stand-in encrypts for real (AES-256-GCM, the encryption context as associated data) and answers
 * Decrypt under another context with KMS's InvalidCiphertextException, as KMS does.
 */
import { createCipheriv, createDecipheriv, randomBytes } from 'node:crypto';
import { HttpResponse, http } from 'msw';
import { setupServer } from 'msw/node';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import {
  ALERT_SECRET_PURPOSE,
  KmsSecretSealer,
  SealedSecretError,
  sealOnly,
} from '../../lib/deploy/aws-sealer.js';
import { KMS_URL, kmsTestClient } from '../support/kms.js';

const msw = setupServer();
beforeAll(() => msw.listen({ onUnhandledRequest: 'error' }));
afterEach(() => msw.resetHandlers());
afterAll(() => msw.close());

const KEY = 'arn:aws:kms:us-east-1:111122223333:key/2222bbbb-2222-3333-4444-555566667777';
const SECRET = 'whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw';

/** A symmetric KMS key in msw: every call recorded; `deny` answers AccessDeniedException to that operation. */
function fakeSymmetricKms(o: { deny?: 'Encrypt' | 'Decrypt' } = {}) {
  const key = randomBytes(32);
  const calls: { op: string; body: Record<string, unknown> }[] = [];
  const json = (body: Record<string, unknown>, status = 200) =>
    HttpResponse.json(body, { status, headers: { 'content-type': 'application/x-amz-json-1.1' } });
  const fail = (type: string, message: string) => json({ __type: type, message }, 400);
  /** the context as KMS binds it: its pairs in key order */
  const aad = (ctx: unknown) =>
    Buffer.from(JSON.stringify(Object.entries((ctx ?? {}) as Record<string, string>).sort()), 'utf8');
  msw.use(
    http.post(KMS_URL, async ({ request }) => {
      const op = (request.headers.get('x-amz-target') ?? '').replace('TrentService.', '');
      const body = (await request.json()) as Record<string, unknown>;
      calls.push({ op, body });
      if (op === o.deny) return fail('AccessDeniedException', `not authorized to perform: kms:${op}`);
      if (body.KeyId !== KEY) return fail('NotFoundException', `Key '${String(body.KeyId)}' does not exist`);
      if (op === 'Encrypt') {
        const iv = randomBytes(12);
        const c = createCipheriv('aes-256-gcm', key, iv);
        c.setAAD(aad(body.EncryptionContext));
        const ct = Buffer.concat([c.update(Buffer.from(String(body.Plaintext), 'base64')), c.final()]);
        const blob = Buffer.concat([iv, c.getAuthTag(), ct]).toString('base64');
        return json({ KeyId: KEY, CiphertextBlob: blob, EncryptionAlgorithm: 'SYMMETRIC_DEFAULT' });
      }
      if (op === 'Decrypt') {
        const blob = Buffer.from(String(body.CiphertextBlob), 'base64');
        try {
          const d = createDecipheriv('aes-256-gcm', key, blob.subarray(0, 12));
          d.setAAD(aad(body.EncryptionContext));
          d.setAuthTag(blob.subarray(12, 28));
          const plain = Buffer.concat([d.update(blob.subarray(28)), d.final()]).toString('base64');
          return json({ KeyId: KEY, Plaintext: plain, EncryptionAlgorithm: 'SYMMETRIC_DEFAULT' });
        } catch {
          return fail('InvalidCiphertextException', '');
        }
      }
      return fail('UnsupportedOperationException', `${op} is not faked`);
    }),
  );
  return { calls };
}

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
