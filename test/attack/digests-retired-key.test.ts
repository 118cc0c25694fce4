/**
 * Issue 15 attack: a retired key still signs "new" digests that `hansard verify --digests` accepts.
 * docs/audit.md says a rotation "retires the old one, which is kept and still verifies what it signed";
 * GET /v1/keys states each key's `retired_at`. The verifier (readTrustedKeys, verifyBundle) drops
 * `retired_at`, so whoever holds a retired private key (the reason to rotate is often that it leaked)
 * can sign a whole chain dated after the retirement, over bytes the server never accepted, and the
 * auditor's `verify --digests BUNDLE --public-key keys.json` says "verified", exit 0.
 *
 * Real server on loopback signing with a LocalKeyring, the real export, a real rotation, the CLI.
 */
import { createHash, createPrivateKey, sign } from 'node:crypto';
import { createWriteStream, mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pipeline } from 'node:stream/promises';
import { beforeAll, describe, expect, it } from 'vitest';
import { packBundle } from '../../lib/audit/bundle.js';
import { canonicalJson, digestHash, GENESIS_CHAIN, nextChain } from '../../lib/audit/chain.js';
import { type BundleManifest, DIGEST_FORMAT, KeysAnswer } from '../../lib/audit/schemas.js';
import { signDigest } from '../../lib/audit/signature.js';
import { runHansard } from '../support/cli.js';
import { fetchExport, untar, uploadGenerated, useSigningServer } from '../support/export-bundle.js';
import { request } from '../support/http.js';

const { srv, keyring, keyDir } = useSigningServer('hansard-attack-retired-');

let sid: string;

beforeAll(async () => {
  ({ sid } = await uploadGenerated(srv, 60, 1));
}, 60_000);

describe('issue 15 attack: retired key', () => {
  it('a digest signed by a key after GET /v1/keys says it was retired is not verified', async () => {
    const work = mkdtempSync(join(tmpdir(), 'hansard-attack-retired-work-'));
    // The real export, signed by the first key.
    const entries = await untar(await fetchExport(srv, sid, srv.tokens.reader));
    const manifest = JSON.parse(entries.get(`${sid}/manifest.json`)!.toString()) as BundleManifest;
    const oldKey = (await keyring.current()).key_id;

    // The operator rotates (say the old key leaked); the auditor pins GET /v1/keys afterwards.
    const { retired } = keyring.rotate();
    expect(retired.map((k) => k.key_id)).toEqual([oldKey]);
    const keys = KeysAnswer.parse((await request(srv, 'GET', '/v1/keys')).json);
    const retiredAt = keys.keys.find((k) => k.key_id === oldKey)!.retired_at!;
    expect(retiredAt).not.toBeNull();
    const keysFile = join(work, 'keys.json');
    writeFileSync(keysFile, JSON.stringify(keys));

    // Whoever holds the retired private key forges a history dated after the retirement.
    const priv = createPrivateKey(readFileSync(join(keyDir, 'keys', `${oldKey}.pem`), 'utf8'));
    const signer = { key_id: oldKey, sign: async (m: Uint8Array) => new Uint8Array(sign(null, m, priv)) };
    const seg = manifest.segments[0]!;
    const forged = Buffer.from(entries.get(`${sid}/${seg.path}`)!.toString().replace('"bot-0"', '"bot-9"'));
    expect(forged.length).toBe(seg.length);
    expect(forged.equals(entries.get(`${sid}/${seg.path}`)!)).toBe(false);
    const sha = createHash('sha256').update(forged).digest('hex');
    const at = new Date(Date.parse(retiredAt) + 60_000).toISOString();
    const digest = await signDigest(
      {
        format: DIGEST_FORMAT,
        tenant: manifest.tenant,
        sid,
        seq: 1,
        at,
        reason: 'export',
        next_due: null,
        previous: null,
        chunks: [{ w: seg.w, offset: 0, length: forged.length, sha256: sha }],
        writers: [
          {
            w: seg.w,
            length: forged.length,
            lines: forged.toString().split('\n').length - 1,
            chain: nextChain(GENESIS_CHAIN, 0, forged.length, sha),
            ended: true,
          },
        ],
        key_id: oldKey,
        algorithm: 'ed25519',
      },
      signer,
    );
    expect(digest.at > retiredAt).toBe(true);
    const bundle = join(work, 'forged.tar');
    await pipeline(
      packBundle({
        tenant: manifest.tenant,
        sid,
        exported_at: at,
        head: { seq: 1, sha256: digestHash(digest) },
        digests: [{ seq: 1, bytes: Buffer.from(canonicalJson(digest)) }],
        keys: keys.keys.filter((k) => k.key_id === oldKey),
        segments: [
          {
            w: seg.w,
            length: forged.length,
            read: async function* () {
              yield forged;
            },
          },
        ],
      }),
      createWriteStream(bundle),
    );

    const r = await runHansard(['verify', '--digests', bundle, '--public-key', keysFile, '--at', at], {
      cwd: work,
    });
    // On the code under attack: exit 0, "verified: 1 digest, 1 chunk, … bytes as of <after retired_at>".
    expect(r.out).not.toMatch(/^verified:/m);
    expect(r.code).toBe(1);
  }, 60_000);
});
