/**
 * toByteStream's idle limit (lib/http/stream.ts `idleMs`): a reader that asks for nothing more for the
 * limit gets its body aborted, its source closed and `onClose` run; a reader that keeps taking batches,
 * however slowly within the limit, and a source that is itself slow, are never cut off.
 */
import { describe, expect, it } from 'vitest';
import { StreamIdleError, toByteStream } from '../../lib/http/stream.js';

const BATCH = 64 * 1024;
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/** `batches` batches of 64 KiB, each produced after `delayMs`; `state.closed` once its cleanup ran. */
function source(batches: number, delayMs = 0) {
  const state = { closed: false, produced: 0 };
  async function* gen() {
    try {
      for (let i = 0; i < batches; i++) {
        if (delayMs) await sleep(delayMs);
        state.produced++;
        yield 'x'.repeat(BATCH);
      }
    } finally {
      state.closed = true;
    }
  }
  return { iterable: gen(), state };
}

describe('toByteStream with idleMs', () => {
  it('aborts a body whose reader stops: the source is closed, onClose runs once, the next read fails', async () => {
    const { iterable, state } = source(100);
    let closes = 0;
    const idles: StreamIdleError[] = [];
    const body = toByteStream(iterable, {
      idleMs: 100,
      onClose: () => closes++,
      onIdle: (err) => {
        idles.push(err);
        return false;
      },
    });
    const reader = body.getReader();
    expect((await reader.read()).value?.byteLength).toBe(BATCH);
    await sleep(300);
    expect(idles).toHaveLength(1);
    expect(idles[0]).toBeInstanceOf(StreamIdleError);
    expect(state.closed).toBe(true);
    expect(state.produced).toBeLessThan(100);
    expect(closes).toBe(1);
    await expect(reader.read()).rejects.toBeInstanceOf(StreamIdleError);
    expect(closes).toBe(1);
  });

  it('leaves the body to the runtime when onIdle closed the connection, and never ends it as complete', async () => {
    const { iterable, state } = source(100);
    let closes = 0;
    const body = toByteStream(iterable, { idleMs: 100, onClose: () => closes++, onIdle: () => true });
    const reader = body.getReader();
    await reader.read();
    await sleep(300);
    expect(state.closed).toBe(true);
    expect(closes).toBe(1);
    // The runtime cancels it (node-server does when the connection closes); a read would fail, not end.
    await expect(reader.read()).rejects.toBeInstanceOf(StreamIdleError);
  });

  it('gives every byte to a reader that pauses less than idleMs between batches', async () => {
    const { iterable, state } = source(8);
    let idle = false;
    const body = toByteStream(iterable, {
      idleMs: 200,
      onIdle: () => {
        idle = true;
        return false;
      },
    });
    const reader = body.getReader();
    let bytes = 0;
    for (;;) {
      const { done, value } = await reader.read();
      if (done) break;
      bytes += value.byteLength;
      await sleep(100);
    }
    expect(bytes).toBe(8 * BATCH);
    expect(idle).toBe(false);
    expect(state.closed).toBe(true);
  });

  it('does not count the time the source takes to produce a batch', async () => {
    const { iterable } = source(3, 250);
    const body = toByteStream(iterable, { idleMs: 100, onIdle: () => false });
    const bytes = (await new Response(body).arrayBuffer()).byteLength;
    expect(bytes).toBe(3 * BATCH);
  });

  it('has no limit without idleMs', async () => {
    const { iterable, state } = source(4);
    const reader = toByteStream(iterable).getReader();
    await reader.read();
    await sleep(200);
    expect(state.closed).toBe(false);
    let bytes = BATCH;
    for (let r = await reader.read(); !r.done; r = await reader.read()) bytes += r.value.byteLength;
    expect(bytes).toBe(4 * BATCH);
  });
});
