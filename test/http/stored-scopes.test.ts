/**
 * Scopes are the service's (issue 9.2): the store keeps a token's scopes as the strings it was given,
 * and a name this version does not know (a token written by a newer version, or a hand-edited row)
 * grants nothing and is not shown as granted. Over real HTTP on loopback, with the local deployment's
 * own wiring (lib/deploy/local.ts) and a real SQLite file.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createLocalApp, type LocalListener, listenLocal, openLocalStores } from '../../lib/deploy/local.js';
import { ensureTenant } from '../../lib/service/tenants/bootstrap.js';
import { generateTokenSecret, hashToken } from '../../lib/service/tokens/create.js';
import type { Stores } from '../../lib/store/index.js';

let tmp: string;
let stores: Stores;
let server: LocalListener;
let admin: string;
const logged: string[] = [];

/** Stores a token of tenant `acme` with these scopes as they are, past the service's checks. */
async function storedToken(id: string, scopes: string[]): Promise<string> {
  const secret = generateTokenSecret();
  await stores.state.putToken({
    id,
    tenant: 'acme',
    hash: hashToken(secret),
    scopes,
    session: null,
    label: null,
    created_at: new Date().toISOString(),
    expires_at: null,
    revoked_at: null,
    last_used_at: null,
    parent: null,
    root: id,
  });
  return secret;
}

const get = (path: string, token: string) =>
  fetch(`${server.url}${path}`, { headers: { authorization: `Bearer ${token}` } });

beforeAll(async () => {
  tmp = mkdtempSync(join(tmpdir(), 'hansard-scopes-'));
  stores = openLocalStores(join(tmp, 'data'));
  admin = (await ensureTenant(stores.state, 'acme', new Date()))!.token;
  server = await listenLocal(createLocalApp(stores, { log: (m) => logged.push(m), rateLimit: 0 }), {
    host: '127.0.0.1',
    port: 0,
  });
});

afterAll(async () => {
  await server.close();
  await stores.state.close();
  rmSync(tmp, { recursive: true, force: true });
});

describe('a stored scope name this version does not know', () => {
  it('is not listed as granted: GET /v1/tokens shows only the known ones', async () => {
    await storedToken('tok_01KZVVGRNR3D5V708Z4NPGG11A', ['read', 'superpower']);
    const a = await get('/v1/tokens', admin);
    expect(a.status).toBe(200);
    const { tokens } = (await a.json()) as { tokens: { id: string; scopes: string[] }[] };
    expect(tokens.find((t) => t.id === 'tok_01KZVVGRNR3D5V708Z4NPGG11A')?.scopes).toEqual(['read']);
  });

  it('grants nothing: a token holding only it is refused with 403 and told what it has', async () => {
    const token = await storedToken('tok_01KZVVGRNR3D5V708Z4NPGG11B', ['superpower']);
    const a = await get('/v1/sessions', token);
    expect(a.status).toBe(403);
    const body = (await a.json()) as { error: { code: string; details: { required: string[] } } };
    expect(body.error.code).toBe('forbidden');
    expect(body.error.details.required).toEqual(['read']);
  });

  it('leaves the known scopes of the same token working', async () => {
    const token = await storedToken('tok_01KZVVGRNR3D5V708Z4NPGG11C', ['read', 'superpower']);
    expect((await get('/v1/sessions', token)).status).toBe(200);
    expect(logged).toEqual([]);
  });
});
