/**
 * `DynamoRateLimiter` (lib/ratelimit/dynamo.ts) on DynamoDB Local: the fixed-window counter item, exactly
 * `limit` of many concurrent requests allowed, Retry-After to the window's end, a new window, keys apart,
 * a backend failure as `RateLimiterError`; and the limiter in the app over real HTTP, where a failing
 * limiter lets requests through and logs it.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { DynamoDBDocumentClient, GetCommand } from '@aws-sdk/lib-dynamodb';
import { serve } from '@hono/node-server';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type DynamoLocal, startDynamoLocal } from '../../harness/dynamodb-local.js';
import { openAwsRateLimiter } from '../../lib/deploy/aws.js';
import { createApp } from '../../lib/http/index.js';
import { DynamoRateLimiter } from '../../lib/ratelimit/dynamo.js';
import { NoopRateLimiter, type RateLimiter, RateLimiterError } from '../../lib/ratelimit/index.js';
import { ensureTenant, mintToken } from '../../lib/service/index.js';
import { keys } from '../../lib/store/dynamo/schema.js';
import { DynamoStateStore } from '../../lib/store/dynamo/state-store.js';
import { FsSegmentStore } from '../../lib/store/fs/segment-store.js';

let local: DynamoLocal;
const tmp = mkdtempSync(join(tmpdir(), 'hansard-ratelimit-'));

beforeAll(async () => {
  local = await startDynamoLocal();
}, 120_000);
afterAll(async () => {
  await local?.stop();
  rmSync(tmp, { recursive: true, force: true });
});

/** 2026-01-01T00:00:00Z, a whole number of minutes: window starts fall on it. */
const T0 = Date.UTC(2026, 0, 1);

async function limiterAt(limit: number, windowSeconds = 60) {
  const clock = { now: T0 };
  const table = await local.freshTable();
  const limiter = new DynamoRateLimiter({
    client: local.client,
    tableName: table,
    config: { limit, window_seconds: windowSeconds },
    now: () => clock.now,
  });
  return { clock, table, limiter };
}

describe('DynamoRateLimiter', () => {
  it('allows exactly `limit` of limit + 5 concurrent requests, and counts only those', async () => {
    const { table, limiter } = await limiterAt(20);
    const decisions = await Promise.all(Array.from({ length: 25 }, () => limiter.limit('tok_A')));
    expect(decisions.filter((d) => d.allowed)).toHaveLength(20);
    const refused = decisions.filter((d) => !d.allowed);
    expect(refused).toHaveLength(5);
    for (const d of refused) {
      expect(d).toEqual({
        allowed: false,
        limit: 20,
        window_seconds: 60,
        remaining: 0,
        retry_after_seconds: 60,
      });
    }
    // Each allowed request saw a distinct count: remaining runs 19 … 0 once each.
    expect(
      decisions
        .filter((d) => d.allowed)
        .map((d) => d.remaining)
        .sort((a, b) => a - b),
    ).toEqual(Array.from({ length: 20 }, (_, i) => i));
    const doc = DynamoDBDocumentClient.from(local.client);
    const item = (
      await doc.send(new GetCommand({ TableName: table, Key: keys.rateLimit('tok_A', T0 / 1000) }))
    ).Item;
    expect(item).toEqual({
      pk: 'RL#tok_A',
      sk: String(T0 / 1000),
      requests: 20,
      expires_at: T0 / 1000 + 60 + 3600,
    });
  });

  it('tells a refused key to retry at the end of the window, and the next window lets it through', async () => {
    const { clock, limiter } = await limiterAt(2);
    clock.now = T0 + 15_500;
    expect((await limiter.limit('tok_A')).allowed).toBe(true);
    expect((await limiter.limit('tok_A')).allowed).toBe(true);
    expect(await limiter.limit('tok_A')).toMatchObject({ allowed: false, retry_after_seconds: 45 });
    clock.now = T0 + 59_999;
    expect(await limiter.limit('tok_A')).toMatchObject({ allowed: false, retry_after_seconds: 1 });
    // Another key has its own counter.
    expect((await limiter.limit('tok_B')).allowed).toBe(true);
    clock.now = T0 + 60_000;
    expect(await limiter.limit('tok_A')).toMatchObject({ allowed: true, remaining: 1 });
  });

  it('counts a request of cost n as n in the window, refuses it whole, and caps the cost at the limit', async () => {
    const { clock, limiter } = await limiterAt(30);
    expect(await limiter.limit('tok_A', 10)).toMatchObject({ allowed: true, remaining: 20 });
    expect(await limiter.limit('tok_A', 10)).toMatchObject({ allowed: true, remaining: 10 });
    expect(await limiter.limit('tok_A')).toMatchObject({ allowed: true, remaining: 9 });
    expect(await limiter.limit('tok_A', 10)).toMatchObject({ allowed: false, retry_after_seconds: 60 });
    expect(await limiter.limit('tok_A', 9)).toMatchObject({ allowed: true, remaining: 0 });
    clock.now = T0 + 60_000;
    expect(await limiter.limit('tok_A', 1000)).toMatchObject({ allowed: true, remaining: 0 });
    expect((await limiter.limit('tok_A')).allowed).toBe(false);
  });

  it("holds a key asked with a rate of its own (its tenant's) to it, in the same window item", async () => {
    const { clock, limiter } = await limiterAt(600);
    clock.now = T0 + 15_000;
    const own = await Promise.all(Array.from({ length: 8 }, () => limiter.limit('tok_T', 1, 5)));
    expect(own.filter((d) => d.allowed)).toHaveLength(5);
    expect(own.find((d) => !d.allowed)).toEqual({
      allowed: false,
      limit: 5,
      window_seconds: 60,
      remaining: 0,
      retry_after_seconds: 45,
    });
    const others = await Promise.all(Array.from({ length: 8 }, () => limiter.limit('tok_D')));
    expect(others.every((d) => d.allowed && d.limit === 600)).toBe(true);
    // Raised in the same window: the 5 counted stay counted, the rest of the new limit is there.
    expect(await limiter.limit('tok_T', 1, 7)).toMatchObject({ allowed: true, limit: 7, remaining: 1 });
    expect(await limiter.limit('tok_T', 1, 7)).toMatchObject({ allowed: true, remaining: 0 });
    expect((await limiter.limit('tok_T', 1, 7)).allowed).toBe(false);
  });

  it('turns a DynamoDB failure into RateLimiterError, with the cause kept', async () => {
    const limiter = new DynamoRateLimiter({ client: local.client, tableName: 'no-such-table' });
    const err = await limiter.limit('tok_A').catch((e: unknown) => e);
    expect(err).toBeInstanceOf(RateLimiterError);
    expect((err as RateLimiterError).cause).toMatchObject({ name: 'ResourceNotFoundException' });
  });

  it('is what openAwsRateLimiter gives, per minute; 0 turns it off', async () => {
    const table = await local.freshTable();
    const on = openAwsRateLimiter({ dynamo: local.client, table, perMinute: 7 });
    expect(on).toBeInstanceOf(DynamoRateLimiter);
    expect((on as DynamoRateLimiter).config).toEqual({ limit: 7, window_seconds: 60 });
    expect((openAwsRateLimiter({ dynamo: local.client, table }) as DynamoRateLimiter).config).toEqual({
      limit: 600,
      window_seconds: 60,
    });
    expect(openAwsRateLimiter({ dynamo: local.client, table, perMinute: 0 })).toBeInstanceOf(NoopRateLimiter);
  });
});

describe('the app on DynamoDB with the DynamoDB limiter, over HTTP', () => {
  /** The app over DynamoStateStore + FsSegmentStore on loopback, with this limiter. */
  async function serveApp(limiter: (table: string) => RateLimiter) {
    const table = await local.freshTable();
    const state = new DynamoStateStore({ tableName: table, client: local.client });
    const logged: string[] = [];
    const app = createApp({
      segments: new FsSegmentStore(mkdtempSync(join(tmp, 'segments-'))),
      state,
      rateLimiter: limiter(table),
      log: (m, e) => logged.push(`${m} ${String(e ?? '')}`),
    });
    const server = await new Promise<ReturnType<typeof serve>>((resolve) => {
      const s = serve({ fetch: app.fetch, hostname: '127.0.0.1', port: 0 }, () => resolve(s));
    });
    const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
    const admin = (await ensureTenant(state, 'acme', new Date()))!.token;
    const get = (token: string) =>
      fetch(`${url}/v1/sessions`, { headers: { authorization: `Bearer ${token}` } });
    const close = () =>
      new Promise<void>((resolve) => {
        if ('closeAllConnections' in server) server.closeAllConnections();
        server.close(() => resolve());
      });
    return { state, logged, admin, get, close };
  }

  it('answers 429 with Retry-After per token once the window is used up', async () => {
    const clock = { now: T0 + 30_000 };
    const s = await serveApp(
      (table) =>
        new DynamoRateLimiter({
          client: local.client,
          tableName: table,
          config: { limit: 2, window_seconds: 60 },
          now: () => clock.now,
        }),
    );
    const other = (await mintToken(s.state, 'acme', { scopes: ['read'] }, new Date())).token;
    expect((await s.get(s.admin)).status).toBe(200);
    expect((await s.get(s.admin)).status).toBe(200);
    const refused = await s.get(s.admin);
    expect(refused.status).toBe(429);
    expect(refused.headers.get('retry-after')).toBe('30');
    expect(await refused.json()).toEqual({
      error: {
        code: 'rate_limited',
        message:
          'this token may make 2 requests per 60 s, together with the tokens minted from it or from the same token: try again in 30 s',
        details: { limit: 2, window_seconds: 60, retry_after_seconds: 30 },
      },
    });
    expect((await s.get(other)).status).toBe(200);
    clock.now = T0 + 60_000;
    expect((await s.get(s.admin)).status).toBe(200);
    expect(s.logged).toEqual([]);
    await s.close();
  });

  it("holds a token to its tenant's own rate, read from the tenant item, and another tenant's to the deployment's", async () => {
    const clock = { now: T0 + 30_000 };
    const s = await serveApp(
      (table) =>
        new DynamoRateLimiter({
          client: local.client,
          tableName: table,
          config: { limit: 600, window_seconds: 60 },
          now: () => clock.now,
        }),
    );
    await s.state.setTenantSettings('acme', { rate_limit_per_minute: 2 }, new Date().toISOString());
    const other = (await ensureTenant(s.state, 'globex', new Date()))!.token;
    expect((await s.get(s.admin)).status).toBe(200);
    expect((await s.get(s.admin)).status).toBe(200);
    const refused = await s.get(s.admin);
    expect(refused.status).toBe(429);
    expect(refused.headers.get('retry-after')).toBe('30');
    expect(await refused.json()).toMatchObject({
      error: { code: 'rate_limited', details: { limit: 2, window_seconds: 60, retry_after_seconds: 30 } },
    });
    for (let i = 0; i < 5; i++) expect((await s.get(other)).status).toBe(200);
    expect(s.logged).toEqual([]);
    await s.close();
  });

  it('lets requests through when the limiter cannot reach its table, and logs it', async () => {
    const s = await serveApp(
      () => new DynamoRateLimiter({ client: local.client, tableName: 'no-such-table' }),
    );
    expect((await s.get(s.admin)).status).toBe(200);
    expect(s.logged).toHaveLength(1);
    expect(s.logged[0]).toMatch(/^rate limiter failed, request let through ResourceNotFoundException/);
    expect(s.logged[0]).not.toContain(s.admin);
    await s.close();
  });
});
