/**
 * The local deployment's signing keys (issue 15.2, DESIGN §6b): Ed25519 keys made with node:crypto and
 * kept in `{data}/keys/`, one pair of files per key:
 *
 * - `{key_id}.pem`: the private key (PKCS#8 PEM), mode 0600, in a directory of mode 0700;
 * - `{key_id}.json`: its `PublicKeyInfo` (id, algorithm, SPKI PEM, created_at, retired_at).
 *
 * The current key is the newest one not retired. `hansard serve` creates the first key on its first start
 * (holding the data directory's lock); `rotate()` (`hansard keys rotate`) makes a new current key and
 * marks the old one retired. No key is ever deleted: a retired key is still served at `GET /v1/keys`, so
 * what it signed stays verifiable. The files are read again at each use, so a rotation by the CLI is
 * taken up by a running server at its next digest.
 */
import { createPrivateKey, generateKeyPairSync, type KeyObject, sign } from 'node:crypto';
import {
  chmodSync,
  existsSync,
  mkdirSync,
  readdirSync,
  readFileSync,
  renameSync,
  writeFileSync,
} from 'node:fs';
import { join } from 'node:path';
import { keyIdOf } from './chain.js';
import { type PublicKeyInfo, PublicKeyInfo as PublicKeyInfoSchema, SIGNATURE_ALGORITHM } from './schemas.js';
import type { DigestSigner, SigningKey } from './signer.js';

/** The keys' directory inside a data directory. */
export const KEYS_DIR = 'keys';

/** The keys directory cannot be read or holds a key file that is not one (the message names the file). */
export class KeyringError extends Error {
  override name = 'KeyringError';
}

/** Ed25519 keys in `{data}/keys/`. */
export class LocalKeyring implements DigestSigner {
  readonly dir: string;
  private readonly now: () => Date;
  private cached: { key_id: string; key: KeyObject } | null = null;

  /**
   * @param dataDir the data directory (`hansard serve --data`); the keys live in `{dataDir}/keys/`
   * @param now the clock of created_at / retired_at
   */
  constructor(dataDir: string, now: () => Date = () => new Date()) {
    this.dir = join(dataDir, KEYS_DIR);
    this.now = now;
  }

  /**
   * Opens the keyring, making its first key when it has none (the caller holds the data directory's lock,
   * as `hansard serve` does, so two first starts cannot make two).
   * @returns the keyring and whether a key was created
   * @throws KeyringError when a key file is unreadable or not a key; the fs errors of creating one
   */
  static open(dataDir: string, now?: () => Date): { keyring: LocalKeyring; created: PublicKeyInfo | null } {
    const keyring = new LocalKeyring(dataDir, now);
    const created = keyring.list().length === 0 ? keyring.create() : null;
    return { keyring, created };
  }

  /** Every key, oldest first (by created_at, then id). [] when the directory does not exist. */
  list(): PublicKeyInfo[] {
    if (!existsSync(this.dir)) return [];
    const keys: PublicKeyInfo[] = [];
    for (const name of readdirSync(this.dir)) {
      if (!/^k_[0-9a-f]{24}\.json$/.test(name)) continue;
      keys.push(this.readInfo(join(this.dir, name)));
    }
    return keys.sort((a, b) =>
      a.created_at < b.created_at ? -1 : a.created_at > b.created_at ? 1 : a.key_id < b.key_id ? -1 : 1,
    );
  }

  /** @see DigestSigner.publicKeys */
  async publicKeys(): Promise<PublicKeyInfo[]> {
    return this.list();
  }

  /**
   * The newest key not retired.
   * @throws KeyringError when there is none (the keyring was never opened with `open`, or every key is
   *   retired) or its private key file is missing
   */
  async current(): Promise<SigningKey> {
    const info = this.list()
      .filter((k) => k.retired_at === null)
      .at(-1);
    if (!info) {
      throw new KeyringError(
        `no current signing key in ${this.dir}: start hansard serve on this data directory (it makes one) or run hansard keys rotate --data`,
      );
    }
    if (this.cached?.key_id !== info.key_id)
      this.cached = { key_id: info.key_id, key: this.readPrivate(info.key_id) };
    const key = this.cached.key;
    return {
      key_id: info.key_id,
      sign: async (message) => new Uint8Array(sign(null, message, key)),
    };
  }

  /**
   * Makes a new current key and retires every other key not yet retired (a new key first, so a crash in
   * between leaves two current keys, of which the newer signs, never none).
   * @returns the new key and the keys it retired
   */
  rotate(): { current: PublicKeyInfo; retired: PublicKeyInfo[] } {
    const current = this.create();
    const at = this.now().toISOString();
    const retired: PublicKeyInfo[] = [];
    for (const k of this.list()) {
      if (k.key_id === current.key_id || k.retired_at !== null) continue;
      const done = { ...k, retired_at: at };
      writeAtomic(join(this.dir, `${k.key_id}.json`), `${JSON.stringify(done, null, 2)}\n`, 0o644);
      retired.push(done);
    }
    return { current, retired };
  }

  /** A new key pair: the private key file first (0600), then its public info. */
  private create(): PublicKeyInfo {
    mkdirSync(this.dir, { recursive: true, mode: 0o700 });
    chmodSync(this.dir, 0o700);
    const { publicKey, privateKey } = generateKeyPairSync('ed25519');
    const pub = publicKey.export({ type: 'spki', format: 'pem' }).toString();
    const info: PublicKeyInfo = {
      key_id: keyIdOf(pub),
      algorithm: SIGNATURE_ALGORITHM,
      public_key: pub,
      created_at: this.now().toISOString(),
      retired_at: null,
    };
    const pem = privateKey.export({ type: 'pkcs8', format: 'pem' }).toString();
    writeAtomic(join(this.dir, `${info.key_id}.pem`), pem, 0o600);
    writeAtomic(join(this.dir, `${info.key_id}.json`), `${JSON.stringify(info, null, 2)}\n`, 0o644);
    return info;
  }

  private readInfo(file: string): PublicKeyInfo {
    let parsed: unknown;
    try {
      parsed = JSON.parse(readFileSync(file, 'utf8'));
    } catch (err) {
      throw new KeyringError(`the key file ${file} cannot be read: ${(err as Error).message}`);
    }
    const info = PublicKeyInfoSchema.safeParse(parsed);
    if (!info.success || keyIdOf(info.data.public_key) !== info.data.key_id) {
      throw new KeyringError(
        `the key file ${file} is not a hansard public key (or its key_id is not its key's)`,
      );
    }
    return info.data;
  }

  private readPrivate(keyId: string): KeyObject {
    const file = join(this.dir, `${keyId}.pem`);
    try {
      return createPrivateKey(readFileSync(file, 'utf8'));
    } catch (err) {
      throw new KeyringError(`the private key ${file} cannot be read: ${(err as Error).message}`);
    }
  }
}

/** Writes `text` to `file` through a temporary file and a rename, so a crash leaves the old or the new. */
function writeAtomic(file: string, text: string, mode: number): void {
  const tmp = `${file}.${process.pid}.tmp`;
  writeFileSync(tmp, text, { mode, flag: 'w', flush: true });
  chmodSync(tmp, mode);
  renameSync(tmp, file);
}
