/**
 * A client that goes away releases everything (issue 8 item 3), against `hansard serve` as its own
 * process on a real data directory: 300 replays, text replays, raw replays and segment downloads dropped
 * after their first bytes, and verifies, inspects and the board's timeline pages dropped mid-way, leave the
 * server's open descriptors (`/proc/<pid>/fd`) where they started, their token's replay slots free, and a
 * later replay answers every byte. Before the fix each dropped replay kept one segment file open per writer
 * (8 here), and a few hundred of them exhausted the descriptors; a dropped timeline page read on to its
 * end, dozens at once.
 */
import net from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { generateSession } from '../../bench/gen.js';
import { type ServeProcess, startServeProcess } from '../../harness/serve-process.js';
import { ApiClient } from '../../lib/client/api/client.js';
import { uploadSession } from '../../lib/client/api/upload.js';
import { listSegments, replayChunks, sessionDirSegments } from '../../lib/log/index.js';

const WRITERS = 8;
/** ms after which a verify or inspect is dropped: one of this session takes a few hundred. */
const DROP_MS = 30;
/** ms after which a board timeline page is dropped: one of this session takes about 100. */
const PAGE_DROP_MS = 10;
let srv: ServeProcess;
let sid: string;
let writers: string[];
let expected: Buffer;

beforeAll(async () => {
  srv = await startServeProcess();
  // ~12 MiB over 8 writers: far more than a first batch, so every dropped replay is mid-way.
  const dir = await generateSession(srv.workDir, 40_000, WRITERS);
  sid = dir.split('/').pop()!;
  writers = listSegments(dir).map((s) => s.w);
  await uploadSession(dir, { client: new ApiClient({ url: srv.url, token: srv.admin }) });
  let text = '';
  for await (const chunk of replayChunks(sessionDirSegments(dir))) text += chunk;
  expected = Buffer.from(text, 'utf8');
}, 120_000);

afterAll(async () => {
  await srv?.close();
});

/**
 * GETs `path` on a raw socket (as the admin: its bearer token, or with `cookie` the board's cookie) and
 * destroys it after `afterMs`, or after the first bytes when null. Resolves with the answer's status when
 * it came first, else null.
 */
function dropped(path: string, afterMs: number | null = null, cookie = false): Promise<number | null> {
  return new Promise((resolve) => {
    const auth = cookie ? `Cookie: hansard_board=${srv.admin}` : `Authorization: Bearer ${srv.admin}`;
    let timer: NodeJS.Timeout | undefined;
    const socket = net.connect(srv.port, '127.0.0.1', () => {
      socket.write(`GET ${path} HTTP/1.1\r\nHost: x\r\n${auth}\r\n\r\n`);
      if (afterMs !== null) {
        timer = setTimeout(() => {
          socket.destroy();
          resolve(null);
        }, afterMs);
      }
    });
    socket.once('data', (d: Buffer) => {
      clearTimeout(timer);
      socket.destroy();
      resolve(Number(/^HTTP\/1\.1 (\d{3})/.exec(d.toString('latin1'))?.[1] ?? 0));
    });
    socket.on('error', () => resolve(null));
  });
}

/** Polls the descriptor count until it is at most `limit` (closing a file follows the abort by a tick). */
async function fdsSettle(limit: number): Promise<number> {
  for (let i = 0; i < 100 && srv.openFds() > limit; i++) await new Promise((r) => setTimeout(r, 100));
  return srv.openFds();
}

async function fullReplay(): Promise<Buffer> {
  const res = await fetch(`${srv.url}/v1/sessions/${sid}/replay`, {
    headers: { authorization: `Bearer ${srv.admin}` },
  });
  expect(res.status).toBe(200);
  return Buffer.from(await res.arrayBuffer());
}

/** Request-log lines of `path` with `status` so far. */
const logged = (path: string, status: number) =>
  srv
    .stderr()
    .split('\n')
    .filter((l) => l.startsWith(`GET ${path} ${status} `)).length;

describe('hansard serve, after clients drop their whole-session reads', () => {
  it('300 dropped replays and segment downloads leave the descriptors where they started, and the next replay answers every byte', async () => {
    expect((await fullReplay()).equals(expected)).toBe(true); // warm: what a first replay loads stays
    const base = srv.openFds();
    const paths = [
      `/v1/sessions/${sid}/replay`,
      `/v1/sessions/${sid}/replay?format=text`,
      `/v1/sessions/${sid}/replay?raw=1`,
      ...writers.slice(0, 2).map((w) => `/v1/sessions/${sid}/writers/${w}/segment`),
    ];
    let refused = 0;
    for (let i = 0; i < 300; i++) {
      const status = await dropped(paths[i % paths.length]!);
      // The server may read the next request before it sees the last one's close: its slot comes back then.
      if (status === 429 && refused++ < 1000) {
        await new Promise((r) => setTimeout(r, 10));
        i -= 1;
        continue;
      }
      expect(status).toBe(200);
    }
    // Before the fix: 8 more per dropped replay (one per writer), 1,800 here.
    expect(await fdsSettle(base + 2)).toBeLessThanOrEqual(base + 2);
    // Every slot came back: the cap's worth (4) at once, each in full.
    const four = await Promise.all(Array.from({ length: 4 }, fullReplay));
    for (const body of four) expect(body.equals(expected)).toBe(true);
    expect(await fdsSettle(base + 2)).toBeLessThanOrEqual(base + 2);
  }, 120_000);

  it('a dropped verify or inspect stops (499 in the request log) and leaves no descriptor behind', async () => {
    const base = srv.openFds();
    for (const kind of ['verify', 'inspect'] as const) {
      const path = `/v1/sessions/${sid}/${kind}`;
      for (let i = 0; i < 10; i++) {
        const before = logged(path, 499);
        // A verify of this session takes a few hundred ms: dropped 30 ms in, it is mid-way.
        await dropped(path, DROP_MS);
        for (let t = 0; t < 100 && logged(path, 499) === before; t++) {
          await new Promise((r) => setTimeout(r, 50));
        }
        expect(
          logged(path, 499),
          `${kind} ${i}: the server never stopped it:\n${srv.stderr().slice(-600)}`,
        ).toBe(before + 1);
      }
    }
    expect(await fdsSettle(base + 2)).toBeLessThanOrEqual(base + 2);
    const res = await fetch(`${srv.url}/v1/sessions/${sid}/verify`, {
      headers: { authorization: `Bearer ${srv.admin}` },
    });
    expect(res.status).toBe(200);
    expect(((await res.json()) as { summary: { events: number } }).summary.events).toBe(40_000);
  }, 120_000);

  it('100 board timeline pages dropped mid-way stop (499 in the request log) and leave the descriptors where they started', async () => {
    const path = `/sessions/${sid}`;
    const page = () => fetch(`${srv.url}${path}`, { headers: { cookie: `hansard_board=${srv.admin}` } });
    const warm = await page(); // what a first page loads stays
    expect(warm.status).toBe(200);
    expect(await warm.text()).toContain('Load more rows');
    const base = srv.openFds();
    const outcomes = () => ({ 200: logged(path, 200), 429: logged(path, 429), 499: logged(path, 499) });
    const before = outcomes();
    let attempts = 0;
    let refused = 0;
    let peak = base;
    for (let i = 0; i < 100; i++) {
      peak = Math.max(peak, srv.openFds());
      // A page of this session takes about 100 ms (its corrections pass reads all 12 MiB): dropped 10 ms
      // in, it is mid-way.
      attempts += 1;
      const status = await dropped(path, PAGE_DROP_MS, true);
      // The server may read the next request before it sees the last one's close: its slot comes back then.
      if (status === 429 && refused++ < 1000) {
        await new Promise((r) => setTimeout(r, 10));
        i -= 1;
        continue;
      }
      expect(status, `page ${i} answered before it was dropped`).toBeNull();
    }
    // Before the fix every page read on to its end after its client had gone, 8 files each, many at once
    // (150 descriptors over the start here); now a page stops when dropped, and at most the cap's worth
    // (4) reads at any time.
    expect(peak).toBeLessThanOrEqual(base + 4 * WRITERS + 4);
    expect(await fdsSettle(base + 2)).toBeLessThanOrEqual(base + 2);
    // Each request is logged once: stopped mid-way (499; none before the fix, where every page ran to its
    // end). On a loaded machine a few may be logged otherwise: refused at the cap (429) or answered in full
    // (200) before the client's timer dropped them.
    const count = () => {
      const now = outcomes();
      return { 200: now[200] - before[200], 429: now[429] - before[429], 499: now[499] - before[499] };
    };
    let seen = count();
    for (let t = 0; t < 100 && seen[200] + seen[429] + seen[499] < attempts; t++) {
      await new Promise((r) => setTimeout(r, 50));
      seen = count();
    }
    expect(seen[200] + seen[429] + seen[499]).toBe(attempts);
    // What the fix changed is that a dropped page no longer reads on to its end (logged 200): refused at
    // the cap (429: nothing read) is as good as stopped, and a loaded machine refuses more of them.
    expect(
      seen[499] + seen[429],
      `pages not stopped: ${JSON.stringify(seen)}\n${srv.stderr().slice(-600)}`,
    ).toBeGreaterThanOrEqual(90);
    expect(seen[499], `pages not stopped: ${JSON.stringify(seen)}`).toBeGreaterThanOrEqual(50);
    // Every slot came back: the cap's worth (4) at once, each in full.
    const four = await Promise.all(Array.from({ length: 4 }, page));
    expect(four.map((r) => r.status)).toEqual([200, 200, 200, 200]);
    for (const r of four) expect(await r.text()).toContain('Load more rows');
  }, 120_000);
});
