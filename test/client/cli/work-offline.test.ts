/**
 * `hansard work` when the server is away (issue 13 item 5, seed 004 "Failure posture"), against the real
 * server of `hansard serve` behind a loopback proxy the test switches: `down` (nothing listens: connection
 * refused, as with a stopped server), `drop` (the request reaches the server, which stores it, and the
 * answer is lost), `pass`. Heartbeat and status keep answering from this machine; a semantic operation not
 * answered stays pending and `resume` sends it exactly once (the server's history has it once); a pending
 * file changed after it was sent is refused (409); a lease file missing, expired or corrupt reads unknown.
 */
import { mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { runCli } from '../../../lib/client/cli/main.js';
import { newId } from '../../../lib/log/format/ids.js';
import { request } from '../../support/http.js';
import { useServer } from '../../support/server.js';

const srv = useServer({ real: true, tokens: { reporter: ['report', 'read'] } });

/** The loopback proxy in front of the real server. */
const proxy = {
  mode: 'pass' as 'pass' | 'drop',
  server: null as Server | null,
  port: 0,
  async up(): Promise<void> {
    if (proxy.server) return;
    const s = createServer((req, res) => {
      const chunks: Buffer[] = [];
      req.on('data', (c: Buffer) => chunks.push(c));
      req.on('end', async () => {
        const headers: Record<string, string> = {};
        for (const h of ['authorization', 'content-type', 'idempotency-key', 'accept']) {
          const v = req.headers[h];
          if (typeof v === 'string') headers[h] = v;
        }
        const answer = await fetch(`${srv.url}${req.url}`, {
          method: req.method,
          headers,
          ...(req.method === 'GET' ? {} : { body: Buffer.concat(chunks) }),
        });
        const text = await answer.text();
        // Stored by the server, answer lost on the way back.
        if (proxy.mode === 'drop') return req.socket.destroy();
        res.writeHead(answer.status, {
          'content-type': answer.headers.get('content-type') ?? 'application/json',
        });
        res.end(text);
      });
    });
    await new Promise<void>((resolve, reject) => {
      s.once('error', reject);
      s.listen(proxy.port, '127.0.0.1', () => resolve());
    });
    proxy.port = (s.address() as AddressInfo).port;
    proxy.server = s;
  },
  async down(): Promise<void> {
    const s = proxy.server;
    proxy.server = null;
    if (!s) return;
    s.closeAllConnections();
    await new Promise<void>((resolve) => s.close(() => resolve()));
  },
};
beforeAll(() => proxy.up());
afterAll(() => proxy.down());

type Env = { HANSARD_STATE_DIR: string; HANSARD_SESSION_ID: string };

function newEnv(): Env {
  return {
    HANSARD_STATE_DIR: mkdtempSync(join(tmpdir(), 'hansard-work-off-')),
    HANSARD_SESSION_ID: newId('s'),
  };
}

async function work(args: string[], env: Env) {
  let out = '';
  let err = '';
  const code = await runCli(['work', ...args], {
    stdout: { write: (s: string | Uint8Array) => (out += String(s)) },
    stderr: { write: (s: string) => (err += s) },
    env: {
      HANSARD_URL: `http://127.0.0.1:${proxy.port}`,
      HANSARD_TOKEN: srv.tokens.reporter,
      USER: 'priya',
      ...env,
    },
    cwd: tmpdir(),
  });
  return { code, out, err };
}

async function start(env: Env, summary = 'Parser error recovery'): Promise<string> {
  const r = await work(['start', '--mode', 'implementing', '--summary', summary, '--ttl', '10m'], env);
  expect([r.code, r.err]).toEqual([0, '']);
  return /started (wk_\w{26})/.exec(r.out)![1]!;
}

async function history(id: string): Promise<{ op: string; summary?: string }[]> {
  const r = await request(srv, 'GET', `/v1/work/${id}`, { token: srv.tokens.reporter });
  expect(r.status).toBe(200);
  return r.json.history;
}

function files(env: Env): string[] {
  return readdirSync(join(env.HANSARD_STATE_DIR, 'work')).sort();
}

describe('hansard work with the server away', () => {
  it('heartbeat and status answer from this machine; resume later sends each pending operation once', async () => {
    await proxy.up();
    const env = newEnv();
    const a = await start(env);
    await proxy.down();

    const hb = await work(['heartbeat', a], env);
    expect(hb.code).toBe(0);
    expect(hb.out).toMatch(new RegExp(`^${a}: observed on this machine, lease until `));
    expect(hb.err).toMatch(
      /the server was not told \(.*connection refused.*\); the lease is renewed on this machine only/,
    );
    const lease = JSON.parse(readFileSync(join(env.HANSARD_STATE_DIR, 'work', `${a}.lease.json`), 'utf8'));
    expect(lease.sent_at < lease.renewed_at).toBe(true);

    let st = await work(['status'], env);
    expect(st.code).toBe(0);
    expect(st.err).toMatch(/the server did not answer .*: showing what this machine holds/);
    expect(st.out).toMatch(
      new RegExp(`^${a}  implementing  "Parser error recovery"  observed on this machine \\(lease until `),
    );

    const cp = await work(
      ['checkpoint', a, '--mode', 'testing', '--summary', 'Running the parser suite'],
      env,
    );
    expect(cp.code).toBe(1);
    expect(cp.err).toContain('not sent: ');
    expect(cp.err).toContain('run `hansard work resume` when the server is back');
    const pending = JSON.parse(
      readFileSync(join(env.HANSARD_STATE_DIR, 'work', `${a}.pending.json`), 'utf8'),
    );
    expect(pending).toMatchObject({ op: 'checkpoint', work_id: a, body: { mode: 'testing' } });
    expect(pending.idempotency_key).toMatch(/^.{8,128}$/);
    // One pending operation per item keeps their order: a stop now is refused until the checkpoint went.
    const stop = await work(['stop', a, '--completed'], env);
    expect(stop.code).toBe(2);
    expect(stop.err).toContain('has a checkpoint not yet acknowledged');

    const b = await work(['start', '--mode', 'reviewing', '--summary', 'Reviewing the lexer change'], env);
    expect(b.code).toBe(1);
    st = await work(['status'], env);
    expect(st.out).toContain('a checkpoint not yet acknowledged (run `hansard work resume`)');
    expect(st.out).toContain('(pending start)  reviewing  "Reviewing the lexer change"  not started');

    await proxy.up();
    const r = await work(['resume'], env);
    expect([r.code, r.err]).toEqual([0, '']);
    expect(r.out).toContain(`resumed: checkpoint recorded for ${a}: testing`);
    const bId = /resumed: started (wk_\w{26})/.exec(r.out)?.[1];
    expect(bId).toBeDefined();
    expect(files(env).filter((f) => f.includes('pending'))).toEqual([]);
    expect((await work(['resume'], env)).out).toBe('nothing pending on this machine\n');

    expect((await history(a)).map((h) => h.op)).toEqual(['start', 'checkpoint']);
    const list = await request(srv, 'GET', `/v1/work?session=${env.HANSARD_SESSION_ID}`, {
      token: srv.tokens.reporter,
    });
    expect((list.json.items as { id: string }[]).map((i) => i.id).sort()).toEqual([a, bId].sort());
  });

  it('an answer lost after the server stored a stop: closing here, resume answers the stored stop, stored once', async () => {
    await proxy.up();
    const env = newEnv();
    const c = await start(env);
    proxy.mode = 'drop';
    const stop = await work(['stop', c, '--paused', '--summary', 'Paused for the release'], env);
    proxy.mode = 'pass';
    expect(stop.code).toBe(1);
    expect(stop.err).toContain('not sent: ');
    await proxy.down();
    const st = await work(['status', '--json'], env);
    expect(JSON.parse(st.out).items).toMatchObject([{ id: c, shown: 'closing' }]);
    const hb = await work(['heartbeat', c], env);
    expect(hb.code).toBe(2);
    expect(hb.err).toContain('is closing');

    await proxy.up();
    const r = await work(['resume', c], env);
    expect([r.code, r.err, r.out]).toEqual([0, '', `resumed: stopped ${c} (paused)\n`]);
    // Three deliveries (the first and two retries, each answer lost), one stop.
    expect((await history(c)).map((h) => h.op)).toEqual(['start', 'stop']);
    expect(files(env)).toEqual([]);
  });

  it('a start whose answer was lost is resumed to the same item: one item on the server', async () => {
    await proxy.up();
    const env = newEnv();
    proxy.mode = 'drop';
    const r = await work(['start', '--mode', 'implementing', '--summary', 'Lexer rewrite'], env);
    proxy.mode = 'pass';
    expect(r.code).toBe(1);
    expect(files(env)).toEqual([expect.stringMatching(/^start-.*\.pending\.json$/)]);
    const again = await work(['resume'], env);
    expect([again.code, again.err]).toEqual([0, '']);
    const id = /resumed: started (wk_\w{26})/.exec(again.out)?.[1];
    const list = await request(srv, 'GET', `/v1/work?session=${env.HANSARD_SESSION_ID}`, {
      token: srv.tokens.reporter,
    });
    expect((list.json.items as { id: string }[]).map((i) => i.id)).toEqual([id]);
    expect(files(env)).toEqual([`${id}.json`, `${id}.lease.json`]);
  });

  it('a pending operation changed after it was sent is refused on resume (409), shown, and kept', async () => {
    await proxy.up();
    const env = newEnv();
    const d = await start(env);
    proxy.mode = 'drop';
    const cp = await work(['checkpoint', d, '--summary', 'Original summary'], env);
    proxy.mode = 'pass';
    expect(cp.code).toBe(1);
    const path = join(env.HANSARD_STATE_DIR, 'work', `${d}.pending.json`);
    const op = JSON.parse(readFileSync(path, 'utf8'));
    op.body.summary = 'Changed afterwards';
    writeFileSync(path, JSON.stringify(op));
    const r = await work(['resume'], env);
    expect(r.code).toBe(2);
    expect(r.err).toMatch(
      new RegExp(`the server refused the checkpoint of ${d}: .* \\(409 idempotency_mismatch\\)`),
    );
    expect(r.err).toContain('is not what was first sent with its key');
    expect(readFileSync(path, 'utf8')).toContain('Changed afterwards');
    const h = await history(d);
    expect(h.map((e) => e.op)).toEqual(['start', 'checkpoint']);
    expect(h[1]?.summary).toBe('Original summary');
  });

  it('a lease file missing, expired or corrupt reads unknown, and status leaves it as it is', async () => {
    await proxy.up();
    const env = newEnv();
    const [e, f, g] = [await start(env, 'First'), await start(env, 'Second'), await start(env, 'Third')];
    await proxy.down();
    const dir = join(env.HANSARD_STATE_DIR, 'work');
    writeFileSync(join(dir, `${e}.lease.json`), '{"version":1,"id":');
    const old = new Date(Date.now() - 3 * 60_000).toISOString();
    writeFileSync(
      join(dir, `${g}.lease.json`),
      JSON.stringify({ version: 1, id: g, renewed_at: old, expires_at: old, ttl_seconds: 600 }),
    );
    rmSync(join(dir, `${f}.lease.json`));
    const st = await work(['status', '--json'], env);
    expect(st.code).toBe(0);
    const rows = JSON.parse(st.out).items as { id: string; shown: string; freshness: string }[];
    const by = (id: string) => rows.find((r) => r.id === id);
    expect(by(e)).toMatchObject({
      shown: 'unknown',
      freshness: 'unknown (the lease file on this machine is unreadable)',
    });
    expect(by(f)).toMatchObject({ shown: 'unknown', freshness: 'unknown (no lease on this machine)' });
    expect(by(g)).toMatchObject({
      shown: 'unknown',
      freshness: 'unknown (lease on this machine expired 3 min ago)',
    });
    expect(readFileSync(join(dir, `${e}.lease.json`), 'utf8')).toBe('{"version":1,"id":');
    const text = await work(['status'], env);
    expect(text.out).not.toMatch(/observed|idle/);
  });
});
