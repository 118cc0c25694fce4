/**
 * The local deployment's sealer of secrets stored in the state (issue 28 item 6: alert targets' signing
 * secrets; issue 29: the tenants' OIDC client secrets and the board's cookie keys), never in logs:
 * AES-256-GCM (node:crypto) under a 32-byte key file of the data directory, made on first use with mode
 * 0600, the purpose and the tenant bound to each sealed text as GCM's associated data (so one tenant's
 * sealed secret never opens as another's, nor one purpose's as another's). Each purpose has its own key
 * file (`ALERT_SEALING`: `alert-secrets.key`; `SIGN_IN_SEALING`: `sign-in-secrets.key`), so losing or
 * replacing one leaves the other's secrets readable. The AWS deployment seals with KMS instead
 * (lib/deploy/aws-sealer.ts).
 *
 * Sealed text: `v1.{iv}.{tag}.{ciphertext}`, each part base64url (iv 12 bytes, tag 16 bytes). The alerts'
 * sealed text, key file and associated data are those of issue 28, unchanged.
 *
 * The key file is made atomically: 32 random bytes are written and fsynced to a temp file of the same
 * folder, which is then `link`ed to the name. `link` fails with EEXIST when the name exists, so of two
 * processes (or two sealers) making it at once exactly one wins and the other reads the winner's key:
 * both seal under one key. A key file that is not 32 bytes is refused, never replaced (replacing it
 * would make every stored secret unreadable).
 */
import { createCipheriv, createDecipheriv, randomBytes, randomUUID } from 'node:crypto';
import {
  closeSync,
  fsyncSync,
  linkSync,
  mkdirSync,
  openSync,
  readFileSync,
  unlinkSync,
  writeSync,
} from 'node:fs';
import { join } from 'node:path';
import type { SecretSealer } from '../service/alerts/deps.js';

/** The alerts' key file's name in the data directory. */
export const ALERT_KEY_FILE = 'alert-secrets.key';
/** Sign-in's key file's name in the data directory (issue 29). */
export const SIGN_IN_KEY_FILE = 'sign-in-secrets.key';
/** The sealed text's version prefix. */
const VERSION = 'v1';
const KEY_BYTES = 32;
const IV_BYTES = 12;
const TAG_BYTES = 16;

/** What a sealer seals for: its key file and the purpose in its associated data. */
export interface LocalSealing {
  /** the key file's name in the data directory */
  keyFile: string;
  /** the associated data's first line: no other purpose's sealed text opens under it */
  purpose: string;
  /** the secrets' name in error messages (`alert`: "sealed alert secret", "the alert key file") */
  label: string;
}

/** Alert targets' signing secrets (issue 28): the key file and associated data they have always had. */
export const ALERT_SEALING: LocalSealing = {
  keyFile: ALERT_KEY_FILE,
  purpose: 'hansard.alert-target-secret.v1',
  label: 'alert',
};

/** The tenants' OIDC client secrets and the board's cookie keys (issue 29): a key file of their own. */
export const SIGN_IN_SEALING: LocalSealing = {
  keyFile: SIGN_IN_KEY_FILE,
  purpose: 'hansard.sign-in-secret.v1',
  label: 'sign-in',
};

/** The associated data of a tenant's secret: the purpose and the tenant, so no other AES-GCM use of the key matches. */
const aad = (purpose: string, tenant: string) => Buffer.from(`${purpose}\n${tenant}`, 'utf8');

/** A sealed secret that does not open: not sealed for this tenant, by this key, or altered. */
export class SealedSecretError extends Error {
  override name = 'SealedSecretError';
}

/** AES-256-GCM under the data directory's key file of one purpose (made on first use). */
export class LocalSecretSealer implements SecretSealer {
  private key: Buffer | null = null;

  /**
   * @param dataDir the data directory (`hansard serve --data`); made if missing
   * @param sealing what it seals for (default the alerts', `ALERT_SEALING`)
   */
  constructor(
    private readonly dataDir: string,
    private readonly sealing: LocalSealing = ALERT_SEALING,
  ) {}

  /** @returns `v1.{iv}.{tag}.{ciphertext}` (base64url) */
  async seal(tenant: string, plain: string): Promise<string> {
    const iv = randomBytes(IV_BYTES);
    const cipher = createCipheriv('aes-256-gcm', this.keyBytes(), iv, { authTagLength: TAG_BYTES });
    cipher.setAAD(aad(this.sealing.purpose, tenant));
    const body = Buffer.concat([cipher.update(plain, 'utf8'), cipher.final()]);
    return [VERSION, iv, cipher.getAuthTag(), body]
      .map((p) => (typeof p === 'string' ? p : p.toString('base64url')))
      .join('.');
  }

  /**
   * @throws SealedSecretError when `sealed` is not a v1 sealed text, or was sealed for another tenant or
   *   under another key, or was altered (the message names none of its bytes)
   */
  async open(tenant: string, sealed: string): Promise<string> {
    const { label } = this.sealing;
    const parts = sealed.split('.');
    if (parts.length !== 4 || parts[0] !== VERSION) {
      throw new SealedSecretError(`not a sealed ${label} secret (expected v1.{iv}.{tag}.{ciphertext})`);
    }
    const [iv, tag, body] = parts.slice(1).map((p) => Buffer.from(p, 'base64url')) as [
      Buffer,
      Buffer,
      Buffer,
    ];
    if (iv.length !== IV_BYTES || tag.length !== TAG_BYTES) {
      throw new SealedSecretError(`not a sealed ${label} secret (bad iv or tag length)`);
    }
    const decipher = createDecipheriv('aes-256-gcm', this.keyBytes(), iv, { authTagLength: TAG_BYTES });
    decipher.setAAD(aad(this.sealing.purpose, tenant));
    decipher.setAuthTag(tag);
    try {
      return Buffer.concat([decipher.update(body), decipher.final()]).toString('utf8');
    } catch {
      throw new SealedSecretError(
        `the sealed ${label} secret does not open for tenant ${tenant} (another tenant's, another key's, or altered)`,
      );
    }
  }

  /** The key, read (or made) once per sealer. @throws SealedSecretError for a key file of another size */
  private keyBytes(): Buffer {
    if (this.key) return this.key;
    const { keyFile, label } = this.sealing;
    const path = join(this.dataDir, keyFile);
    let key = readKey(path, label);
    if (!key) {
      createKey(this.dataDir, keyFile);
      key = readKey(path, label);
    }
    if (!key) throw new SealedSecretError(`the ${label} key file ${path} vanished after it was made`);
    this.key = key;
    return key;
  }
}

/** The key file's bytes, or null when it does not exist. `label` names its secrets in the error. */
function readKey(path: string, label: string): Buffer | null {
  let bytes: Buffer;
  try {
    bytes = readFileSync(path);
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'ENOENT') return null;
    throw err;
  }
  if (bytes.length !== KEY_BYTES) {
    throw new SealedSecretError(
      `the ${label} key file ${path} holds ${bytes.length} bytes, not ${KEY_BYTES}: it is left as it is (replacing it would make every stored ${label} secret unreadable)`,
    );
  }
  return bytes;
}

/** Makes the key file `dir/name` create-only (temp, fsync, link); a key made by someone else first is kept. */
function createKey(dir: string, name: string): void {
  mkdirSync(dir, { recursive: true });
  const path = join(dir, name);
  const temp = join(dir, `.${name}.${randomUUID()}.tmp`);
  const fd = openSync(temp, 'wx', 0o600);
  try {
    writeSync(fd, randomBytes(KEY_BYTES));
    fsyncSync(fd);
  } finally {
    closeSync(fd);
  }
  try {
    linkSync(temp, path);
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code !== 'EEXIST') throw err;
  } finally {
    unlinkSync(temp);
  }
  const dirFd = openSync(dir, 'r');
  try {
    fsyncSync(dirFd);
  } finally {
    closeSync(dirFd);
  }
}
