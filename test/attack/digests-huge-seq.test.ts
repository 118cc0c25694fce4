/**
 * Issue 15 attack: a manifest whose head seq is huge makes `hansard verify --digests` run out of memory.
 * verifyBundle walks every seq from 1 to max(manifest.head.seq, the digest files' seqs) and pushes a
 * `digest_missing` finding for each absent one. Editing manifest.json's head.seq to
 * 9007199254740991 (the schema allows any safe integer) in a real 2-writer bundle: the verifier grew to
 * 4.7 GB and died after 51 s with "JavaScript heap out of memory" (SIGABRT, a V8 stack, no exit 1/2); a
 * digest file named digests/999999999.json does the same through the file seqs.
 *
 * Real server on loopback, the real export, the CLI in a child process (heap capped at 512 MB).
 */
import { spawnSync } from 'node:child_process';
import { mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { beforeAll, describe, expect, it } from 'vitest';
import type { BundleManifest } from '../../lib/audit/schemas.js';
import { fetchExport, untarTo, uploadGenerated, useSigningServer } from '../support/export-bundle.js';

const ROOT = resolve(import.meta.dirname, '../..');
const { srv } = useSigningServer('hansard-attack-seq-keys-');

let sid: string;

beforeAll(async () => {
  ({ sid } = await uploadGenerated(srv, 40, 2));
}, 60_000);

describe('issue 15 attack: huge seqs', () => {
  it('a manifest naming head seq 2^53-1 is reported (exit 1), not a crash', async () => {
    const bundle = await fetchExport(srv, sid, srv.tokens.reader);
    const work = mkdtempSync(join(tmpdir(), 'hansard-attack-seq-'));
    await untarTo(bundle, work);
    const manifestPath = join(work, sid, 'manifest.json');
    const manifest = JSON.parse(readFileSync(manifestPath, 'utf8')) as BundleManifest;
    manifest.head.seq = Number.MAX_SAFE_INTEGER;
    writeFileSync(manifestPath, JSON.stringify(manifest, null, 2));

    const main = `const { runCli } = await import(${JSON.stringify(`${ROOT}/lib/client/cli/main.ts`)});
const io = { stdout: process.stdout, stderr: process.stderr, env: process.env, cwd: process.cwd() };
process.exitCode = await runCli(process.argv.slice(1), io);`;
    const r = spawnSync(
      process.execPath,
      [
        '--max-old-space-size=512',
        '--import',
        'tsx',
        '--input-type=module',
        '-e',
        main,
        'verify',
        '--digests',
        join(work, sid),
      ],
      { cwd: ROOT, encoding: 'utf8', timeout: 60_000, maxBuffer: 64 * 1024 * 1024 },
    );
    // On the code under attack: killed by SIGABRT ("JavaScript heap out of memory"), status null.
    expect(r.stderr).not.toMatch(/heap out of memory|\n\s+at /);
    expect(r.status).toBe(1);
    expect(r.stdout).toMatch(/digest_missing|manifest_mismatch/);
  }, 120_000);
});
