/**
 * A board to test the overview against, over real HTTP on loopback with the local stores: `createApp`
 * served by @hono/node-server (SSE or poll, timing as the test asks), a tenant with board, report and
 * admin tokens, and helpers that record a session (one writer, its agent, a person's message) and report
 * a status through the API, as an agent and a hook would. `restart` stops and starts the server on the
 * same port (the disconnected indicator's test).
 */
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { type ServerType, serve } from '@hono/node-server';
import { openLocalStores } from '../../lib/deploy/local.js';
import { type AppDeps, createApp } from '../../lib/http/index.js';
import { openSession } from '../../lib/log/index.js';
import { ensureTenant, mintToken } from '../../lib/service/index.js';
import type { Stores } from '../../lib/store/index.js';

export interface BoardFixture {
  tmp: string;
  stores: Stores;
  base: string;
  board: string;
  admin: string;
  reporter: string;
  /** what the app logged as unhandled errors */
  logged: string[];
  /** records a session with one writer of `agent` and a message of `user` saying `text`; its sid */
  record(agent: string, user: string, text: string): Promise<string>;
  /** reports `state` with `note` on `sid` (201 expected) */
  report(sid: string, state: string, note: string): Promise<void>;
  /** stops serving (closing every connection) */
  stop(): Promise<void>;
  /** serves again on the same port */
  start(): Promise<void>;
  close(): Promise<void>;
}

/** Starts a board (see the module's doc) with `deps` (live mode, timing). */
export async function startBoard(deps: Partial<AppDeps> = {}): Promise<BoardFixture> {
  const tmp = mkdtempSync(join(tmpdir(), 'hansard-overview-'));
  const stores = openLocalStores(join(tmp, 'data'));
  const now = new Date();
  const tenant = await ensureTenant(stores.state, 'local', now);
  if (!tenant) throw new Error('tenant local already existed');
  const board = (await mintToken(stores.state, 'local', { scopes: ['board'] }, now)).token;
  const reporter = (await mintToken(stores.state, 'local', { scopes: ['report'] }, now)).token;
  const logged: string[] = [];
  const app = createApp({ ...deps, ...stores, log: (m, e) => logged.push(`${m} ${String(e ?? '')}`) });
  let server: ServerType | null = null;
  let port = 0;
  const start = async () => {
    server = await new Promise<ServerType>((resolve) => {
      const s = serve({ fetch: app.fetch, hostname: '127.0.0.1', port }, () => resolve(s));
    });
    port = (server.address() as AddressInfo).port;
  };
  const stop = async () => {
    const s = server;
    server = null;
    if (!s) return;
    await new Promise<void>((resolve) => {
      if ('closeAllConnections' in s) s.closeAllConnections();
      s.close(() => resolve());
    });
  };
  await start();
  const base = `http://127.0.0.1:${port}`;
  const api = async (path: string, token: string, body: Uint8Array | string, type: string) => {
    const res = await fetch(`${base}${path}`, {
      method: 'POST',
      headers: { authorization: `Bearer ${token}`, 'content-type': type },
      body,
    });
    if (!res.ok) throw new Error(`POST ${path}: ${res.status} ${await res.text()}`);
  };
  return {
    tmp,
    stores,
    base,
    board,
    admin: tenant.token,
    reporter,
    logged,
    async record(agent, user, text) {
      const s = openSession(join(tmp, 'sessions'), { agent, host: 'test-host' });
      const m = s.message({ user_id: user, text });
      const t = s.turnStart({ context_message_ids: [m.id] });
      s.output({ turn_id: t.id, text: 'done' });
      s.turnEnd({ turn_id: t.id, status: 'completed' });
      s.end();
      const path = `/v1/sessions/${s.sid}/writers/${s.w}/chunks?offset=0`;
      await api(path, tenant.token, readFileSync(s.path), 'application/x-ndjson');
      return s.sid;
    },
    async report(sid, state, note) {
      await api(`/v1/sessions/${sid}/status`, reporter, JSON.stringify({ state, note }), 'application/json');
    },
    stop,
    start,
    async close() {
      await stop();
      await stores.state.close();
      rmSync(tmp, { recursive: true, force: true });
    },
  };
}
