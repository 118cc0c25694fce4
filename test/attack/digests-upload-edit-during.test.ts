/**
 * Issue 15 attack 2 on `hansard upload` (lib/client/api/upload.ts): a file edited in place WHILE the upload
 * runs. The check of the uploaded bytes (upload-digests.ts) runs once, before sending; the chunks are
 * then cut from a read stream of the path. When, between two chunk POSTs, the file is rewritten with an
 * already-sent line shortened (an editor saving over it, `sed -i` is a rename and is safe, `>` is not),
 * the stream goes on at its byte position in the new contents: the server is sent the new file's bytes
 * after the old file's, shifted, and stores a segment that is neither (a line cut in the middle).
 *
 * Real server on loopback (test/support/server.ts), the real client (`uploadSession`, the CLI's code),
 * real files; the edit is made when the upload sends its second chunk.
 */
import { mkdirSync, mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { uploadSession } from '../../lib/client/api/upload.js';
import { openSession } from '../../lib/log/index.js';
import { EditingClient } from '../support/editing-client.js';
import { request } from '../support/http.js';
import { useServer } from '../support/server.js';

const srv = useServer({ tokens: { ingest: ['ingest', 'read'] } });

describe('upload of a file edited while it runs (issue 15 attack 2)', () => {
  it('never stores a line that is in neither version of the file', async () => {
    mkdirSync(srv.workDir, { recursive: true });
    const w = openSession(mkdtempSync(join(srv.workDir, 'edit-during-')), { agent: 'coder' });
    // ~3 MiB of 1 KB lines: more than the read stream's 1 MiB buffer, many 64 KiB chunks
    for (let i = 0; i < 3000; i++) w.message({ user_id: 'ann', text: `line ${i} ${'x'.repeat(1000)}` });
    w.close();
    const original = readFileSync(w.path);
    const edited = Buffer.from(original.toString('utf8').replace('line 0 xxxxxxxxxx', 'line 0 '));
    expect(edited.length).toBe(original.length - 10);
    const client = new EditingClient(srv.url, srv.tokens.ingest, 2, () => writeFileSync(w.path, edited));
    await uploadSession(w.dir, { client, maxChunkBytes: 64 * 1024 }).catch(() => {});
    const seg = await request(srv, 'GET', `/v1/sessions/${w.sid}/writers/${w.w}/segment`, {
      token: srv.tokens.ingest,
    });
    const known = new Set([...original.toString('utf8').split('\n'), ...edited.toString('utf8').split('\n')]);
    const stored = seg.bytes.toString('utf8').split('\n').filter(Boolean);
    const foreign = stored.filter((l) => !known.has(l));
    // Observed: a stored line that is in neither file (the old file's bytes up to the stream's 1 MiB
    // read, then the new file's from that position, 10 bytes further on).
    expect(foreign.map((l) => `${l.slice(0, 60)}… (${l.length} chars)`)).toEqual([]);
  }, 60_000);
});
