/**
 * A replay, merge or corrections scan that stops early releases every segment it opened (issue 8 item 3):
 * a consumer that closes it (a client gone mid-replay), an aborted signal, or a failing segment. Real
 * segment files on disk, counted through this process's open descriptors (`/proc/self/fd`).
 */
import { mkdtempSync, readdirSync, readlinkSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { generateSession } from '../../bench/gen.js';
import {
  CorrectionIndex,
  mergeSegments,
  type ReplaySegment,
  replayChunks,
  replayRaw,
  sessionDirSegments,
  sessionDirSources,
} from '../../lib/log/index.js';

const WRITERS = 6;
let root: string;
let dir: string;

beforeAll(async () => {
  root = mkdtempSync(join(tmpdir(), 'hansard-abort-'));
  // ~6 MB over 6 writers: far more than one batch of the merge, so a replay is mid-way after one.
  dir = await generateSession(root, 24_000, WRITERS);
});
afterAll(() => rmSync(root, { recursive: true, force: true }));

/**
 * Descriptors of this process open on a file under the test's folder. Only those: the worker's other
 * descriptors (sockets, vitest's own files) come and go on their own and made a raw count flaky in CI.
 */
const openFds = () => {
  let n = 0;
  for (const fd of readdirSync('/proc/self/fd')) {
    try {
      if (readlinkSync(`/proc/self/fd/${fd}`).startsWith(root)) n++;
    } catch {
      // closed between the listing and the readlink
    }
  }
  return n;
};

/** Waits until the descriptor count is back to `base` (a destroyed stream closes its file a tick later). */
async function fdsBackTo(base: number): Promise<number> {
  for (let i = 0; i < 100 && openFds() > base; i++) await new Promise((r) => setTimeout(r, 10));
  return openFds();
}

describe('closing a replay early', () => {
  for (const kind of ['ndjson', 'text', 'raw'] as const) {
    it(`(${kind}) after its first chunk closes every segment file`, async () => {
      const base = await fdsBackTo(0); // whatever the last test or the set-up left open closes first
      const it =
        kind === 'raw'
          ? replayRaw(sessionDirSegments(dir))[Symbol.asyncIterator]()
          : replayChunks(sessionDirSegments(dir), kind)[Symbol.asyncIterator]();
      const first = await it.next();
      expect(first.done).toBe(false);
      // Mid-replay, every writer's segment is open.
      expect(openFds()).toBeGreaterThanOrEqual(base + WRITERS);
      await it.return?.(undefined);
      expect(await fdsBackTo(base)).toBe(base);
    });
  }

  it('a merge left with `break` closes every segment file', async () => {
    const base = await fdsBackTo(0); // whatever the last test or the set-up left open closes first
    let n = 0;
    for await (const _ of mergeSegments(sessionDirSources(dir))) if (++n === 10) break;
    expect(await fdsBackTo(base)).toBe(base);
  });
});

describe('an aborted signal', () => {
  it('stops a replay mid-way with an AbortError and closes every segment file', async () => {
    const base = await fdsBackTo(0); // whatever the last test or the set-up left open closes first
    const ac = new AbortController();
    const it = replayChunks(sessionDirSegments(dir), 'ndjson', { signal: ac.signal })[Symbol.asyncIterator]();
    expect((await it.next()).done).toBe(false);
    ac.abort();
    await expect(it.next()).rejects.toMatchObject({ name: 'AbortError' });
    expect(await fdsBackTo(base)).toBe(base);
  });

  it('given before the start reads nothing', async () => {
    const base = await fdsBackTo(0); // whatever the last test or the set-up left open closes first
    const ac = new AbortController();
    ac.abort();
    let opened = 0;
    const segments = sessionDirSegments(dir).map((s) => ({
      w: s.w,
      open: (chunk?: number, signal?: AbortSignal) => {
        opened += 1;
        return s.open(chunk, signal);
      },
    }));
    const it = replayChunks(segments, 'ndjson', { signal: ac.signal })[Symbol.asyncIterator]();
    await expect(it.next()).rejects.toMatchObject({ name: 'AbortError' });
    expect(opened).toBe(0);
    expect(await fdsBackTo(base)).toBe(base);
  });
});

/** A segment whose stream counts how often it was opened and closed, and yields slowly. */
function countedSegments(failing: number) {
  const counts = { opened: 0, closed: 0 };
  const segments: ReplaySegment[] = Array.from({ length: 8 }, (_, i) => ({
    w: `w_${String(i).padStart(26, '0')}`,
    open: () =>
      (async function* () {
        counts.opened += 1;
        try {
          for (let k = 0; k < 50; k++) {
            if (i === failing && k === 2) throw new Error('disk read failed');
            await new Promise((r) => setTimeout(r, 5));
            yield Buffer.from(`{"type":"note","k":${k}}\n`);
          }
        } finally {
          counts.closed += 1;
        }
      })(),
  }));
  return { counts, segments };
}

describe('the corrections scan', () => {
  it('rejects only once every concurrent read has stopped and closed, when one segment fails', async () => {
    const { counts, segments } = countedSegments(1);
    await expect(CorrectionIndex.scan(segments)).rejects.toThrow('disk read failed');
    expect(counts.opened).toBeGreaterThan(1);
    expect(counts.closed).toBe(counts.opened);
  });

  it('stops and closes every read when its signal is aborted', async () => {
    const { counts, segments } = countedSegments(-1);
    const ac = new AbortController();
    setTimeout(() => ac.abort(), 30);
    await expect(CorrectionIndex.scan(segments, ac.signal)).rejects.toMatchObject({ name: 'AbortError' });
    expect(counts.closed).toBe(counts.opened);
    expect(counts.opened).toBeLessThan(8);
  });
});
