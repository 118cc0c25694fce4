/**
 * Issue 15 attack: a bundle cut short (an interrupted download copied by hand, a disk that filled) makes
 * `hansard verify --digests` die of an uncaught exception: tar-stream's "Unexpected end of data" (a
 * .tar) or an unhandled rejection (a .tar.gz) is thrown outside extractTar's try, so the auditor sees a
 * Node stack trace and exit 1 (the code for "not verified") instead of exit 2 with a sentence naming the
 * file, and the half-extracted hansard-bundle-* directory is left in TMPDIR.
 *
 * Real server on loopback, the real export, the CLI in a child process with its own TMPDIR.
 */
import { spawnSync } from 'node:child_process';
import { mkdtempSync, readdirSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { gzipSync } from 'node:zlib';
import { beforeAll, describe, expect, it } from 'vitest';
import { fetchExport, uploadGenerated, useSigningServer } from '../support/export-bundle.js';

const ROOT = resolve(import.meta.dirname, '../..');
const { srv } = useSigningServer('hansard-attack-cut-keys-');

let sid: string;

beforeAll(async () => {
  ({ sid } = await uploadGenerated(srv, 200, 2));
}, 60_000);

function verify(file: string, tmp: string) {
  const main = `const { runCli } = await import(${JSON.stringify(`${ROOT}/lib/client/cli/main.ts`)});
const io = { stdout: process.stdout, stderr: process.stderr, env: process.env, cwd: process.cwd() };
process.exitCode = await runCli(process.argv.slice(1), io);`;
  return spawnSync(
    process.execPath,
    ['--import', 'tsx', '--input-type=module', '-e', main, 'verify', '--digests', file],
    { cwd: ROOT, encoding: 'utf8', timeout: 60_000, env: { ...process.env, TMPDIR: tmp } },
  );
}

describe('issue 15 attack: a bundle cut short', () => {
  it('a real export cut in half is "cannot be read" (exit 2), no stack, no leftover', async () => {
    const whole = await fetchExport(srv, sid, srv.tokens.reader);
    const work = mkdtempSync(join(tmpdir(), 'hansard-attack-cut-'));
    const gz = gzipSync(whole);
    for (const [name, bytes] of [
      ['cut-half.tar', whole.subarray(0, Math.floor(whole.length / 2))],
      ['cut-40000.tar', whole.subarray(0, 40_000)],
      ['cut-half.tar.gz', gz.subarray(0, Math.floor(gz.length / 2))],
    ] as const) {
      const file = join(work, name);
      writeFileSync(file, bytes);
      const tmp = mkdtempSync(join(work, 'tmp-'));
      const r = verify(file, tmp);
      // On the code under attack: "Error: Unexpected end of data\n    at Extract._final (…)", status 1.
      expect(r.stderr, name).not.toMatch(/\n\s+at /);
      expect(r.status, `${name}: ${r.stderr}`).toBe(2);
      expect(r.stderr).toContain(name);
      expect(
        readdirSync(tmp).filter((n) => n.startsWith('hansard-bundle-')),
        name,
      ).toEqual([]);
    }
  }, 120_000);
});
