/**
 * `hansard serve` signs session digests (issue 15.2): it makes its key on the first start, its digester
 * loop writes a session's first digest within a tick of the writer's first chunk (interval shortened to
 * 1 s), `GET /v1/keys` serves the key without a token, and the digest verifies with it; `GET …/writers/{w}`
 * answers the writer's chained digest. `hansard keys list|rotate` work on the same data directory.
 */
import { createHash } from 'node:crypto';
import { existsSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { GENESIS_CHAIN, nextChain, signingInput } from '../../lib/audit/chain.js';
import { KeysAnswer, SignedDigest } from '../../lib/audit/schemas.js';
import { verifySignature } from '../../lib/audit/signature.js';
import { startServer } from '../../lib/deploy/local-serve.js';
import { runHansard } from '../support/cli.js';
import { request } from '../support/http.js';
import { writeSession } from '../support/segments.js';

const root = mkdtempSync(join(tmpdir(), 'hansard-digests-serve-'));
afterAll(() => rmSync(root, { recursive: true, force: true }));
const admin = `hns_${'D1gest5'.repeat(6)}A`;

async function until<T>(what: string, fn: () => T | null, ms = 5000): Promise<T> {
  const deadline = Date.now() + ms;
  for (;;) {
    const v = fn();
    if (v !== null) return v;
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 50));
  }
}

describe('hansard serve and the signed digests', () => {
  it('first start makes a key; a first chunk gets a signed digest within a tick; /v1/keys verifies it', async () => {
    const data = join(root, 'data');
    const logged: string[] = [];
    const srv = await startServer({
      port: 0,
      host: '127.0.0.1',
      data,
      bootstrapToken: admin,
      print: () => {},
      log: (l) => logged.push(l),
      rateLimit: 0,
      audit: { intervalSeconds: 1 },
      digestTickMs: 100,
    });
    let closed = false;
    try {
      const keyFiles = readdirSync(join(data, 'keys'));
      expect(keyFiles.filter((f) => f.endsWith('.pem'))).toHaveLength(1);

      const seg = writeSession(join(root, 'work'), { open: true });
      const body = Buffer.concat(seg.lines.slice(0, 3));
      const posted = await request(srv, 'POST', `/v1/sessions/${seg.sid}/writers/${seg.w}/chunks?offset=0`, {
        token: admin,
        body,
      });
      expect(posted.status, `${posted.text} ${logged.join('\n')}`).toBe(201);
      const chain = nextChain(GENESIS_CHAIN, 0, body.length, createHash('sha256').update(body).digest('hex'));
      const writer = await request(srv, 'GET', `/v1/sessions/${seg.sid}/writers/${seg.w}`, { token: admin });
      expect(writer.json.digest).toBe(chain);

      const file = join(data, 'tenants', 'local', 'sessions', seg.sid, 'digests', '000000001.json');
      const text = await until('digest 1', () => (existsSync(file) ? readFileSync(file, 'utf8') : null));
      const digest = SignedDigest.parse(JSON.parse(text));
      expect(digest.chunks).toHaveLength(1);
      expect(digest.writers[0]!.chain).toBe(chain);

      const keys = await request(srv, 'GET', '/v1/keys');
      expect(keys.status).toBe(200);
      expect(keys.headers.get('cache-control')).toBe('public, max-age=60');
      const answer = KeysAnswer.parse(keys.json);
      expect(answer.keys).toHaveLength(1);
      const key = answer.keys.find((k) => k.key_id === digest.key_id)!;
      expect(verifySignature(key.public_key, signingInput(digest), digest.signature)).toBe(true);

      // the OpenAPI document declares it, without a security requirement
      const doc = await request(srv, 'GET', '/v1/openapi.json');
      expect(doc.json.paths['/v1/keys'].get.operationId).toBe('listKeys');

      // at 1 s, doubling while nothing changes: digest 2 about 2 s after digest 1
      const second = join(data, 'tenants', 'local', 'sessions', seg.sid, 'digests', '000000002.json');
      const d2 = SignedDigest.parse(
        JSON.parse(await until('digest 2', () => (existsSync(second) ? readFileSync(second, 'utf8') : null))),
      );
      expect(d2.chunks).toEqual([]);
      expect(d2.previous!.seq).toBe(1);

      await srv.close();
      closed = true;
      // stopped: the digester writes nothing more
      const count = readdirSync(join(data, 'tenants', 'local', 'sessions', seg.sid, 'digests')).length;
      await new Promise((r) => setTimeout(r, 2500));
      expect(readdirSync(join(data, 'tenants', 'local', 'sessions', seg.sid, 'digests'))).toHaveLength(count);
      expect(logged).toEqual([]);
    } finally {
      if (!closed) await srv.close();
    }

    // hansard keys on the same data directory: list, rotate, list again
    const listed = await runHansard(['keys', 'list', '--data', data, '--json'], { cwd: root });
    expect(listed.code).toBe(0);
    const before = KeysAnswer.parse(JSON.parse(listed.out)).keys;
    expect(before).toHaveLength(1);
    const rotated = await runHansard(['keys', 'rotate', '--data', data], { cwd: root });
    expect(rotated.code).toBe(0);
    expect(rotated.err).toContain(`retired ${before[0]!.key_id}`);
    const text = await runHansard(['keys', 'list', '--data', data], { cwd: root });
    const lines = text.out.trim().split('\n');
    expect(lines).toHaveLength(2);
    expect(lines[0]).toMatch(new RegExp(`^${before[0]!.key_id} .* retired `));
    expect(lines[1]).toMatch(/ current$/);
  }, 30_000);

  it('hansard keys: --help teaches; a missing data directory is a usage error naming it', async () => {
    const help = await runHansard(['keys', '--help'], { cwd: root });
    expect(help.out).toContain('GET /v1/keys');
    expect(help.out).toContain('hansard keys rotate');
    const missing = await runHansard(['keys', 'list', '--data', 'nowhere'], { cwd: root });
    expect(missing.code).toBe(2);
    expect(missing.err).toContain(join(root, 'nowhere'));
  });

  it('a damaged key file refuses the start with a sentence naming it, and releases the data directory', async () => {
    const data = join(root, 'damaged');
    const { LocalKeyring } = await import('../../lib/audit/local-keyring.js');
    const { created } = LocalKeyring.open(data);
    const file = join(data, 'keys', `${created!.key_id}.json`);
    writeFileSync(file, '{"key_id": "k_000000000000000000000000"}');
    const start = () =>
      startServer({ port: 0, host: '127.0.0.1', data, print: () => {}, log: () => {}, rateLimit: 0 });
    await expect(start()).rejects.toMatchObject({
      name: 'StartRefusedError',
      message: expect.stringContaining(file),
    });
    // the lock was released: with the file fixed, a start succeeds
    rmSync(file);
    rmSync(join(data, 'keys', `${created!.key_id}.pem`));
    const srv = await start();
    await srv.close();
  });

  it('hansard keys rotate beside a running server: the next digest is signed by the new key, both verify', async () => {
    const data = join(root, 'rotate');
    const srv = await startServer({
      port: 0,
      host: '127.0.0.1',
      data,
      bootstrapToken: admin,
      print: () => {},
      log: () => {},
      rateLimit: 0,
      audit: { intervalSeconds: 1 },
      digestTickMs: 100,
    });
    try {
      const seg = writeSession(join(root, 'work-rotate'), { open: true });
      const post = async (from: number, to: number) => {
        const offset = seg.lines.slice(0, from).reduce((n, l) => n + l.length, 0);
        const r = await request(
          srv,
          'POST',
          `/v1/sessions/${seg.sid}/writers/${seg.w}/chunks?offset=${offset}`,
          {
            token: admin,
            body: Buffer.concat(seg.lines.slice(from, to)),
          },
        );
        expect(r.status).toBe(201);
      };
      const dir = join(data, 'tenants', 'local', 'sessions', seg.sid, 'digests');
      const digest = (seq: number) =>
        until(`digest ${seq}`, () => {
          const f = join(dir, `${String(seq).padStart(9, '0')}.json`);
          return existsSync(f) ? SignedDigest.parse(JSON.parse(readFileSync(f, 'utf8'))) : null;
        });
      await post(0, 2);
      const d1 = await digest(1);
      const rotated = await runHansard(['keys', 'rotate', '--data', data, '--json'], { cwd: root });
      expect(rotated.code).toBe(0);
      const { current } = JSON.parse(rotated.out) as { current: { key_id: string } };
      await post(2, 4);
      // the first digest after the rotation carries the new key id
      let next = await digest(2);
      for (let seq = 3; next.key_id === d1.key_id; seq++) next = await digest(seq);
      expect(next.key_id).toBe(current.key_id);
      const keys = KeysAnswer.parse((await request(srv, 'GET', '/v1/keys')).json).keys;
      expect(keys.map((k) => [k.key_id, k.retired_at === null])).toEqual([
        [d1.key_id, false],
        [current.key_id, true],
      ]);
      for (const d of [d1, next]) {
        const key = keys.find((k) => k.key_id === d.key_id)!;
        expect(verifySignature(key.public_key, signingInput(d), d.signature), `digest ${d.seq}`).toBe(true);
      }
    } finally {
      await srv.close();
    }
  }, 30_000);
});
