/**
 * An open board whose sign-in ended (issue 14 finding 1): `hansard serve` revokes the previous board link
 * at each start, so after a restart the page's cookie is refused (401). The page must say so plainly with
 * a link to sign in again and stop reconnecting, over server-sent events and over the poll; a restart
 * that keeps the sign-in still reconnects (test/board/overview-live.browser.test.ts). Debian's Chromium,
 * real HTTP on loopback, the local stores.
 */
import type { Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { browsers } from '../support/browser.js';
import { type BoardFixture, startBoard } from './overview-fixture.js';

let sse: BoardFixture;
let poll: BoardFixture;
const open = browsers();

/** A signed-in page of `f`, and the live requests (stream or poll) it makes, as they happen. */
async function boardPage(f: BoardFixture): Promise<{ page: Page; live: string[] }> {
  const ctx = await open.fresh();
  await ctx.addCookies([{ name: 'hansard_board', value: f.board, url: f.base }]);
  const page = ctx.pages()[0] ?? (await ctx.newPage());
  const live: string[] = [];
  page.on('request', (r) => {
    const path = new URL(r.url()).pathname;
    if (path === '/board/events' || path === '/board/fragment') live.push(path);
  });
  await page.goto(`${f.base}/`);
  return { page, live };
}

/** Stops `f`, revokes the board token the pages' cookies hold (as `hansard serve` does), starts it again. */
async function restartRevoked(f: BoardFixture): Promise<void> {
  await f.stop();
  const tokens = await f.stores.state.listTokens('local');
  const board = tokens.filter((t) => t.scopes.length === 1 && t.scopes[0] === 'board' && !t.revoked_at);
  expect(board).toHaveLength(1);
  await f.stores.state.revokeToken('local', board[0]!.id, new Date().toISOString());
  await f.start();
}

const SIGNED_OUT =
  'Signed out (the server restarted or the sign-in ended): sign in again (or open the new board link the server printed)';

async function expectSignedOut(page: Page, live: string[], path: string, settleMs: number) {
  await page.waitForSelector('#live-status[data-state="signedout"]', { timeout: 15_000 });
  expect(await page.textContent('#live-status')).toBe(SIGNED_OUT);
  // the link leads back to this view once signed in
  expect(await page.getAttribute('#live-status a', 'href')).toMatch(/^\/login\?next=%2F/);
  // no Sign out button while signed out
  expect(await page.isVisible('form[action="/logout"] button')).toBe(false);
  // Then it stops: at most one more attempt already under way, none after.
  const at = live.filter((p) => p === path).length;
  await page.waitForTimeout(settleMs);
  expect(live.filter((p) => p === path).length - at).toBeLessThanOrEqual(1);
  expect(await page.textContent('#live-status')).toBe(SIGNED_OUT);
}

beforeAll(async () => {
  sse = await startBoard();
  poll = await startBoard({ live: 'poll' });
  for (const f of [sse, poll]) await f.record('claude-code', 'priya', 'fix the flaky upload test');
}, 60_000);

afterAll(async () => {
  await open.closeAll();
  await sse?.close();
  await poll?.close();
});

describe('an open board after a restart that signed it out', () => {
  it('over SSE: says it is signed out, links to /login, and stops reconnecting', async () => {
    const { page, live } = await boardPage(sse);
    await page.waitForSelector('#live-status[data-state="live"]');
    await restartRevoked(sse);
    await expectSignedOut(page, live, '/board/events', 6000);
    // Only a few stream attempts in all (the first, the one the restart dropped, the refused retries).
    expect(live.filter((p) => p === '/board/events').length).toBeLessThanOrEqual(4);
    await page.context().close();
  }, 40_000);

  it('over the poll: a 401 poll says the same and stops polling', async () => {
    const { page, live } = await boardPage(poll);
    await page.waitForSelector('#live-status[data-state="live"]');
    await restartRevoked(poll);
    await expectSignedOut(page, live, '/board/fragment', 11_000);
    await page.context().close();
  }, 60_000);
});
