/**
 * Digests signed by a KMS key (lib/audit/kms-signer.ts) through msw answering KMS's JSON protocol with
 * real Ed25519 signatures (test/support/kms.ts): the digest verifies with verifySignature and the key
 * publicKeys() serves, as a local key's does. When KMS refuses (AccessDenied) or cannot be reached, no
 * digest is written, the head does not move, the session stays due, and the error says what to check.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { HttpResponse, http } from 'msw';
import { setupServer } from 'msw/node';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { signingInput } from '../../../lib/audit/chain.js';
import { KmsSigner } from '../../../lib/audit/kms-signer.js';
import { verifySignature } from '../../../lib/audit/signature.js';
import { writeDigest, writeDueDigests } from '../../../lib/service/digests/write.js';
import { type DigestWorld, localWorld, TENANT } from '../../support/digest-world.js';
import { fakeKms, KMS_URL, kmsTestClient } from '../../support/kms.js';

const ARN = 'arn:aws:kms:us-east-1:111122223333:key/1111aaaa-2222-3333-4444-555566667777';
const msw = setupServer();
const root = mkdtempSync(join(tmpdir(), 'hansard-digests-kms-'));
const worlds: DigestWorld[] = [];
beforeAll(() => msw.listen({ onUnhandledRequest: 'error' }));
afterEach(() => msw.resetHandlers());
afterAll(async () => {
  msw.close();
  for (const w of worlds) await w.close();
  rmSync(root, { recursive: true, force: true });
});

async function session() {
  const world = localWorld(root);
  worlds.push(world);
  const seg = world.segment({ open: true });
  await world.ingest(seg, 0, 3);
  return { world, seg };
}

describe('digests signed with KMS', () => {
  it('verify with the public key the signer serves, on the same path as a local key', async () => {
    fakeKms(msw, [ARN]);
    const { world, seg } = await session();
    const signer = new KmsSigner({ keyId: ARN, client: kmsTestClient() });
    const written = (await writeDigest(world.deps({ signer }), TENANT, seg.sid, 'scheduled'))!;
    const [key] = await signer.publicKeys();
    expect(written.digest.key_id).toBe(key!.key_id);
    expect(verifySignature(key!.public_key, signingInput(written.digest), written.digest.signature)).toBe(
      true,
    );
    // and not with the local keyring's key: it was KMS that signed
    const [local] = await world.keyring.publicKeys();
    expect(verifySignature(local!.public_key, signingInput(written.digest), written.digest.signature)).toBe(
      false,
    );
  });

  for (const [what, install, expected] of [
    ['AccessDenied', () => fakeKms(msw, [ARN], { denySign: true }), /AccessDeniedException.*kms:Sign/],
    ['unreachable', () => msw.use(http.post(KMS_URL, () => HttpResponse.error())), /could not be signed/],
  ] as const) {
    it(`KMS ${what}: no digest, head unchanged, session still due, the error names the cause`, async () => {
      install();
      const { world, seg } = await session();
      const signer = new KmsSigner({ keyId: ARN, client: kmsTestClient() });
      const err = await writeDigest(world.deps({ signer }), TENANT, seg.sid, 'scheduled').catch(
        (e: unknown) => e,
      );
      expect(err).toMatchObject({ code: 'signing_unavailable' });
      expect((err as Error).message).toMatch(expected);
      expect((err as Error).message).toContain('check the signing key');
      expect(await world.stores.digests.listDigests(TENANT, seg.sid)).toEqual([]);
      expect(await world.stores.state.getDigestHead(TENANT, seg.sid)).toBeNull();
      // the digester logs one line per session, no stack, and the session stays due for the next pass
      const pass = await writeDueDigests(world.deps({ signer }), world.now(), 10);
      expect(pass).toEqual({ due: 1, written: 0, skipped: 0, failed: 1 });
      expect(world.logs).toHaveLength(1);
      expect(world.logs[0]).toContain(seg.sid);
      expect(world.logs[0]).not.toMatch(/\n\s+at /);
      expect(
        (await world.stores.state.listDigestsDue(world.now().toISOString(), 10)).map((d) => d.sid),
      ).toEqual([seg.sid]);
      // KMS back: the next pass writes digest 1
      msw.resetHandlers();
      fakeKms(msw, [ARN]);
      expect(await writeDueDigests(world.deps({ signer }), world.now(), 10)).toMatchObject({ written: 1 });
    });
  }
});
