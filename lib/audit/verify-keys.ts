/**
 * Which keys the offline verifier trusts (issue 15.3, DESIGN §6b), moved out of verify-bundle.ts: the
 * bundle's own `keys/` (each checked against its id and the manifest) and the auditor's keys. An
 * explicit trust list is used as given, an empty one included: it means "trust nothing", never "trust
 * the bundle" (the bundle's keys are what whoever altered it would replace).
 */
import { readdir, readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { keyIdOf } from './chain.js';
import { type AuditFindingCode, type BundleManifest, PublicKeyInfo } from './schemas.js';
import type { TrustedKey } from './verify-digest-file.js';

type Add = (code: AuditFindingCode, f: { message: string }) => void;

/** A PEM holding a private key (PKCS#8, SEC1, PKCS#1, OpenSSH, encrypted): never a key to trust. */
export const PRIVATE_PEM = /-----BEGIN [A-Z0-9 ]*PRIVATE KEY-----/;

/**
 * The bundle's keys by id: those in `{root}/keys/` whose file name and `key_id` are their key's
 * fingerprint. Reports `key_mismatch` for any other key file and `manifest_mismatch` where the manifest's
 * key list and the files disagree.
 */
export async function bundleKeysOf(
  root: string,
  manifest: BundleManifest | null,
  add: Add,
): Promise<Map<string, TrustedKey>> {
  const keys = new Map<string, TrustedKey>();
  const keyFiles = await listFiles(join(root, 'keys'));
  for (const name of keyFiles) {
    const info = PublicKeyInfo.safeParse(await readJson(join(root, 'keys', name)));
    const id = info.success ? safeKeyId(info.data.public_key) : null;
    if (!info.success || id === null) {
      add('key_mismatch', {
        message: `keys/${name} is not a public key record (PublicKeyInfo with an Ed25519 SPKI PEM)`,
      });
    } else if (id !== info.data.key_id || name !== `${id}.json`) {
      add('key_mismatch', {
        message: `keys/${name} names key ${info.data.key_id}, but its key's fingerprint is ${id}`,
      });
    } else keys.set(id, { pem: info.data.public_key, retired_at: info.data.retired_at });
  }
  if (manifest) {
    const listed = new Set(manifest.keys.map((k) => `${k.key_id}.json`));
    for (const k of manifest.keys) {
      if (k.path !== `keys/${k.key_id}.json` || !keyFiles.includes(`${k.key_id}.json`)) {
        add('manifest_mismatch', {
          message: `the manifest lists key ${k.key_id} at ${k.path}, which the bundle does not hold`,
        });
      }
    }
    for (const name of keyFiles)
      if (!listed.has(name)) add('manifest_mismatch', { message: `keys/${name} is not in the manifest` });
  }
  return keys;
}

/**
 * The auditor's keys by id (their fingerprint). A key given twice keeps its retirement.
 * @param given PublicKeyInfo records or SPKI PEMs; `[]` is an empty trust list
 * @throws TypeError when one is a private key (never accepted: a private key must not travel to
 *   auditors) or not a public key; the message never quotes the key
 */
export function trustedKeysOf(given: Array<PublicKeyInfo | string>): Map<string, TrustedKey> {
  const trusted = new Map<string, TrustedKey>();
  for (const [i, k] of given.entries()) {
    const key =
      typeof k === 'string' ? { pem: k, retired_at: null } : { pem: k.public_key, retired_at: k.retired_at };
    // createPublicKey derives a public key from a private one: without this a private key is "trusted"
    if (PRIVATE_PEM.test(key.pem))
      throw new TypeError(`trusted key ${i + 1} is a private key: pass the public key (GET /v1/keys)`);
    const id = keyIdOf(key.pem);
    if (key.retired_at !== null || !trusted.has(id)) trusted.set(id, key);
  }
  return trusted;
}

/**
 * The keys the digests are checked with: the auditor's when `given` is defined (even empty), else the
 * bundle's with the `keys_from_bundle` warning.
 * @throws TypeError as trustedKeysOf
 */
export function keysToCheckWith(
  given: Array<PublicKeyInfo | string> | undefined,
  bundleKeys: Map<string, TrustedKey>,
  add: Add,
): Map<string, TrustedKey> {
  if (given !== undefined) return trustedKeysOf(given);
  add('keys_from_bundle', {
    message:
      bundleKeys.size === 0
        ? "no trusted key given and the bundle holds no key: no signature could be checked; pass --public-key with the deployment's key (GET /v1/keys)"
        : `no trusted key given: the signatures were checked with the bundle's own ${bundleKeys.size === 1 ? 'key' : `${bundleKeys.size} keys`}, which whoever altered the bundle could have replaced; pass --public-key with the deployment's key (GET /v1/keys)`,
  });
  return bundleKeys;
}

/** Where a digest's key is not trusted: the keys that were (their ids, at most 5 named). */
export function notTrustedBecause(
  given: Array<PublicKeyInfo | string> | undefined,
  trusted: Map<string, TrustedKey>,
): string {
  if (given === undefined) return 'not in the bundle';
  if (trusted.size === 0) return 'not trusted: no key was given to trust';
  const ids = [...trusted.keys()];
  const named = ids.slice(0, 5).join(', ') + (ids.length > 5 ? ` and ${ids.length - 5} more` : '');
  return `not among the keys given (${named})`;
}

/** A directory's regular files, sorted; none when it does not exist. */
export async function listFiles(dir: string): Promise<string[]> {
  try {
    return (await readdir(dir, { withFileTypes: true }))
      .filter((e) => e.isFile())
      .map((e) => e.name)
      .sort();
  } catch {
    return [];
  }
}

async function readJson(path: string): Promise<unknown> {
  try {
    return JSON.parse(await readFile(path, 'utf8'));
  } catch {
    return undefined;
  }
}

function safeKeyId(pem: string): string | null {
  try {
    return keyIdOf(pem);
  } catch {
    return null;
  }
}
