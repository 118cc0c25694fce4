/**
 * `npm start` stopped from a terminal: Ctrl-C signals the whole process group, so `hansard serve` gets the
 * SIGINT itself and again as npm forwards it. That second copy, within a second of the first, is the same
 * stop: open requests still get their grace (5 s, `serve --help`) and are answered. A second signal that
 * comes later still stops the server at once. Real processes: `npm start` in a built copy of the checkout
 * (scripts/build.mjs into .test-results/, as serve-lock.test.ts does) in its own process group, signalled
 * as a group, and a node parent that forwards signals as npm does, a little after the group got them (two
 * copies that reach the server together are merged by the kernel into one, so npm start alone shows the
 * fault only when its copy comes late, as on a busy machine); a chunk upload whose body is still being
 * sent when the signal comes.
 */
import { type ChildProcess, spawn } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { request } from 'node:http';
import { tmpdir } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, afterEach, describe, expect, it } from 'vitest';
import { useBuiltCli } from '../../support/built-cli.js';

const ROOT = resolve(dirname(fileURLToPath(import.meta.url)), '../../..');
const ADMIN = `hns_${'S1gnalTwice'.repeat(4)}abcdefghi`.slice(0, 47);
const SID = 's_01KZVVGRNR3D5V708Z4NPGG11H';
const W = 'w_01KZVVGRNRKM87Z6X6TXYQR7EX';
const SEGMENT = readFileSync(join(ROOT, 'test/fixtures/seed-session', SID, `${W}.jsonl`));

const { app: APP } = useBuiltCli('serve-signal');
const tmp = mkdtempSync(join(tmpdir(), 'hansard-serve-signal-'));
const children: ChildProcess[] = [];

afterEach(() => {
  for (const c of children.splice(0)) {
    if (c.exitCode !== null || c.signalCode !== null) continue;
    try {
      process.kill(-c.pid!, 'SIGKILL'); // its group: npm and the server under it
    } catch {
      // gone meanwhile
    }
  }
});
afterAll(() => {
  rmSync(tmp, { recursive: true, force: true });
});

interface Proc {
  child: ChildProcess;
  out: () => string;
  exited: Promise<number | null>;
}

/** `command args` in APP, the leader of a process group of its own (as a terminal's foreground job). */
function runGroup(command: string, args: string[]): Proc {
  const env: NodeJS.ProcessEnv = {};
  for (const [k, v] of Object.entries(process.env)) if (!k.startsWith('HANSARD_')) env[k] = v;
  const child = spawn(command, args, {
    cwd: APP,
    env: { ...env, NO_COLOR: '1', HANSARD_BOOTSTRAP_TOKEN: ADMIN },
    stdio: ['ignore', 'pipe', 'pipe'],
    detached: true,
  });
  children.push(child);
  let out = '';
  child.stdout!.setEncoding('utf8').on('data', (s: string) => (out += s));
  child.stderr!.setEncoding('utf8').on('data', (s: string) => (out += s));
  const exited = new Promise<number | null>((done) => child.on('close', (code) => done(code)));
  return { child, out: () => out, exited };
}

async function serving(p: Proc): Promise<string> {
  const started = Date.now();
  while (Date.now() - started < 30_000) {
    const m = /serving (http:\/\/127\.0\.0\.1:\d+)/.exec(p.out());
    if (m) return m[1]!;
    if (p.child.exitCode !== null) throw new Error(`exited ${p.child.exitCode}:\n${p.out()}`);
    await sleep(50);
  }
  throw new Error(`did not start in 30 s:\n${p.out()}`);
}

const sleep = (ms: number) => new Promise<void>((r) => setTimeout(r, ms));

/**
 * A chunk upload that sends the first half of its body now and the rest when `finish` is called;
 * `answer` is its status, or the error that ended it.
 */
function slowChunk(url: string): { finish: () => void; answer: Promise<number | string> } {
  const half = Math.floor(SEGMENT.length / 2);
  let finish = () => {};
  const answer = new Promise<number | string>((done) => {
    const req = request(`${url}/v1/sessions/${SID}/writers/${W}/chunks?offset=0`, {
      method: 'POST',
      headers: {
        authorization: `Bearer ${ADMIN}`,
        'content-type': 'application/x-ndjson',
        'content-length': String(SEGMENT.length),
      },
    });
    req.on('response', (res) => {
      res.resume();
      done(res.statusCode ?? 0);
    });
    req.on('error', (err) => done(`${(err as NodeJS.ErrnoException).code ?? err.message}`));
    req.write(SEGMENT.subarray(0, half));
    finish = () => req.end(SEGMENT.subarray(half));
  });
  return { finish: () => finish(), answer };
}

describe('hansard serve and a signal sent twice', () => {
  it('npm start, SIGINT to its process group (Ctrl-C): the open request is answered, then it stops', async () => {
    const npm = runGroup('npm', [
      'start',
      '--',
      '--data',
      join(tmp, 'npm'),
      '--port',
      '0',
      '--rate-limit',
      '0',
    ]);
    const url = await serving(npm);
    const upload = slowChunk(url);
    await sleep(300); // the request is at the server, its body half sent
    process.kill(-npm.child.pid!, 'SIGINT');
    await sleep(1_500); // past the window: a stop-now would have ended the process by now
    upload.finish();
    expect(await upload.answer, npm.out()).toBe(201);
    expect(await Promise.race([npm.exited.then(() => 'exited'), sleep(15_000).then(() => 'running')])).toBe(
      'exited',
    );
    expect(npm.out()).not.toContain('stopping now');
  }, 90_000);

  it('a parent that forwards the signal as npm does, 100 ms after the group got it: the same stop', async () => {
    // npm's forwarding, made late enough that the two copies never reach the server together (two
    // pending SIGINTs merge into one; on a busy machine npm's copy comes after the group's, as here).
    const forwarder = `
const { spawn } = require('node:child_process');
const [cmd, ...args] = ${JSON.stringify([process.execPath, join(APP, 'bin/hansard')])}.concat(process.argv.slice(1));
const child = spawn(cmd, args, { stdio: 'inherit' });
for (const sig of ['SIGINT', 'SIGTERM']) process.on(sig, () => setTimeout(() => child.kill(sig), 100));
child.on('exit', (code) => process.exit(code ?? 1));
`;
    const parent = runGroup(process.execPath, [
      '-e',
      forwarder,
      'serve',
      '--data',
      join(tmp, 'forwarded'),
      '--port',
      '0',
      '--rate-limit',
      '0',
    ]);
    const url = await serving(parent);
    const upload = slowChunk(url);
    await sleep(300);
    process.kill(-parent.child.pid!, 'SIGINT');
    await sleep(1_500);
    upload.finish();
    expect(await upload.answer, parent.out()).toBe(201);
    expect(await parent.exited).toBe(0);
    expect(parent.out()).not.toContain('stopping now');
  }, 90_000);

  it('a second signal more than a second after the first stops it at once, open request or not', async () => {
    const serve = runGroup(process.execPath, [
      join(APP, 'bin/hansard'),
      'serve',
      '--data',
      join(tmp, 'direct'),
      '--port',
      '0',
      '--rate-limit',
      '0',
    ]);
    const url = await serving(serve);
    const upload = slowChunk(url);
    await sleep(300);
    serve.child.kill('SIGTERM');
    await sleep(1_500);
    const started = Date.now();
    serve.child.kill('SIGTERM');
    expect(await serve.exited).toBe(1);
    expect(Date.now() - started).toBeLessThan(2_000);
    expect(serve.out()).toContain('hansard: stopping now, without waiting for open requests');
    expect(typeof (await upload.answer)).toBe('string'); // its connection went with the process
  }, 90_000);
});
