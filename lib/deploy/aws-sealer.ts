/**
 * The AWS deployment's sealer of secrets stored in the state (never in logs): alert targets' signing
 * secrets (issue 28 item 6, `ALERT_KMS_KEY_ID`, infra/alerts.ts) and sign-in's, the tenants' OIDC client
 * secrets and the board's cookie keys (issue 29, `SIGN_IN_KMS_KEY_ID`, infra/sign-in.ts). KMS Encrypt and
 * Decrypt with a symmetric key, the tenant and the purpose bound as the encryption context
 * `{tenant, purpose}` (`purpose`: `alert-target-secret` by default, `sign-in-secret`). KMS refuses to
 * decrypt a ciphertext under another context (InvalidCiphertextException), so one tenant's sealed secret
 * never opens as another's, nor one purpose's as another's; and the roles' grants are conditioned on
 * `kms:EncryptionContext:purpose`, so each key serves its purpose alone. The local deployment seals with
 * AES-256-GCM instead (lib/deploy/local-sealer.ts).
 *
 * Sealed text: `kms1.{base64 CiphertextBlob}` (the blob names the key: Decrypt is sent with the key id
 * too, so a blob of another key is refused rather than decrypted under it).
 */
import { DecryptCommand, EncryptCommand, type KMSClient } from '@aws-sdk/client-kms';
import type { SecretSealer } from '../service/alerts/deps.js';

/** The encryption context's `purpose` (and the IAM condition's value, infra/alerts.ts). */
export const ALERT_SECRET_PURPOSE = 'alert-target-secret';
/** Sign-in's encryption context `purpose` (issue 29; the IAM condition's value, infra/sign-in.ts). */
export const SIGN_IN_SECRET_PURPOSE = 'sign-in-secret';
/** The secrets' names in errors, by purpose ("not a KMS-sealed alert secret"). */
const NAMES: Record<string, string> = {
  [ALERT_SECRET_PURPOSE]: 'alert secret',
  [SIGN_IN_SECRET_PURPOSE]: 'sign-in secret',
};
/** The sealed text's version prefix. */
const VERSION = 'kms1';

export interface KmsSecretSealerOptions {
  /** the client of the key's region (lib/audit/kms-signer.ts `kmsClient`: short timeouts) */
  client: KMSClient;
  /** the symmetric key's id or ARN (`ALERT_KMS_KEY_ID`, `SIGN_IN_KMS_KEY_ID`) */
  keyId: string;
  /**
   * the encryption context's `purpose`, which the roles' grants and the key policy require (default
   * `ALERT_SECRET_PURPOSE`; sign-in's `SIGN_IN_SECRET_PURPOSE`)
   */
  purpose?: string | undefined;
}

/** A sealed secret that does not open: not `kms1.…`, or KMS refused it (another tenant's, another key's). */
export class SealedSecretError extends Error {
  override name = 'SealedSecretError';
}

/** The encryption context of a tenant's secret of `purpose` (default the alerts'). */
export function secretContext(
  tenant: string,
  purpose: string = ALERT_SECRET_PURPOSE,
): Record<string, string> {
  return { tenant, purpose };
}

/** Seals with KMS Encrypt, opens with KMS Decrypt, the tenant and the purpose in the encryption context. */
export class KmsSecretSealer implements SecretSealer {
  private readonly purpose: string;
  /** the secrets' name in errors */
  private readonly name: string;

  constructor(private readonly o: KmsSecretSealerOptions) {
    this.purpose = o.purpose ?? ALERT_SECRET_PURPOSE;
    this.name = NAMES[this.purpose] ?? `${this.purpose} secret`;
  }

  /**
   * @returns `kms1.{base64 ciphertext}`
   * @throws the KMS client's errors (AccessDeniedException, a timeout): the target is not stored
   */
  async seal(tenant: string, plain: string): Promise<string> {
    const out = await this.o.client.send(
      new EncryptCommand({
        KeyId: this.o.keyId,
        Plaintext: Buffer.from(plain, 'utf8'),
        EncryptionContext: secretContext(tenant, this.purpose),
      }),
    );
    if (!out.CiphertextBlob) throw new Error('KMS Encrypt answered no CiphertextBlob');
    return `${VERSION}.${Buffer.from(out.CiphertextBlob).toString('base64')}`;
  }

  /**
   * @throws SealedSecretError when `sealed` is not `kms1.…`, or KMS answers InvalidCiphertextException or
   *   IncorrectKeyException (sealed for another tenant, under another key, or altered); the KMS client's
   *   other errors (AccessDenied, a timeout) as they are, so that a delivery is retried later
   */
  async open(tenant: string, sealed: string): Promise<string> {
    const dot = sealed.indexOf('.');
    if (dot === -1 || sealed.slice(0, dot) !== VERSION) {
      throw new SealedSecretError(`not a KMS-sealed ${this.name} (expected kms1.{ciphertext})`);
    }
    const blob = Buffer.from(sealed.slice(dot + 1), 'base64');
    try {
      const out = await this.o.client.send(
        new DecryptCommand({
          KeyId: this.o.keyId,
          CiphertextBlob: blob,
          EncryptionContext: secretContext(tenant, this.purpose),
        }),
      );
      if (!out.Plaintext) throw new Error('KMS Decrypt answered no Plaintext');
      return Buffer.from(out.Plaintext).toString('utf8');
    } catch (err) {
      const name = (err as { name?: unknown }).name;
      if (name === 'InvalidCiphertextException' || name === 'IncorrectKeyException') {
        throw new SealedSecretError(
          `KMS does not open the sealed ${this.name} for tenant ${tenant} (${name}: another tenant's, another key's, or altered)`,
        );
      }
      throw err;
    }
  }
}

/**
 * `sealer` that seals but refuses to open: the API function's (its role has `kms:Encrypt` alone; the
 * delivery function opens), so that a route that starts opening secrets fails in every test of the API
 * function rather than by IAM on AWS alone (as `onlyMethods` does for the state store).
 */
export function sealOnly(sealer: SecretSealer): SecretSealer {
  return {
    seal: (tenant, plain) => sealer.seal(tenant, plain),
    open: async () => {
      throw new Error(
        'the API function opened an alert secret, which its IAM role does not allow (kms:Encrypt only): the delivery function opens them (infra/alerts.ts)',
      );
    },
  };
}
