/**
 * The local signing keys (lib/audit/local-keyring.ts): made on first open in `{data}/keys/` with a 0600
 * private key, signing what verifySignature accepts, rotated without losing the old key.
 */
import { mkdtempSync, readdirSync, readFileSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { keyIdOf } from '../../lib/audit/chain.js';
import { KeyringError, LocalKeyring } from '../../lib/audit/local-keyring.js';
import { PublicKeyInfo } from '../../lib/audit/schemas.js';
import { verifySignature } from '../../lib/audit/signature.js';

const dirs: string[] = [];
function dataDir(): string {
  const d = mkdtempSync(join(tmpdir(), 'hansard-keyring-'));
  dirs.push(d);
  return d;
}
afterEach(() => {
  for (const d of dirs.splice(0)) rmSync(d, { recursive: true, force: true });
});

describe('LocalKeyring', () => {
  it('makes one Ed25519 key on first open, private key 0600 in a 0700 directory, and keeps it', async () => {
    const data = dataDir();
    const first = LocalKeyring.open(data);
    expect(first.created).not.toBeNull();
    const info = first.created!;
    expect(PublicKeyInfo.parse(info)).toEqual(info);
    expect(info.key_id).toBe(keyIdOf(info.public_key));
    expect(readdirSync(join(data, 'keys')).sort()).toEqual([`${info.key_id}.json`, `${info.key_id}.pem`]);
    expect(statSync(join(data, 'keys', `${info.key_id}.pem`)).mode & 0o777).toBe(0o600);
    expect(statSync(join(data, 'keys')).mode & 0o777).toBe(0o700);
    expect(readFileSync(join(data, 'keys', `${info.key_id}.pem`), 'utf8')).toContain('BEGIN PRIVATE KEY');

    const again = LocalKeyring.open(data);
    expect(again.created).toBeNull();
    expect(await again.keyring.publicKeys()).toEqual([info]);
  });

  it('signs 64-byte Ed25519 signatures that verifySignature accepts with the served public key', async () => {
    const { keyring } = LocalKeyring.open(dataDir());
    const key = await keyring.current();
    const message = Buffer.from('hansard.digest.v1\nabc\n');
    const sig = Buffer.from(await key.sign(message)).toString('base64');
    const [pub] = await keyring.publicKeys();
    expect(pub!.key_id).toBe(key.key_id);
    expect(verifySignature(pub!.public_key, message, sig)).toBe(true);
    expect(verifySignature(pub!.public_key, Buffer.from('other'), sig)).toBe(false);
  });

  it('rotate: a new current key signs, the old one is retired and still served', async () => {
    let t = Date.parse('2026-12-01T00:00:00.000Z');
    const now = () => new Date(t);
    const data = dataDir();
    const { keyring, created } = LocalKeyring.open(data, now);
    t += 60_000;
    const { current, retired } = keyring.rotate();
    expect(retired.map((k) => k.key_id)).toEqual([created!.key_id]);
    expect(retired[0]!.retired_at).toBe('2026-12-01T00:01:00.000Z');
    expect((await keyring.current()).key_id).toBe(current.key_id);
    const keys = await new LocalKeyring(data).publicKeys();
    expect(keys.map((k) => [k.key_id, k.retired_at])).toEqual([
      [created!.key_id, '2026-12-01T00:01:00.000Z'],
      [current.key_id, null],
    ]);
    // the retired key's private file is kept: nothing is deleted
    expect(readdirSync(join(data, 'keys'))).toContain(`${created!.key_id}.pem`);
  });

  it('refuses a key file whose key_id is not its key, naming the file', async () => {
    const data = dataDir();
    const { created } = LocalKeyring.open(data);
    const other = LocalKeyring.open(dataDir()).created!;
    const file = join(data, 'keys', `${created!.key_id}.json`);
    const { writeFileSync } = await import('node:fs');
    writeFileSync(file, JSON.stringify({ ...created, public_key: other.public_key }));
    expect(() => new LocalKeyring(data).list()).toThrow(KeyringError);
    expect(() => new LocalKeyring(data).list()).toThrow(file);
  });

  it('current() on a directory with no key says how to make one', async () => {
    await expect(new LocalKeyring(dataDir()).current()).rejects.toThrow(/hansard keys rotate --data/);
  });
});
