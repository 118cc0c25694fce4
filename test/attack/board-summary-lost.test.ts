/**
 * The session summary after a failed summary write (lib/service/ingest/ingest-chunk.ts `noteSummary`): the chunk is
 * acknowledged first (good: a summary fault never fails or un-acknowledges a chunk), the failure is logged,
 * and the summary is "left for the session's next chunk to mend". But a chunk's delta holds only what that
 * chunk showed, and a retry of the acknowledged chunk is answered from the index without redoing it: the
 * first prompt (the board's title), the people and the agent of the first chunk are never written. The
 * next message that arrives becomes the title, or, when none does, the session has no title and its
 * person is not found by `/people/{user_id}` or `?person=` for good. Over real HTTP, local stores whose
 * summary write fails once (a full disk, a DynamoDB throttle, five lost merge races).
 *
 * Fixed: the summary is merged before the chunk is indexed (ADR 4): the failed merge fails the chunk (here
 * 507 `insufficient_storage`, nothing indexed) and the client's retry writes the chunk and its summary.
 */
import { mkdirSync, mkdtempSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it, vi } from 'vitest';
import { openSession } from '../../lib/log/index.js';
import { request } from '../support/http.js';
import { useSummaryFaultServer } from '../support/summary-fault-server.js';

let failNext = 0;
const srv = useSummaryFaultServer(() => {
  if (failNext === 0) return false;
  failNext -= 1;
  return true;
});

describe('a summary write that failed once', () => {
  // FAULT: when the summary write of a session's first chunk fails, its title (first prompt) and people are never written: later chunks carry only their own delta and the retry is answered from the index.
  it('is mended by a later chunk or a retry', async () => {
    const warn = vi.spyOn(console, 'warn').mockImplementation(() => {});
    try {
      mkdirSync(srv.workDir, { recursive: true });
      const s = openSession(mkdtempSync(join(srv.workDir, 'lost-')), { agent: 'coder' });
      const m = s.message({ user_id: 'alice', text: 'Fix the login redirect loop' });
      const first = readFileSync(s.path);
      const t = s.turnStart({ context_message_ids: [m.id] });
      s.output({ turn_id: t.id, text: 'done' });
      s.turnEnd({ turn_id: t.id, status: 'completed' });
      s.end();
      const all = readFileSync(s.path);
      const post = (offset: number, body: Buffer) =>
        request(srv, 'POST', `/v1/sessions/${s.sid}/writers/${s.w}/chunks?offset=${offset}`, {
          token: srv.admin,
          body,
        });

      failNext = 1;
      // The summary could not be written: not a 2xx, nothing indexed, and the answer says to send it again.
      const failed = await post(0, first);
      expect(failed.status, failed.text).toBe(507);
      expect(failed.json.error.code).toBe('insufficient_storage');
      expect(failed.json.error.details.expected_offset).toBe(0);
      const writer = await request(srv, 'GET', `/v1/sessions/${s.sid}/writers/${s.w}`, { token: srv.admin });
      expect(writer.json?.length ?? 0).toBe(0);
      expect((await post(0, first)).status).toBe(201); // the client's retry: the chunk and its summary
      expect((await post(first.length, all.subarray(first.length))).status).toBe(201); // the rest

      const ov = await request(srv, 'GET', '/v1/board/overview', { token: srv.tokens.board });
      expect(ov.json.rows[0].title).toBe('Fix the login redirect loop');
      expect(ov.json.rows[0].people).toEqual(['alice']);
      const alice = await request(srv, 'GET', '/v1/board/overview?person=alice', { token: srv.tokens.board });
      expect(alice.json.matched).toBe(1);
    } finally {
      warn.mockRestore();
    }
  });
});
