/**
 * The offline verifier's digest-file rules (issue 15 attack fixes, lib/audit/verify-digest-file.ts):
 * missing seqs as ranges bounded by the files present, a digest file that must be exactly its canonical
 * JSON with nothing unsigned in it, and a retired key that signs nothing dated after its retirement.
 * Real bundles built and signed from scratch (test/support/audit-bundle.ts), verified in process.
 */
import { join } from 'node:path';
import { beforeAll, describe, expect, it } from 'vitest';
import { canonicalJson } from '../../lib/audit/chain.js';
import { SignedDigest } from '../../lib/audit/schemas.js';
import { verifyBundle } from '../../lib/audit/verify-bundle.js';
import { digestFileProblem, missingRanges } from '../../lib/audit/verify-digest-file.js';
import { buildSession, partsOf, type TestSession, writeBundle } from '../support/audit-bundle.js';
import { tmpDirs } from '../support/tmp.js';

const tmp = tmpDirs('hansard-digest-file-');
let s: TestSession;
let dir: string;

beforeAll(async () => {
  s = await buildSession();
  dir = tmp.make();
});

describe('missingRanges', () => {
  it('answers one inclusive range per gap, including up to the head', () => {
    expect(missingRanges([], 0)).toEqual([]);
    expect(missingRanges([3, 1, 2], 3)).toEqual([]);
    expect(missingRanges([1, 3], 3)).toEqual([[2, 2]]);
    expect(missingRanges([1, 2, 6], 9)).toEqual([
      [3, 5],
      [7, 9],
    ]);
    expect(missingRanges([], 2)).toEqual([[1, 2]]);
  });

  it('costs the files present, not the seqs claimed', () => {
    const t = performance.now();
    expect(missingRanges([1, 2], Number.MAX_SAFE_INTEGER)).toEqual([[3, Number.MAX_SAFE_INTEGER]]);
    expect(missingRanges([999_999_999], 0)).toEqual([[1, 999_999_998]]);
    expect(performance.now() - t).toBeLessThan(50);
  });
});

describe('a digest file named 999999999.json', () => {
  it('is reported as a gap and a misplaced digest, in a handful of findings', async () => {
    const last = s.digests.at(-1)!;
    const file = await writeBundle(
      partsOf(s, {
        digests: [...s.digests, { seq: 999_999_999, bytes: Buffer.from(canonicalJson(last)) }],
      }),
      join(dir, 'far.tar'),
    );
    const r = await verifyBundle(file, { trustedKeys: [s.key.info] });
    expect(r.ok).toBe(false);
    expect(r.findings.length).toBeLessThan(10);
    expect(r.findings).toContainEqual(
      expect.objectContaining({
        code: 'digest_missing',
        seq: 5,
        message: expect.stringContaining('digests 5–999999998 are missing'),
      }),
    );
  });
});

describe('digestFileProblem', () => {
  it('accepts the stored bytes, and names an unsigned field at any depth or a non-canonical form', () => {
    const d = s.digests[0]!;
    const bytes = Buffer.from(canonicalJson(d));
    expect(digestFileProblem(bytes, JSON.parse(bytes.toString()), d)).toBeNull();

    const nested = { ...d, chunks: [{ ...d.chunks[0]!, note: 'x' }, ...d.chunks.slice(1)] };
    const raw = JSON.parse(canonicalJson(nested));
    expect(digestFileProblem(Buffer.from(canonicalJson(nested)), raw, SignedDigest.parse(raw))).toMatch(
      /signature does not cover: chunks\[0\]\.note$/,
    );

    const newline = Buffer.from(`${canonicalJson(d)}\n`);
    expect(digestFileProblem(newline, JSON.parse(newline.toString()), d)).toMatch(/canonical JSON/);
  });
});

describe('an unsigned field inside a canonical digest file', () => {
  it('is digest_invalid naming the field, though the signature over the rest verifies', async () => {
    const [d1, ...rest] = s.digests;
    const nested = { ...d1!, writers: d1!.writers.map((w, i) => (i === 0 ? { ...w, owner: 'mallory' } : w)) };
    const file = await writeBundle(
      partsOf(s, { digests: [{ seq: 1, bytes: Buffer.from(canonicalJson(nested)) }, ...rest] }),
      join(dir, 'nested.tar'),
    );
    const r = await verifyBundle(file, { trustedKeys: [s.key.info] });
    expect(r.findings).toContainEqual(
      expect.objectContaining({
        code: 'digest_invalid',
        seq: 1,
        message: expect.stringContaining('writers[0].owner'),
      }),
    );
    expect(r.ok).toBe(false);
  });
});

describe('a retired key', () => {
  it('still verifies what it signed before retired_at; a digest dated after it is digest_key_retired', async () => {
    const file = await writeBundle(partsOf(s), join(dir, 'retired.tar'));
    const ats = s.digests.map((d) => d.at);
    // retired between the second and the third digest
    const retired_at = new Date((Date.parse(ats[1]!) + Date.parse(ats[2]!)) / 2).toISOString();
    const r = await verifyBundle(file, { trustedKeys: [{ ...s.key.info, retired_at }] });
    const flagged = r.findings.filter((f) => f.code === 'digest_key_retired').map((f) => f.seq);
    expect(flagged).toEqual(s.digests.slice(2).map((d) => d.seq));
    expect(r.findings.every((f) => f.code === 'digest_key_retired')).toBe(true);
    expect(r.ok).toBe(false);
    // what the bundle proves stops at the last digest signed before the retirement
    expect(r.as_of).toBe(ats[1]);

    const before = await verifyBundle(file, {
      trustedKeys: [{ ...s.key.info, retired_at: ats.at(-1)! }],
    });
    expect(before.findings).toEqual([]);
  });
});
