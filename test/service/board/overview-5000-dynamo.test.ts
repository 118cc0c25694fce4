/**
 * The overview over 5,000 sessions on DynamoDB Local (issue 14.1): the session items, written as the
 * store writes them (~700 bytes each with a full title and five people, so ~3.5 MB: the listing's Query
 * must follow several 1 MB pages), are all listed; the overview answers them; the times are printed for
 * the record (DynamoDB Local in a JVM on this machine, not AWS; no timing assertion).
 */
import { BatchWriteCommand, DynamoDBDocumentClient } from '@aws-sdk/lib-dynamodb';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type DynamoLocal, startDynamoLocal } from '../../../harness/dynamodb-local.js';
import { newId } from '../../../lib/log/format/ids.js';
import { getOverview } from '../../../lib/service/board/overview.js';
import type { ServiceContext } from '../../../lib/service/shared/context.js';
import { gsiKeys, keys } from '../../../lib/store/dynamo/schema.js';
import { DynamoStateStore } from '../../../lib/store/dynamo/state-store.js';
import { FsSegmentStore } from '../../../lib/store/fs/segment-store.js';
import { at, tokenRecord } from '../../store/contract/records.js';
import { tmpDirs } from '../../support/tmp.js';

const SESSIONS = 5000;
const dirs = tmpDirs('hansard-overview-dynamo-');
const STATES = ['working', 'blocked', 'needs_review', 'done'];
let local: DynamoLocal;
let state: DynamoStateStore;
let ctx: ServiceContext;

beforeAll(async () => {
  local = await startDynamoLocal();
  const table = await local.freshTable();
  state = new DynamoStateStore({ tableName: table, client: local.client });
  const doc = DynamoDBDocumentClient.from(local.client);
  const items = Array.from({ length: SESSIONS }, (_, i) => {
    const sid = newId('s');
    const updated = at(i);
    return {
      ...keys.session('acme', sid),
      ...gsiKeys.board('acme', updated, sid),
      tenant: 'acme',
      sid,
      created_at: updated,
      updated_at: updated,
      writers: 1,
      lines: 5,
      bytes: 500,
      title: `prompt ${i}: ${'make the checkout flow handle a declined card and say why '.repeat(3)}`.slice(
        0,
        160,
      ),
      title_at: i,
      people: [0, 1, 2, 3, 4].map((k) => `person-${(i + k * 11) % 40}@example.com`),
      agents: [`agent-${i % 6}`],
      summary_rev: 1,
      ...(i % 3 === 0
        ? {}
        : {
            state: STATES[i % 4],
            state_since: at(i + 1),
            note: `note ${i}`,
            reported_at: at(i + 1),
            first_note: `note ${i}`,
          }),
    };
  });
  for (let i = 0; i < items.length; i += 25) {
    const batch = items.slice(i, i + 25).map((Item) => ({ PutRequest: { Item } }));
    let unprocessed: Record<string, unknown[]> | undefined = { [table]: batch };
    while (unprocessed && Object.keys(unprocessed).length > 0) {
      const res = await doc.send(new BatchWriteCommand({ RequestItems: unprocessed as never }));
      unprocessed = res.UnprocessedItems as Record<string, unknown[]> | undefined;
    }
  }
  ctx = {
    tenant: 'acme',
    caller: tokenRecord('acme', { scopes: ['board'] }),
    segments: new FsSegmentStore(dirs.make()),
    state,
    now: () => new Date(Date.parse(at(SESSIONS + 60))),
  };
}, 180_000);

afterAll(async () => {
  await state?.close();
  await local?.stop();
});

describe(`the overview of ${SESSIONS} sessions on DynamoDB Local`, () => {
  it('lists every session across the Query pages, answers the overview, and prints the times', async () => {
    const all = await state.listSessionSummaries('acme');
    expect(all).toHaveLength(SESSIONS);
    expect(new Set(all.map((s) => s.sid)).size).toBe(SESSIONS);
    const bytes = JSON.stringify(all).length;
    expect(bytes).toBeGreaterThan(2 * 1024 * 1024);
    const o = await getOverview({ ctx, maxAgeMs: 0 });
    expect(o).toMatchObject({ total: SESSIONS, matched: SESSIONS, pages: 100 });
    expect(o.rows[0]!.group).toBe('blocked');

    const times: number[] = [];
    for (let i = 0; i < 5; i++) {
      const t = performance.now();
      await state.listSessionSummaries('acme');
      times.push(performance.now() - t);
    }
    const t = performance.now();
    await getOverview({ ctx, maxAgeMs: 0 });
    const overviewMs = Math.round(performance.now() - t);
    times.sort((a, b) => a - b);
    console.log(
      `overview of ${SESSIONS} sessions on DynamoDB Local (~${Math.round(bytes / 1024)} KB of summaries): ` +
        `listSessionSummaries median ${Math.round(times[2]!)} ms, getOverview page 1 ${overviewMs} ms`,
    );
  }, 120_000);
});
