/**
 * The signing side of the audit digests (issue 15.2): a deployment signs with one current key and keeps
 * every key it ever signed with verifiable (`publicKeys`, served at `GET /v1/keys`). Locally an Ed25519
 * key in the data directory (local-keyring.ts); on AWS a KMS key of spec ECC_NIST_EDWARDS25519
 * (kms-signer.ts). Both produce plain Ed25519 signatures that node:crypto verifies (signature.ts).
 */
import type { PublicKeyInfo } from './schemas.js';

/** The key that signs now. */
export interface SigningKey {
  key_id: string;
  /**
   * The Ed25519 signature of `message` (the 83-byte `signingInput`), raw 64 bytes.
   * @throws Error when the key cannot sign (KMS unreachable or access denied): no digest is written
   */
  sign(message: Uint8Array): Promise<Uint8Array>;
}

export interface DigestSigner {
  /** The current signing key (created on first use when the deployment has none). */
  current(): Promise<SigningKey>;
  /** Every key this deployment signed with, current and retired, oldest first. */
  publicKeys(): Promise<PublicKeyInfo[]>;
  /**
   * false: this signer only lists the public keys and `current` refuses (a function that must not sign,
   * e.g. the AWS replay function: its export bundles the newest stored digest). Absent: it signs.
   */
  readonly signs?: false;
}

/**
 * `signer`'s public keys alone: `current` refuses, so a function holding it writes no digest (the AWS
 * replay function: it bundles stored digests and reads the keys with kms:GetPublicKey/DescribeKey only).
 */
export function publicKeysOnly(signer: DigestSigner): DigestSigner {
  return {
    signs: false,
    current: () =>
      Promise.reject(
        new Error('this function signs no digest (its role has no kms:Sign): the API function does'),
      ),
    publicKeys: () => signer.publicKeys(),
  };
}
