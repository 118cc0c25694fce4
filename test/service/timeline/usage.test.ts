/**
 * The timeline's usage per turn (issue 27 item 3, docs/usage.md): a turn's end row carries what its usage
 * records add up to, under the same rules as every total (a streamed message counted once, with its last
 * figures); a turn no source reported usage for says unknown (null), never 0; a usage note's row says
 * what it added. Real local stores, uploaded over HTTP (test/support/server.ts).
 */
import { beforeAll, describe, expect, it } from 'vitest';
import { openSession } from '../../../lib/log/index.js';
import type { ServiceContext } from '../../../lib/service/shared/context.js';
import { timelinePage } from '../../../lib/service/timeline/page.js';
import type { TimelineRow } from '../../../lib/service/timeline/schemas.js';
import { authenticate } from '../../../lib/service/tokens/create.js';
import { readLocal } from '../../support/segments.js';
import { useServer } from '../../support/server.js';
import { upload } from '../../support/stored.js';

const srv = useServer({ tokens: { board: ['board'] } });
let rows: TimelineRow[] = [];

const usageNote = (output: number) => ({
  import_kind: 'token_usage',
  usage_source: 'claude_message',
  message_id: 'msg_01',
  model: 'claude-sonnet-4-5',
  usage: {
    input_tokens: 1000,
    cache_read_input_tokens: 4000,
    cache_creation_input_tokens: 0,
    output_tokens: output,
  },
});

beforeAll(async () => {
  const s = openSession(srv.workDir, { agent: 'claude-code' });
  const m1 = s.message({ user_id: 'ana', text: 'fix the parser' });
  const t1 = s.turnStart({ context_message_ids: [m1.id] });
  s.note({ author: 'claude-code', text: 'usage (streamed, first)' }, { extra: usageNote(10) });
  s.note({ author: 'claude-code', text: 'usage (streamed, last)' }, { extra: usageNote(200) });
  s.turnEnd({ turn_id: t1.turn_id, status: 'completed' });
  const m2 = s.message({ user_id: 'ana', text: 'and the tests' });
  const t2 = s.turnStart({ context_message_ids: [m2.id] });
  s.turnEnd({ turn_id: t2.turn_id, status: 'completed' });
  s.end();
  await upload(srv, srv.tenant.admin, readLocal({ sid: s.sid, w: s.w, dir: s.dir, path: s.path }));
  const caller = await authenticate(srv.stores.state, srv.tokens.board, new Date());
  const ctx: ServiceContext = {
    tenant: 'local',
    caller,
    segments: srv.stores.segments,
    state: srv.stores.state,
    now: () => new Date(),
  };
  rows = (await timelinePage({ ctx, sid: s.sid, after: -1, limit: 100, person: null })).rows;
});

describe('usage on the timeline', () => {
  it('a turn’s end row has its usage, the streamed message counted once with its last figures', () => {
    const ends = rows.filter((r) => r.kind === 'turn_end');
    expect(ends).toHaveLength(2);
    // claude-sonnet-4-5: (5000 − 4000) × $3/M + 4000 × $0.30/M + 200 × $15/M = 3,000 + 1,200 + 3,000 µ$
    expect(ends[0]).toMatchObject({
      usage: {
        input_tokens: 5000,
        cache_read_tokens: 4000,
        output_tokens: 200,
        cost_usd: 0.0072,
        records: 1,
        models: ['claude-sonnet-4-5'],
      },
    });
  });

  it('a turn no source reported usage for is unknown, not zero', () => {
    const ends = rows.filter((r) => r.kind === 'turn_end');
    expect(ends[1]).toMatchObject({ usage: null });
  });

  it('each usage note says what it added: the repeat replaces the first', () => {
    const notes = rows.filter((r) => r.kind === 'note');
    expect(notes.map((n) => (n.kind === 'note' ? [n.usage?.output_tokens, n.usage?.records] : null))).toEqual(
      [
        [10, 1],
        [190, 0], // +200 −10: the same message, replaced
      ],
    );
  });
});
