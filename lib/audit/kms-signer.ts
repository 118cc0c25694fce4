/**
 * The AWS deployment's signer (issue 15.2, DESIGN §6b): a KMS asymmetric key of spec
 * ECC_NIST_EDWARDS25519 (usage SIGN_VERIFY) signs each digest's 83-byte `signingInput` with
 * `ED25519_SHA_512` over the RAW message, which is a plain Ed25519 signature (RFC 8032): the same
 * node:crypto check verifies it as a local key's. The private key never leaves KMS.
 *
 * Keys: the current key's id or ARN, and the keys it replaced (retired, still served so what they signed
 * stays verifiable), both from the deployment's configuration (lib/deploy/aws.ts reads them from the
 * environment). Public keys come from GetPublicKey (DER SPKI, turned into PEM) and DescribeKey (its
 * creation date), each asked once per process.
 */
import { createPublicKey } from 'node:crypto';
import { DescribeKeyCommand, GetPublicKeyCommand, KMSClient, SignCommand } from '@aws-sdk/client-kms';
import { keyIdOf } from './chain.js';
import { type PublicKeyInfo, SIGNATURE_ALGORITHM } from './schemas.js';
import type { DigestSigner, SigningKey } from './signer.js';

/** The KMS signing algorithm of an ECC_NIST_EDWARDS25519 key: Ed25519 (PureEdDSA) over the raw message. */
export const KMS_SIGNING_ALGORITHM = 'ED25519_SHA_512';

/** A key this deployment signed with before the current one. */
export interface RetiredKmsKey {
  /** its ARN (or id, or alias ARN) */
  key: string;
  /** when it stopped signing (ISO 8601) */
  retired_at: string;
}

export interface KmsSignerOptions {
  /** the current key's ARN (or id) */
  keyId: string;
  /** the keys it replaced, served as retired (default none) */
  retired?: RetiredKmsKey[] | undefined;
  /** a client of one's own (tests, another region); default a client with the timeouts below */
  client?: KMSClient | undefined;
  /** the region of the default client (default the SDK's own: AWS_REGION) */
  region?: string | undefined;
}

/** ms to open a connection to KMS, and for a whole request, before the client gives up. */
const CONNECT_TIMEOUT_MS = 2_000;
const REQUEST_TIMEOUT_MS = 5_000;

/**
 * A KMS client that gives up on an unreachable endpoint in seconds, not the SDK's minutes.
 * @param endpoint another endpoint than AWS's (tests)
 */
export function kmsClient(region?: string, endpoint?: string): KMSClient {
  return new KMSClient({
    ...(region ? { region } : {}),
    ...(endpoint ? { endpoint } : {}),
    maxAttempts: 2,
    requestHandler: { connectionTimeout: CONNECT_TIMEOUT_MS, requestTimeout: REQUEST_TIMEOUT_MS },
  });
}

/** Signs with a KMS Ed25519 key. */
export class KmsSigner implements DigestSigner {
  private readonly client: KMSClient;
  private readonly keyId: string;
  private readonly retired: RetiredKmsKey[];
  /** the public key of each KMS key, asked once (a key's public key never changes) */
  private readonly pems = new Map<string, Promise<string>>();

  constructor(o: KmsSignerOptions) {
    this.keyId = o.keyId;
    this.retired = o.retired ?? [];
    this.client = o.client ?? kmsClient(o.region);
  }

  /**
   * The current key; its id is the fingerprint of its public key (GetPublicKey, once).
   * @throws the KMS client's errors (AccessDeniedException, a timeout): the caller writes no digest
   */
  async current(): Promise<SigningKey> {
    const pem = await this.publicPem(this.keyId);
    return {
      key_id: keyIdOf(pem),
      sign: async (message) => {
        const out = await this.client.send(
          new SignCommand({
            KeyId: this.keyId,
            Message: message,
            MessageType: 'RAW',
            SigningAlgorithm: KMS_SIGNING_ALGORITHM,
          }),
        );
        if (out.Signature?.length !== 64) {
          throw new Error(`KMS answered no Ed25519 signature for key ${this.keyId}`);
        }
        return out.Signature!;
      },
    };
  }

  /**
   * The retired keys then the current one, each with its creation date (DescribeKey) and, for a retired
   * one, when it was retired (configuration).
   */
  async publicKeys(): Promise<PublicKeyInfo[]> {
    const all = [...this.retired, { key: this.keyId, retired_at: null }];
    return Promise.all(
      all.map(async ({ key, retired_at }) => {
        const [pem, described] = await Promise.all([
          this.publicPem(key),
          this.client.send(new DescribeKeyCommand({ KeyId: key })),
        ]);
        const created = described.KeyMetadata?.CreationDate ?? new Date(0);
        return {
          key_id: keyIdOf(pem),
          algorithm: SIGNATURE_ALGORITHM,
          public_key: pem,
          created_at: created.toISOString(),
          retired_at,
        } satisfies PublicKeyInfo;
      }),
    );
  }

  /** The SPKI PEM of a KMS key (GetPublicKey's DER), cached; a failed ask is not cached. */
  private publicPem(key: string): Promise<string> {
    let pem = this.pems.get(key);
    if (!pem) {
      pem = this.client.send(new GetPublicKeyCommand({ KeyId: key })).then((out) => {
        if (!out.PublicKey) throw new Error(`KMS answered no public key for ${key}`);
        return createPublicKey({ key: Buffer.from(out.PublicKey), format: 'der', type: 'spki' })
          .export({ type: 'spki', format: 'pem' })
          .toString();
      });
      pem.catch(() => this.pems.delete(key));
      this.pems.set(key, pem);
    }
    return pem;
  }
}
