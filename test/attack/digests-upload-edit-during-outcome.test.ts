/**
 * What `hansard upload` (lib/client/api/upload.ts) does when its file changes while it runs (issue 15 attack
 * 2, the fix of test/attack/digests-upload-edit-during.test.ts): a rewrite in place stops it with a
 * sentence naming the byte after which nothing was sent, and the server holds exactly the old file's
 * bytes up to there; a writer appending to the file meanwhile (the normal case) is no change.
 *
 * Real server on loopback (test/support/server.ts), the real client (`uploadSession`), real files.
 */
import { appendFileSync, mkdirSync, mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { uploadSession } from '../../lib/client/api/upload.js';
import { openSession } from '../../lib/log/index.js';
import { EditingClient } from '../support/editing-client.js';
import { request } from '../support/http.js';
import { useServer } from '../support/server.js';

const srv = useServer({ tokens: { ingest: ['ingest', 'read'] } });

/** A ~3 MiB segment of 1 KB lines (more than the read stream's 1 MiB buffer). */
function bigSession() {
  mkdirSync(srv.workDir, { recursive: true });
  const w = openSession(mkdtempSync(join(srv.workDir, 'edit-outcome-')), { agent: 'coder' });
  for (let i = 0; i < 3000; i++) w.message({ user_id: 'ann', text: `line ${i} ${'x'.repeat(1000)}` });
  w.close();
  return w;
}

async function stored(sid: string, w: string): Promise<Buffer> {
  const seg = await request(srv, 'GET', `/v1/sessions/${sid}/writers/${w}/segment`, {
    token: srv.tokens.ingest,
  });
  return seg.bytes;
}

describe('upload of a file that changes while it runs (issue 15 attack 2)', () => {
  it('stops on a rewrite in place, naming the byte; the server holds the old bytes up to it', async () => {
    const w = bigSession();
    const original = readFileSync(w.path);
    const edited = Buffer.from(original.toString('utf8').replace('line 0 xxxxxxxxxx', 'line 0 '));
    const client = new EditingClient(srv.url, srv.tokens.ingest, 2, () => writeFileSync(w.path, edited));
    const err = await uploadSession(w.dir, { client, maxChunkBytes: 64 * 1024 }).then(
      () => null,
      (e: Error) => e,
    );
    expect(err?.name).toBe('FailureError');
    const m =
      /changed while it was being uploaded: nothing after byte (\d+) was sent.*run hansard upload again/.exec(
        err?.message ?? '',
      );
    expect(m, err?.message).not.toBeNull();
    const held = await stored(w.sid, w.w);
    expect(held.length).toBe(Number(m![1]));
    // The chunks acknowledged before the rewrite: the old file's bytes, at least the two POSTed.
    expect(held.length).toBeGreaterThanOrEqual(2 * 60 * 1024);
    expect(held.equals(original.subarray(0, held.length))).toBe(true);
  }, 60_000);

  it('goes on when a writer appends to the file meanwhile', async () => {
    const w = bigSession();
    const extra = `${JSON.stringify({ appended: true, pad: 'y'.repeat(200) })}\n`;
    const client = new EditingClient(srv.url, srv.tokens.ingest, 2, () => appendFileSync(w.path, extra));
    const r = await uploadSession(w.dir, { client, maxChunkBytes: 64 * 1024 });
    const now = readFileSync(w.path);
    const held = await stored(w.sid, w.w);
    // This run meant to send the file as it was when it started; the appended line waits or is sent.
    expect(held.equals(now.subarray(0, held.length))).toBe(true);
    expect(held.length).toBeGreaterThanOrEqual(now.length - extra.length);
    expect(r.segments[0]!.length).toBe(held.length);
  }, 60_000);
});
