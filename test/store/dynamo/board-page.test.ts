/**
 * What a board page reads on DynamoDB (issue 17.6, docs/deploy.md "What a board page reads"): `getBoard`
 * over `DynamoStateStore` on DynamoDB Local, every request counted by kind. The rows' state, note and
 * agents come from the session entries the listing read (their copy of the latest report); a status
 * record is read only for a session whose verdicts this process has not computed for that version and
 * those bytes, and no session's writers are read at all.
 */
import { DynamoDBClient } from '@aws-sdk/client-dynamodb';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type DynamoLocal, startDynamoLocal } from '../../../harness/dynamodb-local.js';
import { newId } from '../../../lib/log/format/ids.js';
import { getBoard } from '../../../lib/service/board/get.js';
import type { ServiceContext } from '../../../lib/service/shared/context.js';
import { DynamoStateStore } from '../../../lib/store/dynamo/state-store.js';
import { FsSegmentStore } from '../../../lib/store/fs/segment-store.js';
import { tmpDirs } from '../../support/tmp.js';
import { advanceOf, at, tokenRecord } from '../contract/records.js';

const dirs = tmpDirs('hansard-board-page-');
let local: DynamoLocal;
beforeAll(async () => {
  local = await startDynamoLocal();
}, 120_000);
afterAll(async () => {
  await local?.stop();
});

/** A string attribute of a request's input, marshalled by the document client yet or not. */
function textOf(v: unknown): string {
  return typeof v === 'string' ? v : ((v as { S?: string } | undefined)?.S ?? '');
}

describe('a board page on DynamoDB (issue 17.6)', () => {
  it('reads no status record and no writers per session once its verdicts are known', async () => {
    const reads: string[] = [];
    const client = new DynamoDBClient(local.config);
    client.middlewareStack.add(
      (next, context) => async (args) => {
        const input = args.input as {
          Key?: Record<string, unknown>;
          IndexName?: string;
          ExpressionAttributeValues?: Record<string, unknown>;
        };
        if (context.commandName === 'GetItemCommand')
          reads.push(`get ${textOf(input.Key?.sk).split('#')[0]}`);
        if (context.commandName === 'QueryCommand') {
          const pk = textOf(
            input.ExpressionAttributeValues?.[':pk'] ?? input.ExpressionAttributeValues?.[':g'],
          );
          reads.push(`query ${input.IndexName ?? 'table'} ${pk.replace(/s_[0-9A-Z]{26}/, '{sid}')}`);
        }
        return next(args);
      },
      { step: 'initialize', name: 'countReads' },
    );
    const state = new DynamoStateStore({ tableName: await local.freshTable(), client });
    const sids = Array.from({ length: 12 }, () => newId('s'));
    for (const [i, sid] of sids.entries()) {
      await state.mergeSessionSummary(
        'acme',
        sid,
        { title: null, people: [], agents: [`agent-${i}`] },
        at(i),
      );
      await state.advanceWriter(
        'acme',
        sid,
        newId('w'),
        0,
        advanceOf(0, 10, { lines: 1, when: i, agent: `agent-${i}` }),
      );
      if (i % 3 !== 0) {
        await state.putStatus({
          tenant: 'acme',
          sid,
          reports: [
            {
              state: 'working',
              note: `note ${i}`,
              events: [],
              events_dropped: 0,
              reported_by: 'tok_X',
              reported_at: at(i + 100),
            },
          ],
          dropped_events: 0,
          dropped_reports: 0,
          version: 1,
        });
      }
    }
    const ctx: ServiceContext = {
      tenant: 'acme',
      caller: tokenRecord('acme', { scopes: ['board'] }),
      segments: new FsSegmentStore(dirs.make()),
      state,
      now: () => new Date(Date.parse(at(1000))),
    };
    const page = async () => {
      reads.length = 0;
      const board = await getBoard({ ctx, limit: 10 });
      return { board, reads: [...reads] };
    };
    const first = await page();
    expect(first.board.total).toBe(12);
    expect(first.board.sessions).toHaveLength(10);
    for (const row of first.board.sessions) {
      const i = sids.indexOf(row.sid);
      expect(row.agents).toEqual([`agent-${i}`]);
      expect(row).toMatchObject(
        i % 3 === 0
          ? { state: null, note: null, evidence: null }
          : { state: 'working', note: `note ${i}`, reported_at: at(i + 100), evidence: { supported: 0 } },
      );
    }
    const reported = first.board.sessions.filter((r) => r.state !== null).length;
    // cold: one status record per reported session on the page (and that report's own session read)
    expect(first.reads.filter((r) => r === 'get STATUS')).toHaveLength(reported);

    const second = await page();
    expect(second.board.sessions).toEqual(first.board.sessions);
    // warm: the 9 board partitions, a count of the tenant's sessions, one work query per row; no Get
    expect(second.reads.filter((r) => r.startsWith('get '))).toEqual([]);
    expect(second.reads.filter((r) => r.startsWith('query gsi1 T#acme#BOARD'))).toHaveLength(9);
    expect(second.reads.filter((r) => r === 'query table T#acme')).toHaveLength(1);
    expect(second.reads.filter((r) => r.startsWith('query gsi1 T#acme#WORKS#'))).toHaveLength(10);
    expect(second.reads.filter((r) => r.startsWith('query table T#acme#S#'))).toEqual([]);
    expect(second.reads).toHaveLength(9 + 1 + 10);

    // a new report (a new version) is read once, then known again
    const sid = first.board.sessions.find((r) => r.state !== null)!.sid;
    const status = (await state.getStatus('acme', sid))!;
    await state.putStatus({
      ...status,
      reports: [
        ...status.reports,
        { ...status.reports[0]!, state: 'blocked', note: 'waiting', reported_at: at(900) },
      ],
      version: 2,
    });
    const third = await page();
    expect(third.board.sessions[0]).toMatchObject({ sid, state: 'blocked', note: 'waiting' });
    expect(third.reads.filter((r) => r === 'get STATUS')).toHaveLength(1);
    client.destroy();
  });
  it('counts the tenant no further than atMost + 1 items: the count reads a bounded number of items', async () => {
    const counted: Array<{ limit: number | undefined; count: number }> = [];
    const client = new DynamoDBClient(local.config);
    client.middlewareStack.add(
      (next, context) => async (args) => {
        const out = await next(args);
        const input = args.input as { Select?: string; Limit?: number };
        if (context.commandName === 'QueryCommand' && input.Select === 'COUNT') {
          counted.push({ limit: input.Limit, count: (out.output as { Count?: number }).Count ?? 0 });
        }
        return out;
      },
      { step: 'initialize', name: 'countCounts' },
    );
    const state = new DynamoStateStore({ tableName: await local.freshTable(), client });
    for (let i = 0; i < 12; i++) {
      await state.advanceWriter('acme', newId('s'), newId('w'), 0, advanceOf(0, 10, { lines: 1, when: i }));
    }
    expect(await state.countSessions('acme')).toBe(12);
    expect(counted.map((c) => c.limit)).toEqual([undefined]);
    for (const [atMost, want] of [
      [4, 5],
      [11, 12],
      [12, 12],
    ] as const) {
      counted.length = 0;
      expect(await state.countSessions('acme', atMost)).toBe(want);
      // never more items counted than atMost + 1, and no request asks for more
      expect(counted.reduce((sum, c) => sum + c.count, 0)).toBe(want);
      for (const c of counted) expect(c.limit).toBeLessThanOrEqual(atMost + 1);
    }
  }, 60_000);
});
