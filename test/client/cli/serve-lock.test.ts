/**
 * One `hansard serve` per data directory (issue 8): real `bin/hansard serve` processes on a real data
 * directory. A second server on the same `--data` is refused (exit 2, naming the first's pid) and the
 * first keeps serving with its data intact; the directory is served again once the first stops, is
 * killed with SIGKILL, or is left alone; `tenant create --data` works beside a running server; and
 * SIGTERM to `npm start` stops the server.
 *
 * The CLI is built from the current source into .test-results/ (scripts/build.mjs with
 * HANSARD_BUILD_OUTDIR), beside a copy of bin/hansard and package.json: dist/ may be stale or rebuilt
 * by someone else meanwhile.
 */
import { type ChildProcess, spawn } from 'node:child_process';
import { existsSync, mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import net from 'node:net';
import { tmpdir } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, afterEach, describe, expect, it } from 'vitest';
import { useBuiltCli } from '../../support/built-cli.js';

const ROOT = resolve(dirname(fileURLToPath(import.meta.url)), '../../..');
const ADMIN = `hns_${'L0ckTest'.repeat(5)}abc`;
const SID = 's_01KZVVGRNR3D5V708Z4NPGG11H';
const W = 'w_01KZVVGRNRKM87Z6X6TXYQR7EX';
const SEGMENT = readFileSync(join(ROOT, 'test/fixtures/seed-session', SID, `${W}.jsonl`));

const { app: APP } = useBuiltCli('serve-lock');
const tmp = mkdtempSync(join(tmpdir(), 'hansard-serve-lock-'));
const children: ChildProcess[] = [];

afterEach(() => {
  for (const c of children.splice(0)) if (c.exitCode === null && c.signalCode === null) c.kill('SIGKILL');
});
afterAll(() => {
  rmSync(tmp, { recursive: true, force: true });
});

/** A child process with its output collected and its exit awaited. */
interface Proc {
  child: ChildProcess;
  out: () => string;
  err: () => string;
  exited: Promise<number | null>;
}

function run(command: string, args: string[], env: Record<string, string> = {}): Proc {
  const clean: NodeJS.ProcessEnv = {};
  for (const [k, v] of Object.entries(process.env)) if (!k.startsWith('HANSARD_')) clean[k] = v;
  const child = spawn(command, args, {
    cwd: APP,
    env: { ...clean, NO_COLOR: '1', HANSARD_BOOTSTRAP_TOKEN: ADMIN, ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  children.push(child);
  let out = '';
  let err = '';
  child.stdout!.setEncoding('utf8').on('data', (s: string) => (out += s));
  child.stderr!.setEncoding('utf8').on('data', (s: string) => (err += s));
  const exited = new Promise<number | null>((done) => child.on('close', (code) => done(code)));
  return { child, out: () => out, err: () => err, exited };
}

const hansard = (...args: string[]) => run(process.execPath, [join(APP, 'bin/hansard'), ...args]);
const serve = (data: string, ...args: string[]) =>
  hansard('serve', '--port', '0', '--data', data, '--rate-limit', '0', ...args);

/** Resolves with the URL `p` serves once it says so; rejects if it exits first or takes over 20 s. */
async function serving(p: Proc): Promise<string> {
  const started = Date.now();
  while (Date.now() - started < 20_000) {
    const m = /serving (http:\/\/127\.0\.0\.1:\d+)/.exec(p.out());
    if (m) return m[1]!;
    if (p.child.exitCode !== null) throw new Error(`serve exited ${p.child.exitCode}:\n${p.out()}${p.err()}`);
    await sleep(50);
  }
  throw new Error(`serve did not start in 20 s:\n${p.out()}${p.err()}`);
}

/** `p`'s exit code, or 'running' when it has not exited within `ms`. */
async function exitWithin(p: Proc, ms: number): Promise<number | null | 'running'> {
  return Promise.race([p.exited, sleep(ms).then(() => 'running' as const)]);
}

const sleep = (ms: number) => new Promise<void>((r) => setTimeout(r, ms));

function chunk(url: string, offset: number, body: Uint8Array): Promise<Response> {
  return fetch(`${url}/v1/sessions/${SID}/writers/${W}/chunks?offset=${offset}`, {
    method: 'POST',
    headers: { authorization: `Bearer ${ADMIN}`, 'content-type': 'application/x-ndjson' },
    body,
  });
}

async function segment(url: string, token = ADMIN): Promise<{ status: number; body: string }> {
  const res = await fetch(`${url}/v1/sessions/${SID}/writers/${W}/segment`, {
    headers: { authorization: `Bearer ${token}` },
  });
  return { status: res.status, body: await res.text() };
}

describe('one hansard serve per data directory', () => {
  it('refuses a second server on the same --data (exit 2, naming the first), the first keeps serving its data, and a new one starts once it stops', async () => {
    const data = join(tmp, 'two');
    const first = serve(data);
    const url = await serving(first);
    const cut = SEGMENT.indexOf(10) + 1; // after the first line
    expect((await chunk(url, 0, SEGMENT.subarray(0, cut))).status).toBe(201);

    const second = serve(data);
    expect(await exitWithin(second, 15_000), second.out() + second.err()).toBe(2);
    const said = second.err();
    expect(said).toContain(`pid ${first.child.pid}`);
    expect(said).toContain(`serving ${url}`);
    expect(said).toContain('pass another --data');
    expect(said).not.toMatch(/\n\s+at /); // no stack trace
    expect(second.out()).not.toContain('serving');

    // The first still serves, holds what it acknowledged, and takes more.
    expect(await segment(url)).toEqual({ status: 200, body: SEGMENT.subarray(0, cut).toString() });
    expect((await chunk(url, cut, SEGMENT.subarray(cut))).status).toBe(201);
    expect((await segment(url)).body).toBe(SEGMENT.toString());

    first.child.kill('SIGTERM');
    expect(await exitWithin(first, 10_000)).toBe(0);
    expect(readdirSync(data).filter((n) => n.startsWith('serve.lock'))).toEqual([]);

    const third = serve(data);
    const thirdUrl = await serving(third);
    expect(await segment(thirdUrl)).toEqual({ status: 200, body: SEGMENT.toString() });
    third.child.kill('SIGTERM');
    expect(await exitWithin(third, 10_000)).toBe(0);
  });

  it('lets exactly one of two servers started at the same moment on a new directory serve it', async () => {
    const data = join(tmp, 'race');
    const both = [serve(data), serve(data)];
    const first = await Promise.race([
      ...both.map((p, i) => p.exited.then((code) => ({ i, code }))),
      sleep(15_000).then(() => ({ i: 0, code: 'both still running' as const })),
    ]);
    expect(first.code).toBe(2);
    const loser = both[first.i]!;
    const winner = both[1 - first.i]!;
    await serving(winner);
    expect(await exitWithin(winner, 1_000)).toBe('running');
    expect(loser.err()).toContain(`pid ${winner.child.pid}`);
    winner.child.kill('SIGTERM');
    expect(await exitWithin(winner, 10_000)).toBe(0);
  });

  it('serves a directory again right after its server was killed with SIGKILL (a dead holder on this host)', async () => {
    const data = join(tmp, 'killed');
    const first = serve(data);
    const url = await serving(first);
    expect((await chunk(url, 0, SEGMENT)).status).toBe(201);
    first.child.kill('SIGKILL');
    await first.exited;
    expect(existsSync(join(data, 'serve.lock'))).toBe(true); // left behind: nobody released it

    const started = Date.now();
    const next = serve(data);
    const nextUrl = await serving(next);
    const tookMs = Date.now() - started;
    expect(tookMs).toBeLessThan(8_000); // the 10 s staleness is not waited for
    expect(await segment(nextUrl)).toEqual({ status: 200, body: SEGMENT.toString() });
    console.log(`serve after SIGKILL of the previous holder: listening in ${tookMs} ms`);
    next.child.kill('SIGTERM');
    expect(await exitWithin(next, 10_000)).toBe(0);
  });

  it('stops serving (exit 1, saying why) when its lock is taken away', async () => {
    const data = join(tmp, 'lost');
    const p = serve(data);
    await serving(p);
    rmSync(join(data, 'serve.lock'), { recursive: true });
    expect(await exitWithin(p, 8_000)).toBe(1);
    expect(p.err()).toMatch(/lost the lock on the data directory .*this server stops/);
    expect(existsSync(join(data, 'serve.lock.json'))).toBe(false); // no stale description left behind
  });

  it('lets tenant create --data DIR run beside the server, whose new tenant’s token then works on it', async () => {
    const data = join(tmp, 'tenant');
    const server = serve(data);
    const url = await serving(server);
    const create = hansard('tenant', 'create', 'acme', '--data', data, '--json');
    expect(await exitWithin(create, 15_000), create.err()).toBe(0);
    const { token } = JSON.parse(create.out()) as { token: string };
    const res = await fetch(`${url}/v1/tokens`, { headers: { authorization: `Bearer ${token}` } });
    expect(res.status).toBe(200);
    // The new tenant sees its own (empty) data, not local's.
    expect((await chunk(url, 0, SEGMENT)).status).toBe(201);
    expect((await segment(url, token)).status).toBe(404);
    server.child.kill('SIGTERM');
    expect(await exitWithin(server, 10_000)).toBe(0);
  });
});

describe('npm start', () => {
  it('stops hansard serve when npm itself is sent SIGTERM', async () => {
    const data = join(tmp, 'npm-start');
    const port = await freePort();
    const npm = run('npm', ['start', '--', '--data', data, '--port', String(port)]);
    await serving(npm);
    npm.child.kill('SIGTERM');
    await exitWithin(npm, 10_000);
    const deadline = Date.now() + 5_000;
    while (Date.now() < deadline && (servesOn(data).length > 0 || (await listening(port)))) await sleep(100);
    const left = servesOn(data);
    for (const pid of left) process.kill(pid, 'SIGKILL'); // ours: the data directory is this test's
    expect(left, 'a hansard serve outlived npm start').toEqual([]);
    expect(await listening(port)).toBe(false);
  });
});

/** Pids of processes whose command line names `data` (the `hansard serve` started on it). */
function servesOn(data: string): number[] {
  const pids: number[] = [];
  for (const name of readdirSync('/proc')) {
    if (!/^\d+$/.test(name) || Number(name) === process.pid) continue;
    try {
      const cmd = readFileSync(`/proc/${name}/cmdline`, 'utf8').split('\0');
      if (cmd.includes('serve') && cmd.includes(data)) pids.push(Number(name));
    } catch {
      // gone meanwhile
    }
  }
  return pids;
}

function listening(port: number): Promise<boolean> {
  return new Promise((done) => {
    const s = net.connect({ port, host: '127.0.0.1' });
    s.once('connect', () => {
      s.destroy();
      done(true);
    });
    s.once('error', () => done(false));
  });
}

function freePort(): Promise<number> {
  return new Promise((done, fail) => {
    const s = net.createServer();
    s.once('error', fail);
    s.listen(0, '127.0.0.1', () => {
      const { port } = s.address() as net.AddressInfo;
      s.close(() => done(port));
    });
  });
}
