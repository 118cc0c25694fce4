/**
 * Signing and checking one digest (issue 15.2, DESIGN §6b). The service signs with `signDigest` over
 * whichever `SigningKey` it holds (local Ed25519 or KMS); the offline verifier checks with
 * `verifySignature`. Both go through `signingInput`, so what is signed and what is checked are the
 * same 83 bytes.
 */
import { createPublicKey, verify } from 'node:crypto';
import { signingInput } from './chain.js';
import type { DigestRecord, SignedDigest } from './schemas.js';
import type { SigningKey } from './signer.js';

/**
 * Whether `signatureBase64` is a valid Ed25519 signature of `message` by `publicKeyPem` (SPKI PEM).
 * Never throws: a key that does not parse, a signature that is not base64 or not 64 bytes, or a key of
 * another type all answer false.
 */
export function verifySignature(publicKeyPem: string, message: Uint8Array, signatureBase64: string): boolean {
  try {
    if (typeof signatureBase64 !== 'string' || !/^[A-Za-z0-9+/]+={0,2}$/.test(signatureBase64)) {
      return false;
    }
    const sig = Buffer.from(signatureBase64, 'base64');
    if (sig.length !== 64) return false;
    // another key type answers false (or throws, caught): a 64-byte signature is Ed25519's alone
    return verify(null, message, createPublicKey(publicKeyPem), sig);
  } catch {
    return false;
  }
}

/**
 * The signed digest of `record`: `record` with `key_id` set to the signing key's and `signature` the
 * base64 of `key.sign(signingInput(record))`. A digest file is `canonicalJson` of the answer.
 * @throws Error when the key cannot sign (as `SigningKey.sign` throws), or signs something that is not
 *   a 64-byte Ed25519 signature
 */
export async function signDigest(
  record: DigestRecord,
  key: Pick<SigningKey, 'key_id' | 'sign'>,
): Promise<SignedDigest> {
  const { signature: _drop, ...rest } = record as DigestRecord & { signature?: string };
  const unsigned: DigestRecord = { ...rest, key_id: key.key_id };
  const raw = await key.sign(signingInput(unsigned));
  if (raw.length !== 64) {
    throw new Error(
      `signing key ${key.key_id} returned ${raw.length} bytes, not a 64-byte Ed25519 signature`,
    );
  }
  return { ...unsigned, signature: Buffer.from(raw).toString('base64') };
}
