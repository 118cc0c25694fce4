/**
 * The 503 `summary_not_updated` path (lib/service/ingest/ingest-chunk.ts `mergeSummaryOrFail`) claims "no chunk's
 * summary is lost for good": the client sends the same chunk again and the retry, answered 200 from the
 * index, redoes the merge. That holds only while the same client process retries the same bytes. When the
 * client gives up (its retries exhausted while the store is throttled or full) or dies (Ctrl-C, laptop
 * asleep) after the server stored the chunk, the next `hansard upload` asks the server how much it holds,
 * finds every byte there and sends nothing: the chunk's title, people and agent never reach the summary.
 * Over real HTTP, local stores whose summary merge fails for one upload.
 *
 * The case found a fault, now fixed (`Was a FAULT (fixed): …`).
 */
import { mkdirSync, mkdtempSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it, vi } from 'vitest';
import { ApiClient } from '../../lib/client/api/client.js';
import { uploadSession } from '../../lib/client/api/upload.js';
import { openSession } from '../../lib/log/index.js';
import { request } from '../support/http.js';
import { useSummaryFaultServer } from '../support/summary-fault-server.js';

let failing = false;
const srv = useSummaryFaultServer(() => failing);

describe('a summary merge that failed for a whole upload run', () => {
  // Was a FAULT (fixed): after `hansard upload` gives up on 503 summary_not_updated (or dies), the next upload sends nothing (the server holds every byte), so the session's title and people are never merged.
  it('is mended by the next `hansard upload` of the same directory', async () => {
    const warn = vi.spyOn(console, 'warn').mockImplementation(() => {});
    try {
      mkdirSync(srv.workDir, { recursive: true });
      const dir = mkdtempSync(join(srv.workDir, 'resume-'));
      const s = openSession(dir, { agent: 'coder' });
      s.message({ user_id: 'alice', text: 'Fix the login redirect loop' });
      s.end();
      const client = new ApiClient({ url: srv.url, token: srv.admin, retries: 1, minTimeoutMs: 1 });

      failing = true;
      // the store stays throttled for the run: the client's retries are exhausted
      await expect(uploadSession(s.dir, { client })).rejects.toThrow();
      failing = false;
      // the next run of `hansard upload` over the same directory
      const again = await uploadSession(s.dir, { client });
      expect(again.segments[0]!.length).toBeGreaterThan(0);

      const ov = await request(srv, 'GET', '/v1/board/overview', { token: srv.tokens.board });
      expect(ov.json.rows[0].title).toBe('Fix the login redirect loop');
      expect(ov.json.rows[0].people).toEqual(['alice']);
    } finally {
      warn.mockRestore();
    }
  });
});
