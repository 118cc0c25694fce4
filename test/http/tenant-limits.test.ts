/**
 * Per-tenant limits (issue 17, items 1 and 3) over real HTTP on the local stores, set the way an operator
 * does: `hansard tenant set … --data DIR` on the running server's data directory. Tenant a gets a 1 MiB
 * quota and 5 requests a minute per token; tenant b keeps the deployment's (8 MiB, 600 a minute). a's
 * chunk past its quota is refused (413 naming its own quota, nothing stored) while b's goes in; a's tokens
 * are refused at its own rate (429, Retry-After) while b's are not; `default` gives a the deployment's
 * again. The server reads a tenant's settings at most every 100 ms here (30 s by default).
 */
import { beforeAll, describe, expect, it } from 'vitest';
import { openLocalStores } from '../../lib/deploy/local.js';
import { MemoryRateLimiter } from '../../lib/ratelimit/index.js';
import { runHansard } from '../support/cli.js';
import { expectError, request } from '../support/http.js';
import { writeSession } from '../support/segments.js';
import { useServer } from '../support/server.js';
import { expectRefusedUnchanged, postChunk, sleep } from '../support/stored.js';

const MiB = 1024 * 1024;
const MAX_AGE_MS = 100;

/** `hansard tenant set NAME ARGS… --data <the server's data directory>`, expected to succeed. */
async function tenantSet(dataDir: string, name: string, ...args: string[]): Promise<unknown> {
  const r = await runHansard(['tenant', 'set', name, ...args, '--data', dataDir, '--json'], { cwd: dataDir });
  expect(r.code, r.err).toBe(0);
  return JSON.parse(r.out);
}

/** `lines` lines of 1,000 bytes each that are no event (stored as written, quarantined on replay). */
const filler = (lines: number) => Buffer.from(`{"pad":"${'x'.repeat(990)}"}\n`.repeat(lines));

describe('a tenant with its own quota and rate beside one with the deployment’s', () => {
  const srv = useServer({
    tenants: ['a', 'b'],
    deps: {
      limits: { tenantQuotaBytes: 8 * MiB, tenantSettingsMaxAgeMs: MAX_AGE_MS },
      rateLimiter: new MemoryRateLimiter({ limit: 600, window_seconds: 60 }),
    },
    tokens: {
      aWriter: { tenant: 'a', scopes: ['ingest', 'read'] },
      aReader: { tenant: 'a', scopes: ['read'] },
      bWriter: { tenant: 'b', scopes: ['ingest', 'read'] },
      bReader: { tenant: 'b', scopes: ['read'] },
    },
  });

  // Set as an operator does, on the running server's data directory, before the cases.
  beforeAll(async () => {
    expect(await tenantSet(srv.dataDir, 'a', '--quota-bytes', '1MiB', '--rate-limit', '5')).toMatchObject({
      tenant: 'a',
      quota_bytes: MiB,
      rate_limit_per_minute: 5,
    });
    await sleep(MAX_AGE_MS + 50);
  });

  it('shows b with nothing of its own', async () => {
    const shown = await runHansard(['tenant', 'show', 'b', '--data', srv.dataDir, '--json'], {
      cwd: srv.dataDir,
    });
    expect(JSON.parse(shown.out)).toEqual({
      tenant: 'b',
      quota_bytes: null,
      rate_limit_per_minute: null,
      updated_at: null,
    });
  });

  it('refuses a’s chunk past its own 1 MiB quota, naming it, storing nothing; b’s goes in', async () => {
    const segA = writeSession(srv.workDir);
    const segB = writeSession(srv.workDir);
    const first = (seg: typeof segA) => Buffer.concat([seg.lines[0]!, filler(700)]);
    const second = filler(400);
    const a1 = first(segA);
    expect(a1.length).toBeLessThan(MiB);
    expect(a1.length + second.length).toBeGreaterThan(MiB);

    expect((await postChunk(srv, srv.tokens.aWriter, segA.sid, segA.w, 0, a1)).status).toBe(201);
    const err = await expectRefusedUnchanged(
      srv,
      { token: srv.tokens.aWriter, sid: segA.sid, w: segA.w },
      () => postChunk(srv, srv.tokens.aWriter, segA.sid, segA.w, a1.length, second),
      413,
      'quota_exceeded',
    );
    expect(err.details).toEqual({ quota_bytes: MiB, used_bytes: a1.length, chunk_bytes: second.length });
    expect(err.message).toContain(`its own storage quota (${a1.length} of ${MiB} bytes used)`);
    expect(await srv.stores.state.tenantUsage('a')).toEqual({ bytes: a1.length });

    // b, at the deployment's 8 MiB, takes the same bytes.
    const b1 = first(segB);
    expect((await postChunk(srv, srv.tokens.bWriter, segB.sid, segB.w, 0, b1)).status).toBe(201);
    expect((await postChunk(srv, srv.tokens.bWriter, segB.sid, segB.w, b1.length, second)).status).toBe(201);
    expect(await srv.stores.state.tenantUsage('b')).toEqual({ bytes: b1.length + second.length });

    // `default`: a is held to the deployment's quota again, and the refused chunk goes in.
    expect(await tenantSet(srv.dataDir, 'a', '--quota-bytes', 'default')).toMatchObject({
      quota_bytes: null,
      rate_limit_per_minute: 5,
    });
    await sleep(MAX_AGE_MS + 50);
    const again = await postChunk(srv, srv.tokens.aWriter, segA.sid, segA.w, a1.length, second);
    expect(again.status, again.text).toBe(201);
    expect(await srv.stores.state.tenantUsage('a')).toEqual({ bytes: a1.length + second.length });
  });

  it('refuses a’s tokens at its own 5 a minute (429, Retry-After) while b’s are not', async () => {
    const list = (token: string) => request(srv, 'GET', '/v1/sessions', { token });
    for (let i = 0; i < 5; i++) expect((await list(srv.tokens.aReader)).status).toBe(200);
    const refused = await list(srv.tokens.aReader);
    const err = expectError(srv, refused, 429, 'rate_limited');
    expect(err.details).toEqual({ limit: 5, window_seconds: 60, retry_after_seconds: 12 });
    expect(refused.headers.get('retry-after')).toBe('12');
    expect(err.message).toContain("5 requests per 60 s (its tenant's own limit)");

    // b's tokens, at the deployment's 600 a minute: 20 in a row pass.
    for (let i = 0; i < 20; i++) expect((await list(srv.tokens.bReader)).status).toBe(200);

    // `default`: a's token refills at the deployment's 600 a minute (10 a second), not 5.
    await tenantSet(srv.dataDir, 'a', '--rate-limit', 'default');
    await sleep(1_200);
    const after = [];
    for (let i = 0; i < 8; i++) after.push((await list(srv.tokens.aReader)).status);
    expect(after).toEqual(Array(8).fill(200));
  });
});

describe('a tenant whose tokens are not limited (--rate-limit 0) on a deployment that limits', () => {
  const srv = useServer({
    tenants: ['c', 'd'],
    deps: {
      limits: { tenantSettingsMaxAgeMs: MAX_AGE_MS },
      rateLimiter: new MemoryRateLimiter({ limit: 3, window_seconds: 60 }),
    },
    tokens: { c: { tenant: 'c', scopes: ['read'] }, d: { tenant: 'd', scopes: ['read'] } },
  });

  it('lets c’s token through past the deployment’s 3 a minute and refuses d’s fourth', async () => {
    expect(await tenantSet(srv.dataDir, 'c', '--rate-limit', '0')).toMatchObject({
      rate_limit_per_minute: 0,
    });
    await sleep(MAX_AGE_MS + 50);
    const list = (token: string) => request(srv, 'GET', '/v1/sessions', { token });
    for (let i = 0; i < 10; i++) expect((await list(srv.tokens.c)).status).toBe(200);
    for (let i = 0; i < 3; i++) expect((await list(srv.tokens.d)).status).toBe(200);
    const refused = await list(srv.tokens.d);
    expect(expectError(srv, refused, 429, 'rate_limited').details).toMatchObject({ limit: 3 });
    expect(expectError(srv, refused, 429).message).not.toContain("tenant's own");
  });
});

describe('a tenant whose limits cannot be read (the state store failing on them)', () => {
  const srv = useServer({
    deps: { rateLimiter: new MemoryRateLimiter({ limit: 3, window_seconds: 60 }) },
    stores: (dataDir) => {
      const stores = openLocalStores(dataDir);
      const state = new Proxy(stores.state, {
        get(target, prop, receiver) {
          if (prop === 'getTenantSettings') return async () => Promise.reject(new Error('disk I/O error'));
          const value = Reflect.get(target, prop, receiver);
          return typeof value === 'function' ? value.bind(target) : value;
        },
      });
      return { ...stores, state };
    },
    tokens: { reader: ['read'], writer: ['ingest', 'read'] },
    // the limiter's fallback, and the chunk's 500 (an unhandled store error, as any other)
    mayLog:
      /^(tenant's rate limit could not be read, the deployment's applied|unhandled error) Error: disk I\/O error$/,
  });

  it("holds its tokens to the deployment's rate, logged, and refuses a chunk with 500, storing nothing", async () => {
    const list = () => request(srv, 'GET', '/v1/sessions', { token: srv.tokens.reader });
    for (let i = 0; i < 3; i++) expect((await list()).status).toBe(200);
    expect(expectError(srv, await list(), 429, 'rate_limited').details).toMatchObject({ limit: 3 });
    expect(srv.logged[0]).toMatch(/^tenant's rate limit could not be read, the deployment's applied/);

    const seg = writeSession(srv.workDir);
    const err = await expectRefusedUnchanged(
      srv,
      { token: srv.tokens.writer, sid: seg.sid, w: seg.w },
      () => postChunk(srv, srv.tokens.writer, seg.sid, seg.w, 0, seg.bytes),
      500,
    );
    expect(err.message).not.toContain('disk I/O error');
  });
});
