/**
 * `hansard serve` stopping with a board page open (issue 14.2): the page's live stream ends at once, so
 * the stop does not wait out its 5 s grace for a request that never finishes by itself (the page then
 * shows it is disconnected and reconnects to the next start). The server of lib/deploy/local-serve.ts, real HTTP.
 */
import { describe, expect, it } from 'vitest';
import { startRealServer } from '../support/server.js';

describe('hansard serve with a live board page open', () => {
  it('ends the stream and stops without waiting out the grace period', async () => {
    const srv = await startRealServer();
    const res = await fetch(`${srv.url}/board/events`, { headers: { cookie: `hansard_board=${srv.admin}` } });
    expect(res.status).toBe(200);
    const reader = res.body!.getReader();
    const first = new TextDecoder().decode((await reader.read()).value);
    expect(first).toMatch(/^event: overview\n/);
    const ended = (async () => {
      for (;;) if ((await reader.read()).done) return 'ended';
    })().catch(() => 'cut');
    const t0 = Date.now();
    await srv.close();
    const took = Date.now() - t0;
    expect(await ended).toBe('ended'); // a clean end of the stream, not a cut connection
    expect(took).toBeLessThan(1500);
    expect(srv.printed.join('\n')).not.toContain('still running');
    expect(srv.printed).toContain('hansard serve stopped');
  });
});
