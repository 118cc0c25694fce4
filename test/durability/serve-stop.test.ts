/**
 * SIGTERM stops `hansard serve` within its grace period even while a client holds a replay it stopped
 * reading (issue 8 follow-up), against the server as its own process: it says it is stopping and for how
 * many open requests it waits (5 s), closes the connection still open then, says it stopped, exits 0 and
 * releases the data directory, so a new server starts on it. Before the fix the server waited for the
 * stalled reader for as long as it kept its connection open (still running 30 s after SIGTERM, holding the
 * data directory's lock).
 */
import net from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { generateSession } from '../../bench/gen.js';
import { type ServeProcess, startServeProcess } from '../../harness/serve-process.js';
import { ApiClient } from '../../lib/client/api/client.js';
import { uploadSession } from '../../lib/client/api/upload.js';

let srv: ServeProcess;
let next: ServeProcess | undefined;
let sid: string;
let socket: net.Socket | undefined;

beforeAll(async () => {
  srv = await startServeProcess();
  // ~12 MiB over 2 writers: more than the kernel's socket buffers hold, so a reader that stops reading
  // keeps its replay open.
  const dir = await generateSession(srv.workDir, 40_000, 2);
  sid = dir.split('/').pop()!;
  await uploadSession(dir, { client: new ApiClient({ url: srv.url, token: srv.admin }) });
}, 120_000);

afterAll(async () => {
  socket?.destroy();
  await next?.close();
  await srv?.close();
});

/** GETs the replay on a raw socket, reads the first bytes, then never reads again. Resolves with the status. */
function stalledReplay(): Promise<number> {
  return new Promise((resolve, reject) => {
    socket = net.connect(srv.port, '127.0.0.1', () => {
      socket!.write(
        `GET /v1/sessions/${sid}/replay HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer ${srv.admin}\r\n\r\n`,
      );
    });
    socket.once('data', (d: Buffer) => {
      socket!.pause();
      resolve(Number(/^HTTP\/1\.1 (\d{3})/.exec(d.toString('latin1'))?.[1] ?? 0));
    });
    socket.on('error', reject);
  });
}

describe('hansard serve on SIGTERM', () => {
  it('stops within its 5 s grace while a reader is stalled, says so, and releases the data directory', async () => {
    expect(await stalledReplay()).toBe(200);
    const start = Date.now();
    srv.signal('SIGTERM');
    const code = await Promise.race([srv.exited, new Promise((r) => setTimeout(() => r('running'), 15_000))]);
    const took = Date.now() - start;
    expect(
      code,
      `still running ${took} ms after SIGTERM:\n${srv.stdout()}\n${srv.stderr().slice(-1000)}`,
    ).toBe(0);
    // The grace period, then the close: ~5 s, well under 8 on a loaded machine.
    expect(took).toBeGreaterThanOrEqual(4_900);
    expect(took).toBeLessThan(8_000);
    expect(srv.stdout()).toContain('hansard serve stopping: waiting up to 5 s for 1 open request\n');
    expect(srv.stdout()).toContain(
      'hansard serve: 1 open request still running after 5 s: closed their connections\n',
    );
    expect(srv.stdout()).toMatch(/hansard serve stopped\n$/);

    // The lock is released: a new server starts on the same data directory and serves the session.
    next = await startServeProcess({ dataDir: srv.dataDir });
    const res = await fetch(`${next.url}/v1/sessions/${sid}/replay?raw=1`, {
      headers: { authorization: `Bearer ${next.admin}` },
    });
    expect(res.status).toBe(200);
    expect((await res.arrayBuffer()).byteLength).toBeGreaterThan(8 * 1024 * 1024);
  }, 60_000);

  it('stops at once when no request is open', async () => {
    const s = next!;
    const start = Date.now();
    s.signal('SIGTERM');
    expect(await s.exited).toBe(0);
    expect(Date.now() - start).toBeLessThan(3_000);
    expect(s.stdout()).toContain('hansard serve stopping\nhansard serve stopped\n');
  }, 30_000);
});
