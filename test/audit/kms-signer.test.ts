/**
 * The KMS signer (lib/audit/kms-signer.ts) against msw answering KMS's JSON protocol (AWS JSON 1.1, the
 * `X-Amz-Target: TrentService.*` operations) with real Ed25519 signatures from a node key, so what it
 * signs is checked by the same verifySignature a local key's signature is. There is no KMS emulator.
 */
import { HttpResponse, http } from 'msw';
import { setupServer } from 'msw/node';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { keyIdOf } from '../../lib/audit/chain.js';
import { KMS_SIGNING_ALGORITHM, KmsSigner } from '../../lib/audit/kms-signer.js';
import { PublicKeyInfo } from '../../lib/audit/schemas.js';
import { verifySignature } from '../../lib/audit/signature.js';
import { fakeKms, kmsTestClient } from '../support/kms.js';

const msw = setupServer();
beforeAll(() => msw.listen({ onUnhandledRequest: 'error' }));
afterEach(() => msw.resetHandlers());
afterAll(() => msw.close());

const ARN = 'arn:aws:kms:us-east-1:111122223333:key/1111aaaa-2222-3333-4444-555566667777';
const OLD = 'arn:aws:kms:us-east-1:111122223333:key/0000aaaa-2222-3333-4444-555566667777';

describe('KmsSigner', () => {
  it('signs RAW with ED25519_SHA_512; the signature verifies with the public key GetPublicKey gave', async () => {
    const kms = fakeKms(msw, [ARN]);
    const signer = new KmsSigner({ keyId: ARN, client: kmsTestClient() });
    const key = await signer.current();
    const pem = kms.keys.get(ARN)!.publicKey.export({ type: 'spki', format: 'pem' }).toString();
    expect(key.key_id).toBe(keyIdOf(pem));
    const message = Buffer.from(`hansard.digest.v1\n${'a'.repeat(64)}\n`, 'ascii');
    const sig = Buffer.from(await key.sign(message)).toString('base64');
    expect(verifySignature(pem, message, sig)).toBe(true);
    const signs = kms.calls.filter((c) => c.op === 'Sign');
    expect(signs).toHaveLength(1);
    expect(signs[0]!.body).toMatchObject({
      KeyId: ARN,
      MessageType: 'RAW',
      SigningAlgorithm: KMS_SIGNING_ALGORITHM,
      Message: message.toString('base64'),
    });
  });

  it('publicKeys: retired then current, PEM from DER, created_at from DescribeKey; GetPublicKey asked once per key', async () => {
    const kms = fakeKms(msw, [OLD, ARN]);
    const signer = new KmsSigner({
      keyId: ARN,
      retired: [{ key: OLD, retired_at: '2026-11-01T00:00:00.000Z' }],
      client: kmsTestClient(),
    });
    await signer.current();
    const keys = await signer.publicKeys();
    await signer.publicKeys();
    expect(keys.map((k) => PublicKeyInfo.parse(k))).toEqual(keys);
    expect(keys.map((k) => k.retired_at)).toEqual(['2026-11-01T00:00:00.000Z', null]);
    expect(keys[0]!.created_at).toBe('2026-10-01T12:00:00.000Z');
    expect(keys[1]!.key_id).toBe((await signer.current()).key_id);
    expect(kms.calls.filter((c) => c.op === 'GetPublicKey').map((c) => c.body.KeyId)).toEqual([ARN, OLD]);
  });

  it('AccessDenied on Sign rejects with the KMS error', async () => {
    fakeKms(msw, [ARN], { denySign: true });
    const key = await new KmsSigner({ keyId: ARN, client: kmsTestClient() }).current();
    await expect(key.sign(Buffer.from('x'))).rejects.toMatchObject({ name: 'AccessDeniedException' });
  });

  it('an unreachable KMS fails within the client timeout, and a later call asks again', async () => {
    msw.use(http.post('https://kms.us-east-1.amazonaws.com/', () => HttpResponse.error()));
    const signer = new KmsSigner({ keyId: ARN, client: kmsTestClient() });
    const started = Date.now();
    await expect(signer.current()).rejects.toThrow();
    expect(Date.now() - started).toBeLessThan(10_000);
    msw.resetHandlers();
    fakeKms(msw, [ARN]);
    await expect(signer.current()).resolves.toMatchObject({ key_id: expect.stringMatching(/^k_/) });
  });
});
