/**
 * `hansard verify --digests` in its own process (the CLI from source, as test/client/cli/hcn-cli.test.ts runs
 * it): the exit codes an auditor's script sees, 0 verified, 1 tampered, 2 not a bundle, and no stack.
 */
import { spawnSync } from 'node:child_process';
import { writeFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { describe, expect, it } from 'vitest';
import { buildSession, partsOf, writeBundle } from '../support/audit-bundle.js';
import { tmpDirs } from '../support/tmp.js';

const ROOT = resolve(import.meta.dirname, '../..');
const tmp = tmpDirs('hansard-verify-proc-');

function hansard(args: string[]): { code: number | null; out: string; err: string } {
  const main = `const { runCli } = await import(${JSON.stringify(`${ROOT}/lib/client/cli/main.ts`)});
const io = { stdout: process.stdout, stderr: process.stderr, env: process.env, cwd: process.cwd() };
process.exitCode = await runCli(process.argv.slice(1), io);`;
  const r = spawnSync(process.execPath, ['--import', 'tsx', '--input-type=module', '-e', main, ...args], {
    cwd: ROOT,
    encoding: 'utf8',
    timeout: 60_000,
  });
  return { code: r.status, out: r.stdout, err: r.stderr };
}

describe('hansard verify --digests (child process)', () => {
  it('exits 0 for a clean bundle, 1 for a tampered one, 2 for a file that is not a bundle', async () => {
    const dir = tmp.make();
    const s = await buildSession();
    const pem = join(dir, 'key.pem');
    writeFileSync(pem, s.key.info.public_key);
    const clean = await writeBundle(partsOf(s), join(dir, 'clean.tar.gz'), true);
    const [w, b] = [...s.segments][0]!;
    const cut = await writeBundle(
      partsOf(s, { segments: new Map([...s.segments, [w, b.subarray(0, b.length - 5)]]) }),
      join(dir, 'cut.tar'),
    );
    const garbage = join(dir, 'garbage.tar');
    writeFileSync(garbage, 'hello');

    const ok = hansard(['verify', '--digests', clean, '--public-key', pem]);
    expect(ok.code).toBe(0);
    expect(ok.out).toMatch(
      /^verified: 4 digests, 12 chunks, \d+ bytes as of 2026-11-30T10:15:00\.000Z; session s_\w+ of tenant t_acme$/m,
    );
    const bad = hansard(['verify', '--digests', cut, '--public-key', pem]);
    expect(bad.code).toBe(1);
    expect(bad.out).toMatch(
      new RegExp(
        `^error\\s+chunk_truncated\\s+${w} digest 3 offset \\d+ line \\d+: the segment ends inside`,
        'm',
      ),
    );
    expect(bad.out).toMatch(/^NOT verified: 1 error; /m);
    const usage = hansard(['verify', '--digests', garbage]);
    expect(usage.code).toBe(2);
    expect(usage.err).toContain('garbage.tar is not an export bundle');
    expect(usage.err).not.toMatch(/\n\s+at /);
  }, 120_000);
});
