/**
 * What the auditor trusts (issue 15.3): a --public-key that yields no key, a private key, or a key
 * labelled with another key's id is refused (exit 2) and never falls back to the bundle's own keys; an
 * empty trust list given to verifyBundle trusts nothing. Real bundles, the CLI in process.
 */
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { beforeAll, describe, expect, it } from 'vitest';
import { verifyBundle } from '../../lib/audit/verify-bundle.js';
import { buildSession, makeKey, partsOf, type TestSession, writeBundle } from '../support/audit-bundle.js';
import { runHansard } from '../support/cli.js';
import { tmpDirs } from '../support/tmp.js';

const tmp = tmpDirs('hansard-verify-trust-');
let dir: string;
let bundle: string;
let s: TestSession;

beforeAll(async () => {
  dir = tmp.make();
  s = await buildSession();
  bundle = await writeBundle(partsOf(s), join(dir, 's.tar'));
});

const verify = (args: string[]) => runHansard(['verify', '--digests', bundle, ...args], { cwd: dir });
const file = (name: string, text: string) => {
  writeFileSync(join(dir, name), text);
  return name;
};

describe('verify --digests --public-key: a key file given is the trust, or a refusal', () => {
  it('refuses {"keys":[]} (exit 2) rather than verifying with the bundle\'s own keys', async () => {
    const r = await verify(['--public-key', file('empty.json', '{"keys":[]}\n')]);
    expect(r.code, r.out + r.err).toBe(2);
    expect(r.err).toContain('no public key in empty.json');
    expect(r.out).not.toContain('verified');
  });

  it('refuses a private key PEM, or one inside a key record, without echoing it', async () => {
    const priv = s.key.privateKey.export({ type: 'pkcs8', format: 'pem' }).toString();
    const body = priv.split('\n')[1]!;
    const pem = await verify(['--public-key', file('priv.pem', priv)]);
    expect(pem.code, pem.out + pem.err).toBe(2);
    expect(pem.err).toContain('priv.pem holds a private key: pass the public key (GET /v1/keys)');
    expect(pem.err + pem.out).not.toContain(body);
    const rec = { ...s.key.info, public_key: priv };
    const json = await verify(['--public-key', file('priv.json', JSON.stringify({ keys: [rec] }))]);
    expect(json.code, json.out + json.err).toBe(2);
    expect(json.err).toContain('priv.json holds a private key');
    expect(json.err + json.out).not.toContain(body);
  });

  it("refuses a keys.json entry whose key_id is not its key's fingerprint", async () => {
    const other = makeKey();
    const rec = { ...s.key.info, key_id: other.info.key_id };
    const r = await verify(['--public-key', file('mislabel.json', JSON.stringify({ keys: [rec] }))]);
    expect(r.code, r.out + r.err).toBe(2);
    expect(r.err).toContain(
      `mislabel.json labels a key ${other.info.key_id}, but that key's fingerprint is ${s.key.info.key_id}`,
    );
  });
});

describe('verifyBundle trustedKeys', () => {
  it('an empty list trusts nothing: every digest is digest_unknown_key, no keys_from_bundle', async () => {
    const r = await verifyBundle(bundle, { trustedKeys: [] });
    expect(r.ok).toBe(false);
    const codes = new Set(r.findings.map((f) => f.code));
    expect(codes).toEqual(new Set(['digest_unknown_key']));
    expect(r.findings[0]!.message).toContain('no key was given to trust');
    expect(r.as_of).toBeNull();
  });

  it('names the key ids given when a digest is signed by another', async () => {
    const other = makeKey();
    const r = await verifyBundle(bundle, { trustedKeys: [other.info] });
    expect(r.findings[0]!.code).toBe('digest_unknown_key');
    expect(r.findings[0]!.message).toContain(`not among the keys given (${other.info.key_id})`);
  });

  it('throws on a private key, without quoting it', async () => {
    const priv = s.key.privateKey.export({ type: 'pkcs8', format: 'pem' }).toString();
    await expect(verifyBundle(bundle, { trustedKeys: [priv] })).rejects.toThrow(
      /^trusted key 1 is a private key/,
    );
  });
});
