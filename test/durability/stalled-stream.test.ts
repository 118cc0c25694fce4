/**
 * A client that stops reading gives its replay slot back (issue 8 follow-up), against `hansard serve` as
 * its own process with `--stream-idle-seconds 2`: four replays and segment downloads whose client reads
 * the head and then never reads again (the connection stays open) hold the token's four slots, so a fifth
 * is refused (429); once they have taken nothing for the idle time the server aborts them, and the fifth
 * answers 200 in full, with the server's descriptors back where they were before the stalled reads.
 * Before the fix the four held their slots, files and sockets for as long as the client kept them open.
 */
import net from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { generateSession } from '../../bench/gen.js';
import { type ServeProcess, startServeProcess } from '../../harness/serve-process.js';
import { ApiClient } from '../../lib/client/api/client.js';
import { uploadSession } from '../../lib/client/api/upload.js';
import { listSegments } from '../../lib/log/index.js';

const IDLE_SECONDS = 2;
const WRITERS = 2;
let srv: ServeProcess;
let sid: string;
let writers: string[];
const stalled: net.Socket[] = [];

beforeAll(async () => {
  srv = await startServeProcess({ args: ['--stream-idle-seconds', String(IDLE_SECONDS)] });
  // ~18 MiB over 2 writers: each segment alone is far more than the kernel's socket buffers hold (a few
  // MiB), so a reader that stops reading stops the server's sending.
  const dir = await generateSession(srv.workDir, 60_000, WRITERS);
  sid = dir.split('/').pop()!;
  writers = listSegments(dir).map((s) => s.w);
  await uploadSession(dir, { client: new ApiClient({ url: srv.url, token: srv.admin }) });
}, 120_000);

afterAll(async () => {
  for (const s of stalled) s.destroy();
  await srv?.close();
});

/**
 * GETs `path` as the admin on a raw socket, reads the answer's first bytes and then never reads again
 * (the socket stays open). Resolves with the answer's status.
 */
function stall(path: string): Promise<number> {
  return new Promise((resolve, reject) => {
    const socket = net.connect(srv.port, '127.0.0.1', () => {
      socket.write(`GET ${path} HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer ${srv.admin}\r\n\r\n`);
    });
    stalled.push(socket);
    socket.once('data', (d: Buffer) => {
      socket.pause();
      resolve(Number(/^HTTP\/1\.1 (\d{3})/.exec(d.toString('latin1'))?.[1] ?? 0));
    });
    socket.on('error', reject);
  });
}

async function replay(): Promise<{ status: number; bytes: number }> {
  const res = await fetch(`${srv.url}/v1/sessions/${sid}/replay`, {
    headers: { authorization: `Bearer ${srv.admin}` },
  });
  return { status: res.status, bytes: (await res.arrayBuffer()).byteLength };
}

/** Polls the descriptor count until it is at most `limit`. */
async function fdsSettle(limit: number): Promise<number> {
  for (let i = 0; i < 100 && srv.openFds() > limit; i++) await new Promise((r) => setTimeout(r, 100));
  return srv.openFds();
}

describe('hansard serve, with clients that stop reading their replays', () => {
  it('aborts the stalled ones after --stream-idle-seconds: their slots come back and their files and sockets close', async () => {
    const full = await replay(); // warm: what a first replay loads stays
    expect(full.status).toBe(200);
    expect(full.bytes).toBeGreaterThan(16 * 1024 * 1024);
    const base = srv.openFds();

    const paths = [
      `/v1/sessions/${sid}/replay`,
      `/v1/sessions/${sid}/replay?format=text`,
      `/v1/sessions/${sid}/replay?raw=1`,
      `/v1/sessions/${sid}/writers/${writers[0]}/segment`,
    ];
    const stalledAt = Date.now();
    expect(await Promise.all(paths.map(stall))).toEqual([200, 200, 200, 200]);
    // They hold the token's four slots, and a segment file per writer each.
    expect((await replay()).status).toBe(429);
    expect(srv.openFds()).toBeGreaterThan(base + 4);

    // Each is aborted once its reader has taken nothing for the idle time: the fifth gets a slot then.
    let fifth = await replay();
    while (fifth.status === 429 && Date.now() - stalledAt < 30_000) {
      await new Promise((r) => setTimeout(r, 250));
      fifth = await replay();
    }
    const freedAfterMs = Date.now() - stalledAt;
    expect(fifth, `slots still held ${freedAfterMs} ms after the readers stalled`).toEqual(full);
    expect(freedAfterMs).toBeGreaterThanOrEqual(IDLE_SECONDS * 1000);
    const aborts = () =>
      (srv.stderr().match(/: the client took no bytes of the answer for 2 s/g) ?? []).length;
    for (let i = 0; i < 100 && aborts() < 4; i++) await new Promise((r) => setTimeout(r, 100));
    expect(aborts(), srv.stderr().slice(-3000)).toBe(4);
    // All four slots came back: four replays at once, each in full.
    const four = await Promise.all(Array.from({ length: 4 }, replay));
    expect(four).toEqual([full, full, full, full]);
    // The stalled reads' segment files and sockets are closed (the test's sockets are still open).
    expect(await fdsSettle(base + 2)).toBeLessThanOrEqual(base + 2);
    // One line each in the server's log, and no stack trace.
    expect(srv.stderr()).not.toContain('StreamIdleError');
  }, 90_000);
});
