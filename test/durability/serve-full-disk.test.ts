/**
 * `hansard serve` starting on a full disk (issue 8, durability attack B), with the real command as its own
 * process on a real tmpfs filled up with a file: a restart serves what the directory holds (reads work,
 * writes answer 507 until there is room) and warns that this start has no new board link, instead of
 * dying on the start-up writes with a SqliteError and a stack trace; a first start, which cannot create
 * its tenant there, is refused with a sentence (exit 2). Mounting tmpfs needs root: skipped otherwise.
 */
import { type ChildProcess, spawn } from 'node:child_process';
import { mkdtempSync, rmSync, unlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, describe, expect, it } from 'vitest';
import { startServeProcess } from '../../harness/serve-process.js';
import { tmpfsMounts } from '../support/tmpfs.js';
import { call, chunkedSegment, postChunk } from './segment-chunks.js';

const ROOT = resolve(dirname(fileURLToPath(import.meta.url)), '../..');
const root = mkdtempSync(join(tmpdir(), 'hansard-full-start-'));
const tmpfs = tmpfsMounts();
const children: ChildProcess[] = [];

const mountTmpfs = (dir: string, size: string) => tmpfs.mount(dir, size);

const cannotMount = mountTmpfs(join(root, 'probe'), '64k');

afterAll(async () => {
  for (const c of children) {
    if (c.exitCode !== null || c.signalCode !== null) continue;
    const exited = new Promise((r) => c.once('exit', r));
    c.kill('SIGKILL');
    await exited;
  }
  tmpfs.unmountAll();
  rmSync(root, { recursive: true, force: true });
});

/** Fills the filesystem of `dir` with the file `path` until a write fails with ENOSPC. */
function fill(path: string): void {
  const piece = Buffer.alloc(4096);
  try {
    for (;;) writeFileSync(path, piece, { flag: 'a' });
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code !== 'ENOSPC') throw err;
  }
}

const MAIN = `
const { runCli } = await import(${JSON.stringify(`${ROOT}/lib/client/cli/main.ts`)});
const io = { stdout: process.stdout, stderr: process.stderr, env: process.env, cwd: process.cwd() };
const code = await runCli(process.argv.slice(1), io);
if (code !== 0 || !io.keepAlive) process.exit(code);
`;

/**
 * `hansard serve --port 0 --data DATA` from source, as its own process. Resolves with its address once it
 * prints one, or with its exit code when it exits first; either way with what it printed.
 */
function serve(data: string): Promise<{ url: string | null; code: number | null; out: string; err: string }> {
  const env: NodeJS.ProcessEnv = {};
  for (const [k, v] of Object.entries(process.env)) if (!k.startsWith('HANSARD_')) env[k] = v;
  const child = spawn(
    process.execPath,
    ['--import', 'tsx', '--input-type=module', '-e', MAIN, 'serve', '--port', '0', '--data', data],
    { cwd: ROOT, env, stdio: ['ignore', 'pipe', 'pipe'] },
  );
  children.push(child);
  let out = '';
  let err = '';
  child.stderr!.setEncoding('utf8').on('data', (s: string) => (err += s));
  return new Promise((done, fail) => {
    const timer = setTimeout(
      () => fail(new Error(`no address and no exit in 45 s:\n${out}\n${err}`)),
      45_000,
    );
    child.once('exit', (code) => {
      clearTimeout(timer);
      done({ url: null, code, out, err });
    });
    child.stdout!.setEncoding('utf8').on('data', (s: string) => {
      out += s;
      const m = /serving (http:\/\/127\.0\.0\.1:\d+)/.exec(out);
      // The banner ends with the board's address (a link or not): wait for it, then settle.
      if (!m || !/\n {2}http:\/\/127\.0\.0\.1:\d+\/\S*\n/.test(out)) return;
      clearTimeout(timer);
      setTimeout(() => done({ url: m[1]!, code: null, out, err }), 200);
    });
  });
}

describe.skipIf(cannotMount !== null)(
  `serve on a full disk${cannotMount ? ` (skipped: mounting a tmpfs is not permitted here: ${cannotMount})` : ''}`,
  () => {
    it('a restart on a full disk serves reads, answers writes 507, warns there is no new board link, no stack trace', async () => {
      const data = join(root, 'restart');
      expect(mountTmpfs(data, '1m')).toBeNull();
      const first = await startServeProcess({ dataDir: data });
      const seg = chunkedSegment(join(root, 'work'), 24 * 1024, 12 * 1024);
      let offset = 0;
      for (const chunk of seg.chunks.slice(0, -1)) {
        expect((await postChunk(first.url, first.admin, seg, offset, chunk)).status).toBe(201);
        offset += chunk.length;
      }
      const admin = first.admin;
      await first.close();
      const filler = join(data, 'filler.bin');
      fill(filler);

      const second = await serve(data);
      expect(second.code, `${second.out}\n${second.err}`).toBeNull();
      expect(second.err).toContain(
        `hansard: warning: the disk holding ${data} is full: no new board link this start; reads work, writes answer 507 until space is freed`,
      );
      expect(second.out).toContain('no new sign-in link this start');
      expect(`${second.out}${second.err}`).not.toMatch(/unexpected error|SqliteError|\n\s+at /);
      const url = second.url!;

      const replay = await call(url, admin, 'GET', `/v1/sessions/${seg.sid}/replay?raw=1`);
      expect(replay.status).toBe(200);
      expect(replay.bytes.equals(seg.bytes.subarray(0, offset))).toBe(true);
      expect((await call(url, admin, 'GET', `/v1/sessions/${seg.sid}/verify`)).status).toBe(200);
      const last = seg.chunks.at(-1)!;
      const refused = await postChunk(url, admin, seg, offset, last);
      expect(refused.status, JSON.stringify(refused.json)).toBe(507);
      expect(refused.json.error!.code).toBe('insufficient_storage');

      unlinkSync(filler);
      expect((await postChunk(url, admin, seg, offset, last)).status).toBe(201);
    });

    it('filled while it runs, stopped, started again: serves with the warning (the state database kept its WAL)', async () => {
      const data = join(root, 'filled-running');
      expect(mountTmpfs(data, '1m')).toBeNull();
      const first = await startServeProcess({ dataDir: data });
      fill(join(data, 'filler.bin'));
      await first.close();
      const again = await serve(data);
      expect(again.code, `${again.out}\n${again.err}`).toBeNull();
      expect(again.err).toContain(`the disk holding ${data} is full: no new board link this start`);
      expect(`${again.out}${again.err}`).not.toMatch(/unexpected error|SqliteError|\n\s+at /);
      expect(
        (await fetch(`${again.url}/v1/sessions`, { headers: { authorization: `Bearer ${first.admin}` } }))
          .status,
      ).toBe(200);
    });

    it('a first start on a full disk is refused with a sentence, exit 2, no stack trace', async () => {
      const data = join(root, 'first');
      expect(mountTmpfs(data, '1m')).toBeNull();
      fill(join(data, 'filler.bin'));
      const r = await serve(data);
      expect(r.url, r.out).toBeNull();
      expect(r.code).toBe(2);
      expect(r.err).toMatch(new RegExp(`^hansard: the disk holding ${data} is full: hansard serve cannot `));
      expect(r.err).toMatch(/Free some space \(df -h .*\) or pass another --data, then start again/);
      expect(r.err).not.toMatch(/unexpected error|SqliteError|\n\s+at /);
    });
  },
);
