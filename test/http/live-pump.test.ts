/**
 * `pumpOverview` (lib/http/live.ts), the loop of one live board stream, against a stream that records
 * what it is sent: the region at once and on each change only, heartbeats between, and on the client's
 * going away an immediate stop (the wait cancelled, no timer left, no check and no render after).
 */
import type { SSEMessage, SSEStreamingApi } from 'hono/streaming';
import { describe, expect, it } from 'vitest';
import { DEFAULT_LIVE_TIMING, pumpOverview, type Snapshot } from '../../lib/http/live.js';

/** A stream that records its writes. */
function recorder() {
  const sent: (SSEMessage | string)[] = [];
  const stream = {
    aborted: false,
    closed: false,
    writeSSE: async (m: SSEMessage) => {
      sent.push(m);
    },
    write: async (s: string) => {
      sent.push(s);
      return stream;
    },
  };
  return { sent, stream: stream as unknown as SSEStreamingApi };
}

/** How many timers the process has pending. */
const timers = () => process.getActiveResourcesInfo().filter((r) => r === 'Timeout').length;

const fast = { ...DEFAULT_LIVE_TIMING, checkMs: 20, heartbeatMs: 1000, retryMs: 700 };

describe('pumpOverview', () => {
  it('sends the region at once (with retry), then only when the ETag changes', async () => {
    const { sent, stream } = recorder();
    const ac = new AbortController();
    let etag = 'a';
    let checks = 0;
    const next = async (): Promise<Snapshot> => {
      checks++;
      return { etag, html: async () => `<p>${etag}</p>` };
    };
    const run = pumpOverview(stream, next, fast, ac.signal, () => {});
    await new Promise((r) => setTimeout(r, 100));
    expect(sent).toEqual([{ event: 'overview', data: '<p>a</p>', id: 'a', retry: 700 }]);
    etag = 'b';
    await new Promise((r) => setTimeout(r, 60));
    expect(sent).toEqual([
      { event: 'overview', data: '<p>a</p>', id: 'a', retry: 700 },
      { event: 'overview', data: '<p>b</p>', id: 'b' },
    ]);
    expect(checks).toBeGreaterThan(3);
    ac.abort();
    await run;
  });

  it('sends a comment heartbeat after heartbeatMs without a write', async () => {
    const { sent, stream } = recorder();
    const ac = new AbortController();
    const run = pumpOverview(
      stream,
      async () => ({ etag: 'same', html: async () => 'x' }),
      { ...fast, heartbeatMs: 100 },
      ac.signal,
      () => {},
    );
    await new Promise((r) => setTimeout(r, 260));
    ac.abort();
    await run;
    expect(sent.filter((s) => s === ': heartbeat\n\n').length).toBeGreaterThanOrEqual(1);
    expect(sent.filter((s) => typeof s !== 'string')).toHaveLength(1);
  });

  it('stops at once when the client goes away: the wait is cancelled, no timer is left, nothing is checked after', async () => {
    const { stream } = recorder();
    const ac = new AbortController();
    let checks = 0;
    const before = timers();
    const run = pumpOverview(
      stream,
      async () => {
        checks++;
        return { etag: 'e', html: async () => 'x' };
      },
      { ...fast, checkMs: 60_000 },
      ac.signal,
      () => {},
    );
    await new Promise((r) => setTimeout(r, 30));
    expect(checks).toBe(1);
    expect(timers()).toBe(before + 1); // the minute's wait
    const t0 = Date.now();
    ac.abort();
    await run;
    expect(Date.now() - t0).toBeLessThan(50);
    expect(timers()).toBe(before);
    await new Promise((r) => setTimeout(r, 50));
    expect(checks).toBe(1);
  });

  it('renders and sends nothing when the client went away during a check', async () => {
    const { sent, stream } = recorder();
    const ac = new AbortController();
    let rendered = 0;
    await pumpOverview(
      stream,
      async () => {
        ac.abort(); // the client leaves while the overview is read
        return {
          etag: 'e',
          html: async () => {
            rendered++;
            return 'x';
          },
        };
      },
      fast,
      ac.signal,
      () => {},
    );
    expect(rendered).toBe(0);
    expect(sent).toEqual([]);
  });

  it('passes a failed check to onError and tries again at the next tick; ends after lifetimeMs', async () => {
    const { sent, stream } = recorder();
    const errors: unknown[] = [];
    let n = 0;
    const t0 = Date.now();
    await pumpOverview(
      stream,
      async () => {
        if (++n === 1) throw new Error('the store is busy');
        return { etag: 'e', html: async () => 'x' };
      },
      { ...fast, lifetimeMs: 150 },
      new AbortController().signal,
      (err) => errors.push(err),
    );
    expect(Date.now() - t0).toBeLessThan(400);
    expect(errors.map(String)).toEqual(['Error: the store is busy']);
    expect(sent).toHaveLength(1);
  });
});
