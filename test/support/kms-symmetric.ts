/**
 * A symmetric KMS key in msw (there is no KMS emulator), for the sealer of alert targets' secrets
 * (lib/deploy/aws-sealer.ts, issue 28): Encrypt and Decrypt of the AWS JSON 1.1 protocol
 * (`X-Amz-Target: TrentService.<Op>`), encrypting for real with AES-256-GCM and the encryption context as
 * associated data, so that Decrypt under another context answers InvalidCiphertextException, as KMS does.
 */
import { createCipheriv, createDecipheriv, randomBytes } from 'node:crypto';
import { HttpResponse, http } from 'msw';
import type { setupServer } from 'msw/node';
import { KMS_URL } from './kms.js';

export interface FakeSymmetricKms {
  /** every request, in order: the operation and its JSON body */
  calls: { op: string; body: Record<string, unknown> }[];
}

/**
 * Installs the handler on `msw` for key `keyId` (a fresh 256-bit key).
 * @param o.deny that operation answers 400 AccessDeniedException (the role lacks it)
 */
export function fakeSymmetricKms(
  msw: Pick<ReturnType<typeof setupServer>, 'use'>,
  keyId: string,
  o: { deny?: 'Encrypt' | 'Decrypt' } = {},
): FakeSymmetricKms {
  const key = randomBytes(32);
  const kms: FakeSymmetricKms = { calls: [] };
  const json = (body: Record<string, unknown>, status = 200) =>
    HttpResponse.json(body, { status, headers: { 'content-type': 'application/x-amz-json-1.1' } });
  const fail = (type: string, message: string) => json({ __type: type, message }, 400);
  /** the context as bound to the ciphertext: its pairs in key order */
  const aad = (ctx: unknown) =>
    Buffer.from(JSON.stringify(Object.entries((ctx ?? {}) as Record<string, string>).sort()), 'utf8');
  msw.use(
    http.post(KMS_URL, async ({ request }) => {
      const op = (request.headers.get('x-amz-target') ?? '').replace('TrentService.', '');
      const body = (await request.json()) as Record<string, unknown>;
      kms.calls.push({ op, body });
      if (op === o.deny) return fail('AccessDeniedException', `not authorized to perform: kms:${op}`);
      if (body.KeyId !== keyId)
        return fail('NotFoundException', `Key '${String(body.KeyId)}' does not exist`);
      if (op === 'Encrypt') {
        const iv = randomBytes(12);
        const c = createCipheriv('aes-256-gcm', key, iv);
        c.setAAD(aad(body.EncryptionContext));
        const ct = Buffer.concat([c.update(Buffer.from(String(body.Plaintext), 'base64')), c.final()]);
        const blob = Buffer.concat([iv, c.getAuthTag(), ct]).toString('base64');
        return json({ KeyId: keyId, CiphertextBlob: blob, EncryptionAlgorithm: 'SYMMETRIC_DEFAULT' });
      }
      if (op === 'Decrypt') {
        const blob = Buffer.from(String(body.CiphertextBlob), 'base64');
        try {
          const d = createDecipheriv('aes-256-gcm', key, blob.subarray(0, 12));
          d.setAAD(aad(body.EncryptionContext));
          d.setAuthTag(blob.subarray(12, 28));
          const plain = Buffer.concat([d.update(blob.subarray(28)), d.final()]).toString('base64');
          return json({ KeyId: keyId, Plaintext: plain, EncryptionAlgorithm: 'SYMMETRIC_DEFAULT' });
        } catch {
          return fail('InvalidCiphertextException', '');
        }
      }
      return fail('UnsupportedOperationException', `${op} is not faked`);
    }),
  );
  return kms;
}
