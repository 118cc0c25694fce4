/**
 * A deployment's chunk limit (issue 4: 4 MiB behind API Gateway): advertised on /healthz, enforced by
 * ingest, and followed by the CLI's upload, which then needs more, smaller chunks.
 */
import { describe, expect, it } from 'vitest';
import { ApiClient } from '../../lib/client/api/client.js';
import { uploadSession } from '../../lib/client/api/upload.js';
import { openSession } from '../../lib/log/index.js';
import { expectError, request } from '../support/http.js';
import { useServer } from '../support/server.js';
import { postChunk } from '../support/stored.js';

const LIMIT = 4096;
const srv = useServer({ deps: { limits: { maxChunkBytes: LIMIT } } });

describe('a deployment with a smaller chunk limit', () => {
  it('advertises it on /healthz', async () => {
    const a = await request(srv, 'GET', '/healthz');
    expect(a.json).toMatchObject({ ok: true, limits: { max_chunk_bytes: LIMIT, max_chunk_lines: 10_000 } });
  });

  it('refuses a chunk over it with 413 and the limit in the details', async () => {
    const s = openSession(srv.workDir, { agent: 'big' });
    for (let i = 0; i < 40; i++) s.note({ author: 'a', text: `line ${i} ${'x'.repeat(100)}` });
    s.end();
    const { readFileSync } = await import('node:fs');
    const bytes = readFileSync(s.path);
    expect(bytes.length).toBeGreaterThan(LIMIT);
    const err = expectError(
      srv,
      await postChunk(srv, srv.admin, s.sid, s.w, 0, bytes),
      413,
      'payload_too_large',
    );
    expect(err.details.max_bytes).toBe(LIMIT);
  });

  it('is followed by the upload, which sends chunks no larger than it', async () => {
    const s = openSession(srv.workDir, { agent: 'big' });
    for (let i = 0; i < 100; i++) s.note({ author: 'a', text: `line ${i} ${'y'.repeat(100)}` });
    s.end();
    const client = new ApiClient({ url: srv.url, token: srv.admin, minTimeoutMs: 5 });
    const r = await uploadSession(s.dir, { client });
    const { statSync } = await import('node:fs');
    expect(r.segments[0]!.length).toBe(statSync(s.path).size);
    expect(r.segments[0]!.chunks).toBeGreaterThanOrEqual(Math.ceil(statSync(s.path).size / LIMIT));
  });
});

describe('an upload of a file that is not the segment the server has', () => {
  it('is refused before anything is sent, and the server keeps what it had', async () => {
    const { readFileSync, writeFileSync } = await import('node:fs');
    const s = openSession(srv.workDir, { agent: 'editor' });
    for (let i = 0; i < 5; i++) s.note({ author: 'a', text: `note ${i}` });
    s.end();
    const client = new ApiClient({ url: srv.url, token: srv.admin, minTimeoutMs: 5 });
    await uploadSession(s.dir, { client });
    const stored = (
      await request(srv, 'GET', `/v1/sessions/${s.sid}/writers/${s.w}/segment`, { token: srv.admin })
    ).bytes;
    // Duplicate the third line: the file grows, but its history changed before the server's length.
    const lines = readFileSync(s.path, 'utf8').split('\n');
    lines.splice(2, 0, lines[2]!);
    writeFileSync(s.path, lines.join('\n'));
    await expect(uploadSession(s.dir, { client })).rejects.toThrow(/is not the segment the server has/);
    const after = (
      await request(srv, 'GET', `/v1/sessions/${s.sid}/writers/${s.w}/segment`, { token: srv.admin })
    ).bytes;
    expect(after.equals(stored)).toBe(true);
  });
});
