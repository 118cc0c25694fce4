/**
 * The limits of issue 5 over real HTTP on the local stores: lines per chunk (413 `too_many_lines`), the
 * per-tenant storage quota (413 `quota_exceeded`), and the per-token rate limit (429 `rate_limited` with
 * `Retry-After`), each refusal storing nothing; and the CLI's client and uploader living with them.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { ApiClient } from '../../lib/client/api/client.js';
import { uploadSession } from '../../lib/client/api/upload.js';
import { DEFAULT_LIMITS } from '../../lib/contract/limits.js';
import { MemoryRateLimiter } from '../../lib/ratelimit/index.js';
import { expectError, request } from '../support/http.js';
import { writeSession } from '../support/segments.js';
import { makeTenant, startServer, type TestServer, useServer } from '../support/server.js';
import { expectRefusedUnchanged, postChunk, tenantsDigest } from '../support/stored.js';

const servers: TestServer[] = [];
async function server(deps: Parameters<typeof startServer>[0] = {}): Promise<TestServer> {
  const srv = await startServer(deps);
  servers.push(srv);
  return srv;
}
afterEach(async () => {
  for (const srv of servers.splice(0)) {
    expect(srv.logged).toEqual([]);
    await srv.close();
  }
});

describe('lines per chunk', () => {
  it('accepts a chunk of exactly the limit and refuses one more line with 413, storing nothing', async () => {
    const srv = await server({ limits: { maxChunkLines: 4 } });
    const { admin } = await makeTenant(srv, 'acme');
    const seg = writeSession(srv.workDir);
    expect(seg.lines.length).toBeGreaterThan(8);
    const four = Buffer.concat(seg.lines.slice(0, 4));

    // A new writer: five lines refused, nothing created.
    const probe = { token: admin, sid: seg.sid, w: seg.w };
    const five = Buffer.concat(seg.lines.slice(0, 5));
    const err = await expectRefusedUnchanged(
      srv,
      probe,
      () => postChunk(srv, admin, seg.sid, seg.w, 0, five),
      413,
      'too_many_lines',
    );
    expect(err.details).toEqual({ max_lines: 4 });
    expect(err.message).toContain('at most 4 lines');

    expect((await postChunk(srv, admin, seg.sid, seg.w, 0, four)).status).toBe(201);
    // An existing writer: the rest in one chunk is refused, and its index is unchanged.
    const rest = Buffer.concat(seg.lines.slice(4));
    await expectRefusedUnchanged(
      srv,
      probe,
      () => postChunk(srv, admin, seg.sid, seg.w, four.length, rest),
      413,
      'too_many_lines',
    );
    expect(await srv.stores.state.tenantUsage('acme')).toEqual({ bytes: four.length });
  });

  it(`holds ${DEFAULT_LIMITS.maxChunkLines} lines per chunk by default`, async () => {
    const srv = await server();
    const { admin } = await makeTenant(srv, 'acme');
    const seg = writeSession(srv.workDir);
    // writer.start, then lines the reader quarantines (stored as written): cheap lines to count.
    const filler = (n: number) => Buffer.from('{}\n'.repeat(n));
    const tooMany = Buffer.concat([seg.lines[0]!, filler(DEFAULT_LIMITS.maxChunkLines)]);
    await expectRefusedUnchanged(
      srv,
      { token: admin, sid: seg.sid, w: seg.w },
      () => postChunk(srv, admin, seg.sid, seg.w, 0, tooMany),
      413,
      'too_many_lines',
    );
    const exactly = Buffer.concat([seg.lines[0]!, filler(DEFAULT_LIMITS.maxChunkLines - 1)]);
    const ok = await postChunk(srv, admin, seg.sid, seg.w, 0, exactly);
    expect(ok.status, ok.text).toBe(201);
    expect(ok.json.lines).toBe(DEFAULT_LIMITS.maxChunkLines);
  });

  it('is met by the CLI uploader, which splits a segment into chunks of at most that many lines', async () => {
    const srv = await server({ limits: { maxChunkLines: 3 } });
    const { admin } = await makeTenant(srv, 'acme');
    const seg = writeSession(srv.workDir);
    const client = new ApiClient({ url: srv.url, token: admin, retries: 0 });
    const res = await uploadSession(seg.dir, { client, maxChunkLines: 3 });
    expect(res.segments[0]).toMatchObject({
      length: seg.bytes.length,
      sent_lines: seg.lines.length,
      chunks: Math.ceil(seg.lines.length / 3),
    });
  });
});

describe('per-tenant storage quota', () => {
  it('refuses a chunk that would pass the quota with 413 and the numbers, storing nothing', async () => {
    const work = mkdtempSync(join(tmpdir(), 'hansard-quota-'));
    const a = writeSession(work);
    const b = writeSession(work);
    const twoLines = b.lines[0]!.length + b.lines[1]!.length;
    // Room for a, then exactly two lines of b.
    const quota = a.bytes.length + twoLines;
    const srv = await server({ limits: { tenantQuotaBytes: quota } });
    const acme = await makeTenant(srv, 'acme');
    const globex = await makeTenant(srv, 'globex');

    expect((await postChunk(srv, acme.admin, a.sid, a.w, 0, a.bytes)).status).toBe(201);
    expect(await srv.stores.state.tenantUsage('acme')).toEqual({ bytes: a.bytes.length });

    const probe = { token: acme.admin, sid: b.sid, w: b.w };
    const err = await expectRefusedUnchanged(
      srv,
      probe,
      () => postChunk(srv, acme.admin, b.sid, b.w, 0, b.bytes),
      413,
      'quota_exceeded',
    );
    expect(err.details).toEqual({
      quota_bytes: quota,
      used_bytes: a.bytes.length,
      chunk_bytes: b.bytes.length,
    });
    expect(err.message).toContain('storage quota');
    expect(await srv.stores.state.tenantUsage('acme')).toEqual({ bytes: a.bytes.length });

    // A retry of a chunk already stored is still answered: it stores nothing more.
    expect((await postChunk(srv, acme.admin, a.sid, a.w, 0, a.bytes)).status).toBe(200);
    // Up to the quota exactly is allowed; one byte more is not.
    const head = Buffer.concat(b.lines.slice(0, 2));
    expect((await postChunk(srv, acme.admin, b.sid, b.w, 0, head)).status).toBe(201);
    expect(await srv.stores.state.tenantUsage('acme')).toEqual({ bytes: quota });
    const full = await expectRefusedUnchanged(
      srv,
      probe,
      () => postChunk(srv, acme.admin, b.sid, b.w, head.length, b.lines[2]!),
      413,
      'quota_exceeded',
    );
    expect(full.details).toMatchObject({ quota_bytes: quota, used_bytes: quota });

    // Another tenant's quota is its own.
    expect((await postChunk(srv, globex.admin, b.sid, b.w, 0, b.bytes)).status).toBe(201);
    expect(await srv.stores.state.tenantUsage('globex')).toEqual({ bytes: b.bytes.length });
    rmSync(work, { recursive: true, force: true });
  });

  it('is reported by the CLI uploader as a refusal it names', async () => {
    const srv = await server({ limits: { tenantQuotaBytes: 100 } });
    const { admin } = await makeTenant(srv, 'acme');
    const seg = writeSession(srv.workDir);
    const before = tenantsDigest(srv);
    const client = new ApiClient({ url: srv.url, token: admin, retries: 0 });
    // the server's own refusal, code and details kept (test/client/cli/upload-refusals: --json and the text)
    await expect(uploadSession(seg.dir, { client })).rejects.toMatchObject({
      name: 'ServerError',
      status: 413,
      code: 'quota_exceeded',
      message: expect.stringContaining('storage quota'),
    });
    expect(tenantsDigest(srv)).toBe(before);
  });
});

describe('per-token rate limit', () => {
  let now = Date.UTC(2026, 0, 1);
  const limiter = new MemoryRateLimiter({ limit: 3, window_seconds: 60 }, { now: () => now });
  const srv = useServer({
    tenants: ['acme'],
    tokens: { reader: ['read', 'board'] },
    deps: { rateLimiter: limiter },
  });

  const list = (token: string) => request(srv, 'GET', '/v1/sessions', { token });

  it('answers the request past the limit 429 with Retry-After; other tokens are unaffected', async () => {
    for (let i = 0; i < 3; i++) expect((await list(srv.admin)).status).toBe(200);
    const refused = await list(srv.admin);
    const err = expectError(srv, refused, 429, 'rate_limited');
    expect(refused.headers.get('retry-after')).toBe('20');
    expect(err.details).toEqual({ limit: 3, window_seconds: 60, retry_after_seconds: 20 });
    expect(err.message).toContain('3 requests per 60 s');

    // Every route behind it, the chunk route included (nothing stored), and the board API.
    const seg = writeSession(srv.workDir);
    const before = tenantsDigest(srv);
    expectError(srv, await postChunk(srv, srv.admin, seg.sid, seg.w, 0, seg.bytes), 429, 'rate_limited');
    expect(tenantsDigest(srv)).toBe(before);
    expectError(srv, await request(srv, 'GET', '/v1/board', { token: srv.admin }), 429, 'rate_limited');

    // Another token has its own allowance; no token and healthz are not counted against anyone.
    expect((await list(srv.tokens.reader)).status).toBe(200);
    expect((await request(srv, 'GET', '/v1/board', { token: srv.tokens.reader })).status).toBe(200);
    expectError(srv, await list(''), 401, 'unauthorized');
    expect((await request(srv, 'GET', '/healthz')).status).toBe(200);
  });

  it('lets the token through again once Retry-After has passed, and a quiet minute refills it', async () => {
    now += 19_000;
    expectError(srv, await list(srv.admin), 429, 'rate_limited');
    now += 1_000;
    expect((await list(srv.admin)).status).toBe(200);
    const again = await list(srv.admin);
    expectError(srv, again, 429, 'rate_limited');
    expect(again.headers.get('retry-after')).toBe('20');
    now += 60_000;
    for (let i = 0; i < 3; i++) expect((await list(srv.admin)).status).toBe(200);
    expectError(srv, await list(srv.admin), 429, 'rate_limited');
  });

  it("is waited out by the CLI's client, which honours Retry-After", async () => {
    // A real clock here: one request a second, so the second request is told to wait 1 s.
    const real = await server({ rateLimiter: new MemoryRateLimiter({ limit: 1, window_seconds: 1 }) });
    const token = (await makeTenant(real, 'acme')).admin;
    const retries: Array<{ reason: string; delayMs: number }> = [];
    const client = new ApiClient({
      url: real.url,
      token,
      retries: 3,
      minTimeoutMs: 1,
      onRetry: (r) => retries.push(r),
    });
    expect((await client.request('GET', '/v1/sessions')).status).toBe(200);
    const started = Date.now();
    expect((await client.request('GET', '/v1/sessions')).status).toBe(200);
    expect(retries).toEqual([
      { attempt: 1, reason: 'the server answered 429 (too many requests)', delayMs: 1000 },
    ]);
    expect(Date.now() - started).toBeGreaterThanOrEqual(900);
  });
});
