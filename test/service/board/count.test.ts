/**
 * The board's session count is bounded (issue 17.6, lib/service/board/get.ts `BOARD_COUNT_MAX`): `getBoard`
 * over a real SQLite file says `total` exactly up to 1,000 sessions and `total: 1000, total_more: true`
 * past it; a session-bound token's board counts its own session only. The same `countSessions(atMost)`
 * contract holds on DynamoDB (test/store/contract/sessions.contract.ts, test/store/dynamo/board-page.test.ts).
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { newId } from '../../../lib/log/format/ids.js';
import { BOARD_COUNT_MAX, getBoard } from '../../../lib/service/board/get.js';
import type { ServiceContext } from '../../../lib/service/shared/context.js';
import { FsSegmentStore } from '../../../lib/store/fs/segment-store.js';
import { SqliteStateStore } from '../../../lib/store/sqlite/state-store.js';
import { advanceOf, at, tokenRecord } from '../../store/contract/records.js';

const tmp = mkdtempSync(join(tmpdir(), 'hansard-board-count-'));
let state: SqliteStateStore;
let first: string;

const ctxOf = (caller = tokenRecord('acme', { scopes: ['board'] })): ServiceContext => ({
  tenant: 'acme',
  caller,
  segments: new FsSegmentStore(join(tmp, 'segments')),
  state,
  now: () => new Date(Date.parse(at(5000))),
});

const add = async (n: number, from: number) => {
  for (let i = from; i < from + n; i++) {
    const sid = newId('s');
    first ??= sid;
    await state.advanceWriter('acme', sid, newId('w'), 0, advanceOf(0, 10, { lines: 1, when: i }));
  }
};

beforeAll(async () => {
  state = new SqliteStateStore(join(tmp, 'state.sqlite'));
  await add(BOARD_COUNT_MAX - 1, 0);
}, 120_000);
afterAll(async () => {
  await state?.close();
  rmSync(tmp, { recursive: true, force: true });
});

describe('the board count', () => {
  it('is exact up to BOARD_COUNT_MAX and says "more" past it, a page of 5 at a time', async () => {
    expect(BOARD_COUNT_MAX).toBe(1000);
    let board = await getBoard({ ctx: ctxOf(), limit: 5 });
    expect(board).toMatchObject({ total: 999, total_more: false });
    expect(board.sessions).toHaveLength(5);
    await add(1, 999);
    board = await getBoard({ ctx: ctxOf(), limit: 5 });
    expect(board).toMatchObject({ total: 1000, total_more: false });
    await add(1, 1000);
    board = await getBoard({ ctx: ctxOf(), limit: 5 });
    expect(board).toMatchObject({ total: 1000, total_more: true });
    expect(await state.countSessions('acme')).toBe(1001);
    await add(500, 1001);
    expect(await getBoard({ ctx: ctxOf(), limit: 5 })).toMatchObject({ total: 1000, total_more: true });
  }, 120_000);

  it("counts a session-bound token's own session only, never 'more'", async () => {
    const bound = await getBoard({ ctx: ctxOf(tokenRecord('acme', { scopes: ['board'], session: first })) });
    expect(bound).toMatchObject({ total: 1, total_more: false });
    expect(bound.sessions.map((s) => s.sid)).toEqual([first]);
  });
});
