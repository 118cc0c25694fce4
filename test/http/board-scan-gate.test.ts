/**
 * The board's timeline page waits its turn in the scan gate like every other whole-session pass (issue
 * 8.3, lib/service/shared/scan-gate.ts): with the gate's places (4) taken by verifies whose reads the segment
 * store holds, a page does not start reading until one of them is done. Real app on loopback, the real
 * filesystem store with a hold on its reads.
 */
import { describe, expect, it } from 'vitest';
import { openLocalStores } from '../../lib/deploy/local.js';
import { DEFAULT_SCANS_AT_ONCE } from '../../lib/service/shared/scan-gate.js';
import { FsSegmentStore } from '../../lib/store/fs/segment-store.js';
import type { ReadSegmentOptions, SegmentKey } from '../../lib/store/index.js';
import { request } from '../support/http.js';
import { writeSession } from '../support/segments.js';
import { useServer } from '../support/server.js';

/** The real store, whose reads wait for `release()` while held, counting the reads started. */
class HeldFs extends FsSegmentStore {
  started = 0;
  private held: Promise<void> | null = null;
  private let: () => void = () => {};

  hold(): void {
    this.held = new Promise((r) => {
      this.let = r;
    });
  }

  release(): void {
    this.held = null;
    this.let();
  }

  override async *readSegment(
    key: SegmentKey,
    end: number,
    start?: number,
    chunkBytes?: number,
    options?: ReadSegmentOptions,
  ): AsyncIterable<Uint8Array> {
    this.started++;
    if (this.held) await this.held;
    yield* super.readSegment(key, end, start, chunkBytes, options);
  }
}

let segments: HeldFs;
const srv = useServer({
  // A cap above the gate's size, so that one token fills the gate.
  deps: { limits: { maxConcurrentReplays: DEFAULT_SCANS_AT_ONCE + 2 } },
  stores: (dataDir) => {
    const local = openLocalStores(dataDir);
    segments = new HeldFs(dataDir);
    return { ...local, segments };
  },
});

async function until(what: string, cond: () => boolean): Promise<void> {
  for (let i = 0; i < 200 && !cond(); i++) await new Promise((r) => setTimeout(r, 10));
  expect(cond(), what).toBe(true);
}

describe('the scan gate and the board’s timeline page', () => {
  it('a page does not read while the gate is full, and shows once a place is free', async () => {
    const seg = writeSession(srv.workDir);
    const up = await request(srv, 'POST', `/v1/sessions/${seg.sid}/writers/${seg.w}/chunks?offset=0`, {
      token: srv.admin,
      body: seg.bytes,
    });
    expect(up.status, up.text).toBe(201);

    segments.hold();
    let verifies: Promise<number>[] = [];
    let page: Promise<number> | null = null;
    try {
      verifies = Array.from({ length: DEFAULT_SCANS_AT_ONCE }, () =>
        request(srv, 'GET', `/v1/sessions/${seg.sid}/verify`, { token: srv.admin }).then((a) => a.status),
      );
      // One writer: each verify holds its place in the gate on one read.
      await until('every verify started its read', () => segments.started === DEFAULT_SCANS_AT_ONCE);
      page = request(srv, 'GET', `/sessions/${seg.sid}`, {
        headers: { cookie: `hansard_board=${srv.admin}` },
      }).then((a) => a.status);
      await new Promise((r) => setTimeout(r, 300));
      // Before the fix the page read at once: 5 reads started.
      expect(segments.started).toBe(DEFAULT_SCANS_AT_ONCE);
    } finally {
      segments.release();
    }
    expect(await Promise.all(verifies)).toEqual(Array(DEFAULT_SCANS_AT_ONCE).fill(200));
    expect(await page).toBe(200);
    expect(segments.started).toBeGreaterThan(DEFAULT_SCANS_AT_ONCE);
  });
});
