/**
 * Issue 15 attack: `hansard verify --digests` extracts a .tar.gz whole into a temporary directory before
 * it checks anything, with no bound on size or compression ratio. A 4 MB .tar.gz holding one 4 GiB entry
 * of zeros (and a manifest `{}`) wrote 4.1 GB to /tmp and ran 31 s before it said NOT verified; a 40 MB
 * one fills most disks. An auditor verifying a bundle from someone else must be able to do so safely.
 *
 * The CLI in a child process with its own TMPDIR, whose size is watched while it runs.
 */
import { spawn } from 'node:child_process';
import { createWriteStream, mkdtempSync, readdirSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { Readable } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import { createGzip } from 'node:zlib';
import tar from 'tar-stream';
import { describe, expect, it } from 'vitest';

const ROOT = resolve(import.meta.dirname, '../..');
const SIZE = 512 * 1024 * 1024;

function sizeOf(path: string): number {
  let n = 0;
  try {
    for (const e of readdirSync(path, { withFileTypes: true })) {
      const p = join(path, e.name);
      n += e.isDirectory() ? sizeOf(p) : statSync(p).size;
    }
  } catch {
    // removed while walked
  }
  return n;
}

describe('issue 15 attack: gzip bomb', () => {
  it('a .tar.gz that expands 1000× is refused without writing it out', async () => {
    const work = mkdtempSync(join(tmpdir(), 'hansard-attack-bomb-'));
    const bomb = join(work, 'bomb.tar.gz');
    const pack = tar.pack();
    const write = pipeline(pack, createGzip({ level: 9 }), createWriteStream(bomb));
    pack.entry({ name: 's_x/manifest.json' }, '{}');
    const entry = pack.entry({ name: 's_x/segments/w_x.jsonl', size: SIZE });
    const zeros = Buffer.alloc(1024 * 1024);
    await pipeline(
      Readable.from(
        (function* () {
          for (let i = 0; i < SIZE / zeros.length; i++) yield zeros;
        })(),
      ),
      entry as never,
    );
    pack.finalize();
    await write;
    expect(statSync(bomb).size).toBeLessThan(SIZE / 500);

    const tmp = mkdtempSync(join(work, 'tmp-'));
    const main = `const { runCli } = await import(${JSON.stringify(`${ROOT}/lib/client/cli/main.ts`)});
const io = { stdout: process.stdout, stderr: process.stderr, env: process.env, cwd: process.cwd() };
process.exitCode = await runCli(process.argv.slice(1), io);`;
    const child = spawn(
      process.execPath,
      ['--import', 'tsx', '--input-type=module', '-e', main, 'verify', '--digests', bomb],
      { cwd: ROOT, env: { ...process.env, TMPDIR: tmp }, stdio: ['ignore', 'pipe', 'pipe'] },
    );
    let peak = 0;
    const timer = setInterval(() => {
      peak = Math.max(peak, sizeOf(tmp));
    }, 50);
    const code = await new Promise<number | null>((ok) => child.on('close', ok));
    clearInterval(timer);
    // On the code under attack: the entry is written out whole (peak ≈ 512 MiB), then exit 1.
    expect(peak).toBeLessThan(64 * 1024 * 1024);
    expect(code).toBe(2);
  }, 180_000);
});
