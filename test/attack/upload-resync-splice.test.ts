/**
 * Attack on `hansard upload`'s refusal of a changed uploaded byte (issue 15 item 1, lib/client/api/upload.ts,
 * lib/client/api/upload-digests.ts; test/fixtures/cases/05b-*) through its resync path: while this upload runs,
 * another uploader (a second machine, a retry of an earlier run) sends the file's next line as it was,
 * and this copy of the file has that line changed. The server answers 409 `offset_mismatch` with a larger
 * offset, the upload jumps there in ITS file and goes on, without checking the bytes it skipped.
 *
 * Over real HTTP: the real client (`uploadSession`, the CLI's code) against the test server; the other
 * uploader is a direct POST made when this upload sends its first chunk.
 */
import { mkdirSync, mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { ApiClient } from '../../lib/client/api/client.js';
import { uploadSession } from '../../lib/client/api/upload.js';
import { openSession } from '../../lib/log/index.js';
import { request } from '../support/http.js';
import { useServer } from '../support/server.js';
import { postChunk } from '../support/stored.js';

const srv = useServer({ tokens: { ingest: ['ingest', 'read'] } });

/** A client whose first chunk POST is preceded by `before()` (the other uploader getting there first). */
class RacedClient extends ApiClient {
  private raced = false;
  constructor(
    url: string,
    token: string,
    private readonly before: () => Promise<void>,
  ) {
    super({ url, token });
  }
  override async request(method: string, path: string, init: Parameters<ApiClient['request']>[2] = {}) {
    if (!this.raced && method === 'POST' && path.includes('/chunks')) {
      this.raced = true;
      await this.before();
    }
    return super.request(method, path, init);
  }
}

describe('upload resync after another uploader', () => {
  // Was a FAULT (medium): line 4 of this file was changed (shorter) after another copy of it was uploaded by
  // someone else; this upload is told the server is ahead, jumps to the server's offset in its own file
  // (now mid-way through line 5), and sends the rest: the upload succeeds, and the server's segment gets
  // a fragment of line 5 as a line of its own (a malformed line spliced into an append-only segment).
  // The bytes between the offset it checked and the server's new one should be checked (digests) first.
  it('refuses to go on when the bytes another uploader sent are not this file', async () => {
    mkdirSync(srv.workDir, { recursive: true });
    const w = openSession(mkdtempSync(join(srv.workDir, 'race-')), { agent: 'coder' });
    w.message({ user_id: 'ann', text: 'one' });
    w.message({ user_id: 'ann', text: 'two' });
    w.message({ user_id: 'ann', text: 'the original text of line four' });
    w.message({ user_id: 'ann', text: 'five' });
    w.close();
    const original = readFileSync(w.path);
    const lines = original.toString('utf8').split('\n');
    const prefix = Buffer.from(`${lines.slice(0, 3).join('\n')}\n`);
    const line4 = Buffer.from(`${lines[3]}\n`);
    // What the server had before: the first three lines.
    expect((await postChunk(srv, srv.tokens.ingest, w.sid, w.w, 0, prefix)).status).toBe(201);
    // This copy's line 4 is changed (and shorter); the rest is as written.
    writeFileSync(w.path, original.toString('utf8').replace('the original text of line four', 'edited'));
    const client = new RacedClient(srv.url, srv.tokens.ingest, async () => {
      const other = await postChunk(srv, srv.tokens.ingest, w.sid, w.w, prefix.length, line4);
      expect(other.status).toBe(201);
    });
    await expect(uploadSession(w.dir, { client })).rejects.toThrow(/not the segment the server has/);
    // Whatever happened, the server's segment is whole lines of the original.
    const seg = await request(srv, 'GET', `/v1/sessions/${w.sid}/writers/${w.w}/segment`, {
      token: srv.tokens.ingest,
    });
    expect(original.subarray(0, seg.bytes.length).equals(seg.bytes)).toBe(true);
  });
});
