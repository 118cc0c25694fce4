/**
 * Racing uploaders (issue 8.8, DESIGN §6 `hansard upload`): two `bin/hansard upload` child processes on
 * one session directory at once, against a real server on loopback, while the session's writers keep
 * appending. The run that is behind gets 409 with an offset past its own view of the file (the other run
 * read the file later and sent more): that is done, not an error. Both must exit 0 every round, and the
 * server's replay must equal the local one at the end.
 */
import { type ChildProcess, execFileSync, spawn } from 'node:child_process';
import { mkdirSync, mkdtempSync } from 'node:fs';
import { createServer, request as httpRequest, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { openSession } from '../../lib/log/write/writer.js';
import { request } from '../support/http.js';
import { localReplay } from '../support/segments.js';
import { makeTenant, mint, startServer, type TestServer } from '../support/server.js';

const ROOT = resolve(dirname(fileURLToPath(import.meta.url)), '../..');
const BIN = join(ROOT, 'bin', 'hansard');
const ROUNDS = 20;
/** Small chunks (the CLI takes the server's advertised limit), so an upload is several POSTs. */
const MAX_CHUNK_BYTES = 1024;

let srv: TestServer;
/** one token per run, so the proxy can tell the two runs apart */
const tokens = { a: '', b: '' };
let proxy: Server;
let proxyUrl: string;
/** requests the proxy has passed on */
let requests = 0;
/** the next chunk POST with this Authorization header waits for the promise the function returns */
const holds = new Map<string, () => Promise<void>>();

/** Makes the proxy hold the next chunk POST sent with `token` until `release()`. */
function holdFirstPost(token: string): { arrived: Promise<void>; release: () => void } {
  let arrive!: () => void;
  let release!: () => void;
  const arrived = new Promise<void>((r) => {
    arrive = r;
  });
  const released = new Promise<void>((r) => {
    release = r;
  });
  holds.set(`Bearer ${token}`, () => {
    arrive();
    return released;
  });
  return { arrived, release };
}

beforeAll(async () => {
  // The children run the built CLI: build it from this tree, as the e2e suite does.
  execFileSync('npm', ['run', 'build'], { cwd: ROOT, stdio: 'pipe' });
  srv = await startServer({ limits: { maxChunkBytes: MAX_CHUNK_BYTES } });
  await makeTenant(srv, 'local');
  tokens.a = await mint(srv, 'local', ['ingest', 'read']);
  tokens.b = await mint(srv, 'local', ['ingest', 'read']);
  // A proxy that holds each chunk POST 0-6 ms before passing it on: which run's chunk lands first at an
  // offset is then a coin toss, as across a real network, and not decided by which child started first.
  proxy = createServer(async (req, res) => {
    requests += 1;
    const gate = holds.get(String(req.headers.authorization));
    if (gate && req.method === 'POST') {
      holds.delete(String(req.headers.authorization));
      await gate();
    }
    const delay = req.method === 'POST' ? Math.random() * 6 : 0;
    setTimeout(() => {
      const up = httpRequest(`${srv.url}${req.url}`, { method: req.method, headers: req.headers }, (r) => {
        res.writeHead(r.statusCode ?? 502, r.headers);
        r.pipe(res);
      });
      req.pipe(up);
    }, delay);
  });
  await new Promise<void>((r) => proxy.listen(0, '127.0.0.1', r));
  proxyUrl = `http://127.0.0.1:${(proxy.address() as AddressInfo).port}`;
}, 120_000);

afterAll(async () => {
  proxy?.closeAllConnections();
  await new Promise((r) => (proxy ? proxy.close(r) : r(null)));
  await srv?.close();
});

interface Run {
  code: number | null;
  stdout: string;
  stderr: string;
}

/** `node bin/hansard upload DIR --json`, without any HANSARD_* setting of the machine running the tests. */
function upload(dir: string, token: string): { child: ChildProcess; done: Promise<Run> } {
  const env: NodeJS.ProcessEnv = {};
  for (const [k, v] of Object.entries(process.env)) if (!k.startsWith('HANSARD_')) env[k] = v;
  const child = spawn(process.execPath, [BIN, 'upload', dir, '--json'], {
    cwd: ROOT,
    env: { ...env, NO_COLOR: '1', HANSARD_URL: proxyUrl, HANSARD_TOKEN: token },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let stdout = '';
  let stderr = '';
  child.stdout!.setEncoding('utf8').on('data', (s: string) => {
    stdout += s;
  });
  child.stderr!.setEncoding('utf8').on('data', (s: string) => {
    stderr += s;
  });
  const done = new Promise<Run>((ok, fail) => {
    child.on('error', fail);
    child.on('close', (code) => ok({ code, stdout, stderr }));
  });
  return { child, done };
}

/** Bytes sent per writer, from `upload --json`. */
function sentBytes(stdout: string): Map<string, number> {
  const out = JSON.parse(stdout) as {
    sessions: Array<{ segments: Array<{ w: string; sent_bytes: number }> }>;
  };
  return new Map(out.sessions.flatMap((s) => s.segments.map((seg) => [seg.w, seg.sent_bytes] as const)));
}

describe('two hansard upload runs on one directory at once', { timeout: 180_000 }, () => {
  it(`both exit 0 in each of ${ROUNDS} rounds while the writers append, and the server replay equals the local one`, async () => {
    mkdirSync(srv.workDir, { recursive: true });
    const first = openSession(mkdtempSync(join(srv.workDir, 'race-')), { agent: 'racer-a' });
    const second = openSession(first.dir, { agent: 'racer-b' });
    const writers = [first, second];
    let n = 0;
    /** a note of one writer then the other's, of 40-440 bytes of text (a line of about 270-670) */
    const note = (textBytes = 40 + ((n * 37) % 400)) => {
      const w = writers[n % 2]!;
      w.note({ author: 'tester', text: `note ${n} ${'x'.repeat(textBytes)}` });
      n += 1;
    };
    for (let i = 0; i < 20; i++) note();

    const failures: string[] = [];
    const check = (round: number, runs: Run[]) =>
      runs.forEach((r, i) => {
        if (r.code !== 0) failures.push(`round ${round}, run ${'ab'[i]}: exit ${r.code}\n${r.stderr}`);
      });
    /** free rounds where both runs sent bytes of one writer: they raced for it */
    let contended = 0;
    for (let round = 0; round < ROUNDS; round++) {
      if (round % 2 === 0) {
        // Held: from a server holding all there is, run a reads its view of the files (one short new line each) and sends its first chunk,
        // which the proxy holds; the writers append two more lines each, run b reads the longer files,
        // sends them and exits; then a's chunk goes on. b's chunk at that offset holds three lines, a's
        // one: 409, with an offset past the end of a's view of the file.
        const caughtUp = await upload(first.dir, tokens.b).done; // the server holds every line so far
        check(round, [caughtUp]);
        for (let i = 0; i < 2; i++) note(20);
        const held = holdFirstPost(tokens.a);
        const a = upload(first.dir, tokens.a);
        await held.arrived;
        for (let i = 0; i < 4; i++) note(20);
        const b = await upload(first.dir, tokens.b).done;
        held.release();
        check(round, [await a.done, b]);
        continue;
      }
      for (let i = 0; i < 10 + (round % 5) * 6; i++) note();
      // Free: both start at once and the writers keep appending while both read and send (a bounded
      // number of lines from the round's first request on, so that an upload reading to the end of
      // the file ends), each chunk POST held 0-6 ms by the proxy.
      let appended = 0;
      const before = requests;
      const appending = setInterval(() => {
        if (requests > before && appended++ < 60) note();
      }, 2);
      const runs = await Promise.all([upload(first.dir, tokens.a).done, upload(first.dir, tokens.b).done]);
      clearInterval(appending);
      check(round, runs);
      const sent = runs.map((r) => (r.code === 0 ? sentBytes(r.stdout) : new Map<string, number>()));
      if ([...sent[0]!].some(([w, bytes]) => bytes > 0 && (sent[1]!.get(w) ?? 0) > 0)) contended += 1;
    }
    console.log(
      `upload race: both runs sent bytes of one writer in ${contended} of ${ROUNDS / 2} free rounds`,
    );
    expect(failures).toEqual([]);

    first.end();
    second.end();
    const last = await upload(first.dir, tokens.a).done;
    expect(last.code, last.stderr).toBe(0);
    const remote = await request(srv, 'GET', `/v1/sessions/${first.sid}/replay`, { token: tokens.a });
    expect(remote.status).toBe(200);
    const local = await localReplay(first.dir);
    expect(local.split('\n').length).toBeGreaterThan(n);
    expect(remote.text).toBe(local);
  });
});
