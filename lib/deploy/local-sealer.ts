/**
 * The local deployment's sealer of alert targets' signing secrets (issue 28 item 6: stored encrypted,
 * never in logs): AES-256-GCM (node:crypto) under a 32-byte key in `{dataDir}/alert-secrets.key`, made
 * on first use with mode 0600, the tenant bound to each sealed text as GCM's associated data (so one
 * tenant's sealed secret never opens as another's). The AWS deployment seals with KMS instead
 * (lib/deploy/aws-sealer.ts).
 *
 * Sealed text: `v1.{iv}.{tag}.{ciphertext}`, each part base64url (iv 12 bytes, tag 16 bytes).
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

/** The key file's name in the data directory. */
export const ALERT_KEY_FILE = 'alert-secrets.key';
/** The sealed text's version prefix. */
const VERSION = 'v1';
const KEY_BYTES = 32;
const IV_BYTES = 12;
const TAG_BYTES = 16;
/** The associated data of a tenant's secret: the purpose and the tenant, so no other AES-GCM use of the key matches. */
const aad = (tenant: string) => Buffer.from(`hansard.alert-target-secret.v1\n${tenant}`, 'utf8');

/** A sealed secret that does not open: not sealed for this tenant, by this key, or altered. */
export class SealedSecretError extends Error {
  override name = 'SealedSecretError';
}

/** AES-256-GCM under the data directory's key file (made on first use). */
export class LocalSecretSealer implements SecretSealer {
  private key: Buffer | null = null;

  /** @param dataDir the data directory (`hansard serve --data`); made if missing */
  constructor(private readonly dataDir: string) {}

  /** @returns `v1.{iv}.{tag}.{ciphertext}` (base64url) */
  async seal(tenant: string, plain: string): Promise<string> {
    const iv = randomBytes(IV_BYTES);
    const cipher = createCipheriv('aes-256-gcm', this.keyBytes(), iv, { authTagLength: TAG_BYTES });
    cipher.setAAD(aad(tenant));
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
    const parts = sealed.split('.');
    if (parts.length !== 4 || parts[0] !== VERSION) {
      throw new SealedSecretError('not a sealed alert secret (expected v1.{iv}.{tag}.{ciphertext})');
    }
    const [iv, tag, body] = parts.slice(1).map((p) => Buffer.from(p, 'base64url')) as [
      Buffer,
      Buffer,
      Buffer,
    ];
    if (iv.length !== IV_BYTES || tag.length !== TAG_BYTES) {
      throw new SealedSecretError('not a sealed alert secret (bad iv or tag length)');
    }
    const decipher = createDecipheriv('aes-256-gcm', this.keyBytes(), iv, { authTagLength: TAG_BYTES });
    decipher.setAAD(aad(tenant));
    decipher.setAuthTag(tag);
    try {
      return Buffer.concat([decipher.update(body), decipher.final()]).toString('utf8');
    } catch {
      throw new SealedSecretError(
        `the sealed alert secret does not open for tenant ${tenant} (another tenant's, another key's, or altered)`,
      );
    }
  }

  /** The key, read (or made) once per sealer. @throws SealedSecretError for a key file of another size */
  private keyBytes(): Buffer {
    if (this.key) return this.key;
    const path = join(this.dataDir, ALERT_KEY_FILE);
    let key = readKey(path);
    if (!key) {
      createKey(this.dataDir, path);
      key = readKey(path);
    }
    if (!key) throw new SealedSecretError(`the alert key file ${path} vanished after it was made`);
    this.key = key;
    return key;
  }
}

/** The key file's bytes, or null when it does not exist. */
function readKey(path: string): Buffer | null {
  let bytes: Buffer;
  try {
    bytes = readFileSync(path);
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'ENOENT') return null;
    throw err;
  }
  if (bytes.length !== KEY_BYTES) {
    throw new SealedSecretError(
      `the alert key file ${path} holds ${bytes.length} bytes, not ${KEY_BYTES}: it is left as it is (replacing it would make every stored alert secret unreadable)`,
    );
  }
  return bytes;
}

/** Makes the key file create-only (temp, fsync, link); a key made by someone else first is kept. */
function createKey(dir: string, path: string): void {
  mkdirSync(dir, { recursive: true });
  const temp = join(dir, `.${ALERT_KEY_FILE}.${randomUUID()}.tmp`);
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
