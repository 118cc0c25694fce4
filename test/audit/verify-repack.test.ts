/**
 * A bundle extracted and packed again with tar (`tar cf repack.tar -C ex .`, `tar czf …`) holds `./` and
 * `./{sid}/…` entries: inside the bundle, so it verifies. `..`, absolute paths and links stay refused.
 * Real bundles, the system tar, the CLI in process.
 */
import { execFileSync } from 'node:child_process';
import { createWriteStream, mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { pipeline } from 'node:stream/promises';
import tar from 'tar-stream';
import { beforeAll, describe, expect, it } from 'vitest';
import { buildSession, partsOf, writeBundle } from '../support/audit-bundle.js';
import { runHansard } from '../support/cli.js';
import { tmpDirs } from '../support/tmp.js';

const tmp = tmpDirs('hansard-verify-repack-');
let dir: string;
let pem: string;
let sid: string;

beforeAll(async () => {
  dir = tmp.make();
  const s = await buildSession();
  sid = s.sid;
  const original = await writeBundle(partsOf(s), join(dir, 's.tar'));
  mkdirSync(join(dir, 'ex'));
  execFileSync('tar', ['xf', original, '-C', join(dir, 'ex')]);
  pem = join(dir, 'key.pem');
  writeFileSync(pem, s.key.info.public_key);
});

const verify = (bundle: string) =>
  runHansard(['verify', '--digests', bundle, '--public-key', pem], { cwd: dir });

async function hostile(
  name: string,
  entries: Array<Partial<tar.Header> & { name: string; body?: string }>,
): Promise<string> {
  const path = join(dir, name);
  const pack = tar.pack();
  const done = pipeline(pack, createWriteStream(path));
  for (const { body, ...h } of entries) pack.entry(h, body ?? '');
  pack.finalize();
  await done;
  return path;
}

describe('verify --digests of a bundle packed again with tar', () => {
  it.each([
    ['repack.tar', 'cf', 'ex'],
    ['repack.tar.gz', 'czf', 'ex'],
    ['root.tar', 'cf', 'ex/SID'],
  ])('%s (tar %s -C %s .) verifies', async (name, flags, from) => {
    const out = join(dir, name);
    execFileSync('tar', [flags, out, '-C', join(dir, from.replace('SID', sid)), '.']);
    expect(execFileSync('tar', ['tf', out]).toString().split('\n')[0]).toBe('./');
    const r = await verify(out);
    expect(r.err).toBe('');
    expect(r.code, r.out).toBe(0);
    expect(r.out).toMatch(/^verified: 4 digests/m);
  });

  it.each([
    [
      'dotdot.tar',
      [
        { name: './', type: 'directory' as const },
        { name: './../escape.txt', body: 'x' },
      ],
    ],
    ['absolute.tar', [{ name: '/tmp/hansard-escape.txt', body: 'x' }]],
    ['link.tar', [{ name: './s_x/manifest.json', type: 'symlink' as const, linkname: '/etc/passwd' }]],
    ['dot-file.tar', [{ name: '.', body: 'x' }]],
  ])('%s is still refused (exit 2)', async (name, entries) => {
    const r = await verify(await hostile(name, entries));
    expect(r.code, r.out + r.err).toBe(2);
    expect(r.err).toMatch(/points outside the bundle|not a file: refused/);
  });
});
