/**
 * Export bundles (issue 15.3): packBundle's tar (entries under {sid}/, manifest last, segments streamed
 * and length-checked), openBundle on a .tar, a .tar.gz and an extracted directory (system tar), and the
 * bundles `hansard verify --digests` refuses with exit 2. Real files, real tar.
 */
import { execFileSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import { createReadStream, createWriteStream, existsSync, mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { pipeline } from 'node:stream/promises';
import tar from 'tar-stream';
import { beforeAll, describe, expect, it } from 'vitest';
import { openBundle, packBundle } from '../../lib/audit/bundle.js';
import { canonicalJson } from '../../lib/audit/chain.js';
import { BundleManifest } from '../../lib/audit/schemas.js';
import { verifyBundle } from '../../lib/audit/verify-bundle.js';
import { buildSession, partsOf, type TestSession, writeBundle } from '../support/audit-bundle.js';
import { runHansard } from '../support/cli.js';
import { tmpDirs } from '../support/tmp.js';

const tmp = tmpDirs('hansard-bundle-');
let s: TestSession;
let dir: string;
let tarPath: string;
let pem: string;

beforeAll(async () => {
  s = await buildSession({ writers: 3, chunksPerWriter: 5, digestCount: 3 });
  dir = tmp.make();
  tarPath = await writeBundle(partsOf(s), join(dir, 'bundle.tar'));
  pem = join(dir, 'key.pem');
  writeFileSync(pem, s.key.info.public_key);
});

/** The entries of a tar, in order. */
async function entries(path: string): Promise<Array<{ name: string; body: Buffer }>> {
  const ex = tar.extract();
  const out: Array<{ name: string; body: Buffer }> = [];
  const feeding = pipeline(createReadStream(path), ex as never);
  for await (const e of ex) {
    const parts: Buffer[] = [];
    for await (const b of e) parts.push(b as Buffer);
    out.push({ name: e.header.name, body: Buffer.concat(parts) });
  }
  await feeding;
  return out;
}

const run = (args: string[]) => runHansard(['verify', '--digests', ...args], { cwd: dir });

describe('packBundle', () => {
  it('writes digests, keys, segments under {sid}/ and the manifest last, with the files hashes', async () => {
    const es = await entries(tarPath);
    expect(es.map((e) => e.name)).toEqual([
      ...s.digests.map((d) => `${s.sid}/digests/00000000${d.seq}.json`),
      `${s.sid}/keys/${s.key.info.key_id}.json`,
      ...[...s.segments.keys()].map((w) => `${s.sid}/segments/${w}.jsonl`),
      `${s.sid}/manifest.json`,
    ]);
    expect(es[0]!.body.toString()).toBe(canonicalJson(s.digests[0]));
    const m = BundleManifest.parse(JSON.parse(es.at(-1)!.body.toString()));
    for (const seg of m.segments) {
      const b = s.segments.get(seg.w)!;
      expect(seg).toMatchObject({ length: b.length, sha256: createHash('sha256').update(b).digest('hex') });
      expect(es.find((e) => e.name === `${s.sid}/${seg.path}`)!.body.equals(b)).toBe(true);
    }
    expect(m.head.seq).toBe(3);
  });

  it('streams a segment in pieces, and fails rather than write a corrupt tar when the length is wrong', async () => {
    const w = [...s.segments.keys()][0]!;
    const b = s.segments.get(w)!;
    const pieces = (extra: number) => ({
      w,
      length: b.length,
      read: async function* () {
        for (let i = 0; i < b.length; i += 100) yield b.subarray(i, Math.min(b.length, i + 100));
        if (extra > 0) yield Buffer.alloc(extra, 0x20);
      },
    });
    const ok = await writeBundle({ ...partsOf(s), segments: [pieces(0)] }, join(dir, 'pieces.tar'));
    expect((await entries(ok)).find((e) => e.name.endsWith(`${w}.jsonl`))!.body.equals(b)).toBe(true);
    await expect(
      writeBundle({ ...partsOf(s), segments: [pieces(5)] }, join(dir, 'long.tar')),
    ).rejects.toThrow(`segment ${w} yielded more than its ${b.length} bytes`);
    const short = { w, length: b.length + 7, read: pieces(0).read };
    await expect(writeBundle({ ...partsOf(s), segments: [short] }, join(dir, 'short.tar'))).rejects.toThrow(
      `segment ${w} yielded ${b.length} bytes, not its ${b.length + 7}`,
    );
  });

  it('refuses a writer id that is not a safe file name', () => {
    const parts = partsOf(s);
    expect(() => packBundle({ ...parts, segments: [{ ...parts.segments[0]!, w: '../x' }] })).toThrow(
      TypeError,
    );
  });
});

describe('openBundle and the forms of a bundle', () => {
  it('a .tar.gz, the extracted folder and its {sid}/ root verify the same as the .tar', async () => {
    const gz = join(dir, 'bundle.tgz-without-a-telling-name');
    execFileSync('sh', ['-c', `gzip -c '${tarPath}' > '${gz}'`]);
    const out = join(dir, 'extracted');
    mkdirSync(out);
    execFileSync('tar', ['-xf', tarPath, '-C', out]);
    const base = await run([tarPath, '--public-key', pem, '--json']);
    expect(base.code).toBe(0);
    for (const p of [gz, out, join(out, s.sid)]) {
      const r = await run([p, '--public-key', pem, '--json']);
      expect(r.code, p).toBe(0);
      expect(r.out).toBe(base.out);
    }
    const opened = await openBundle(gz);
    expect(opened.kind).toBe('tar.gz');
    expect(existsSync(join(opened.root, 'manifest.json'))).toBe(true);
    await opened.close();
    expect(existsSync(opened.root)).toBe(false);
  });

  it('a segment edited in an extracted folder: chunk_modified, and the manifest no longer matches', async () => {
    const out = join(dir, 'edited');
    mkdirSync(out);
    execFileSync('tar', ['-xf', tarPath, '-C', out]);
    const [w, b] = [...s.segments][1]!;
    const chunk = s.chunks.filter((c) => c.w === w)[1]!;
    const edited = Buffer.from(b);
    edited[chunk.offset + 3] = edited[chunk.offset + 3] === 0x61 ? 0x62 : 0x61;
    writeFileSync(join(out, s.sid, 'segments', `${w}.jsonl`), edited);
    const report = await verifyBundle(join(out, s.sid), { trustedKeys: [s.key.info.public_key] });
    expect(report.ok).toBe(false);
    expect(report.findings.map((f) => f.code).sort()).toEqual(['chunk_modified', 'manifest_mismatch']);
    expect(report.findings.find((f) => f.code === 'chunk_modified')).toMatchObject({
      w,
      offset: chunk.offset,
      line: chunk.line,
      seq: chunk.seq,
    });
  });

  it('a key file whose id is not its fingerprint: key_mismatch', async () => {
    const out = join(dir, 'badkey');
    mkdirSync(out);
    execFileSync('tar', ['-xf', tarPath, '-C', out]);
    const f = join(out, s.sid, 'keys', `${s.key.info.key_id}.json`);
    writeFileSync(f, JSON.stringify({ ...s.key.info, key_id: 'k_000000000000000000000000' }));
    const r = await verifyBundle(out, { trustedKeys: [s.key.info] });
    expect(r.findings).toEqual([expect.objectContaining({ code: 'key_mismatch' })]);
  });

  it('takes --public-key as a PEM, as GET /v1/keys JSON or as one key JSON; without one, warns', async () => {
    const keys = join(dir, 'keys.json');
    writeFileSync(keys, JSON.stringify({ keys: [s.key.info] }));
    const one = join(dir, 'one.json');
    writeFileSync(one, JSON.stringify(s.key.info));
    for (const k of [pem, keys, one]) expect((await run([tarPath, '--public-key', k])).code).toBe(0);
    const bare = await run([tarPath]);
    expect(bare.code).toBe(0);
    expect(bare.out).toMatch(/^warning\s+keys_from_bundle\s+bundle: no trusted key given/m);
    expect(bare.out).toMatch(/^verified: 3 digests, 15 chunks/m);
  });

  it('exits 2 with a clear message for what is not a bundle or not a key', async () => {
    const garbage = join(dir, 'garbage.bin');
    writeFileSync(garbage, 'this is not a tar file at all\n'.repeat(40));
    const empty = join(dir, 'empty-dir');
    mkdirSync(empty);
    const noManifest = join(dir, 'no-manifest.tar');
    const pack = tar.pack();
    pack.entry({ name: `${s.sid}/digests/000000001.json` }, canonicalJson(s.digests[0]));
    pack.finalize();
    await pipeline(pack as never, createWriteStream(noManifest));
    const evil = join(dir, 'evil.tar');
    const p2 = tar.pack();
    p2.entry({ name: `../escaped-${process.pid}.json` }, '{}');
    p2.finalize();
    await pipeline(p2 as never, createWriteStream(evil));
    const cases: Array<[string[], RegExp]> = [
      [
        [garbage],
        /garbage\.bin is not an export bundle: neither a tar, a gzip-compressed tar, nor a directory/,
      ],
      [[empty], /empty-dir is not an export bundle: no manifest\.json/],
      [[noManifest], /no-manifest\.tar is not an export bundle: no manifest\.json/],
      [[evil], /entry "\.\.\/escaped-\d+\.json" points outside the bundle: refused/],
      [[join(dir, 'nope.tar')], /cannot read .*nope\.tar: no such file or directory/],
      [[tarPath, '--public-key', garbage], /garbage\.bin is neither a PEM public key nor JSON/],
      [[tarPath, '--public-key', join(dir, 'nope.pem')], /cannot read the public key .*nope\.pem: ENOENT/],
      [[tarPath, '--at', 'yesterday'], /--at yesterday is not an ISO time/],
    ];
    for (const [args, message] of cases) {
      const r = await run(args);
      expect(r.code, args.join(' ')).toBe(2);
      expect(r.err).toMatch(message);
      expect(r.err).not.toMatch(/\n\s+at /);
    }
    expect(existsSync(join(dir, '..', `escaped-${process.pid}.json`))).toBe(false);
  });

  it('a digest written after its predecessor was due: digest_late, a warning (exit 0)', async () => {
    const out = join(dir, 'late');
    mkdirSync(out);
    const late = await buildSession({ writers: 1, chunksPerWriter: 2, digestCount: 2 });
    const { signDigest } = await import('../../lib/audit/signature.js');
    const { signature: _s, ...first } = late.digests[0]!;
    const d1 = await signDigest({ ...first, next_due: '2026-11-30T10:01:00.000Z' }, late.key.signing);
    const { digestHash } = await import('../../lib/audit/chain.js');
    const { signature: _t, ...second } = late.digests[1]!;
    const d2 = await signDigest(
      { ...second, previous: { seq: 1, sha256: digestHash(d1), signature: d1.signature } },
      late.key.signing,
    );
    const file = await writeBundle(partsOf(late, { digests: [d1, d2], head: d2 }), join(out, 'late.tar'));
    writeFileSync(join(out, 'k.pem'), late.key.info.public_key);
    const r = await run([file, '--public-key', join(out, 'k.pem')]);
    expect(r.code).toBe(0);
    expect(r.out).toMatch(
      /^warning\s+digest_late\s+digest 2: digest seq 2 was written at 2026-11-30T10:05:00.000Z, after seq 1's next_due 2026-11-30T10:01:00.000Z$/m,
    );
  });

  it('verify --help teaches --digests: what is checked and an example', async () => {
    const r = await runHansard(['verify', '--help'], { cwd: dir });
    expect(r.out).toContain('hansard verify --digests s.tar.gz --public-key keys.json');
    expect(r.out).toContain('--public-key <key>');
    expect(r.out).toMatch(/modified, deleted, inserted, reordered or truncated/);
  });
});
