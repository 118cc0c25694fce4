/** signDigest and verifySignature (lib/audit/signature.ts): the round trip, and malformed input answers false. */
import { generateKeyPairSync } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { signingInput } from '../../lib/audit/chain.js';
import { signDigest, verifySignature } from '../../lib/audit/signature.js';
import { buildSession, makeKey } from '../support/audit-bundle.js';

describe('signDigest / verifySignature', () => {
  it('signs with the key given (its key_id set) and verifies with its public key only', async () => {
    const s = await buildSession({ writers: 1, chunksPerWriter: 1, digestCount: 1 });
    const other = makeKey();
    const { signature: _s, ...record } = s.digests[0]!;
    const signed = await signDigest(record, other.signing);
    expect(signed.key_id).toBe(other.info.key_id);
    expect(Buffer.from(signed.signature, 'base64')).toHaveLength(64);
    expect(verifySignature(other.info.public_key, signingInput(signed), signed.signature)).toBe(true);
    expect(verifySignature(s.key.info.public_key, signingInput(signed), signed.signature)).toBe(false);
    expect(
      verifySignature(other.info.public_key, signingInput({ ...signed, seq: 2 }), signed.signature),
    ).toBe(false);
  });

  it('never throws on malformed input: false', async () => {
    const k = makeKey();
    const msg = Buffer.from('hansard.digest.v1\nabc\n');
    const good = Buffer.from(await k.signing.sign(msg)).toString('base64');
    const rsa = generateKeyPairSync('rsa', { modulusLength: 1024 }).publicKey.export({
      type: 'spki',
      format: 'pem',
    });
    for (const [pem, sig] of [
      ['not a pem', good],
      [rsa.toString(), good],
      [k.info.public_key, 'not base64!'],
      [k.info.public_key, good.slice(0, 40)],
      [k.info.public_key, ''],
      [k.info.public_key, undefined as unknown as string],
    ] as Array<[string, string]>) {
      expect(verifySignature(pem, msg, sig)).toBe(false);
    }
    expect(verifySignature(k.info.public_key, msg, good)).toBe(true);
  });

  it('refuses a signer answering something that is not a 64-byte signature', async () => {
    const s = await buildSession({ writers: 1, chunksPerWriter: 1, digestCount: 1 });
    const bad = { key_id: s.key.info.key_id, sign: async () => new Uint8Array(63) };
    await expect(signDigest(s.digests[0]!, bad)).rejects.toThrow(
      'returned 63 bytes, not a 64-byte Ed25519 signature',
    );
  });
});
