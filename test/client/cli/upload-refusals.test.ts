/**
 * `hansard upload` passes the server's refusals through as every other command does: `--json` carries
 * the server's own `error.code` and details (413 `quota_exceeded` with `quota_bytes` and `used_bytes`;
 * 403 `forbidden` with `required`; 429 `rate_limited` with `retry_after_seconds`, once the retries are
 * spent), not `usage` or a 503 of the client's own; the text names `(413 quota_exceeded)` as the others
 * name theirs. A real server on loopback (`startServer`), and for the 429 a loopback server that always
 * answers it (a real limit's Retry-After would make the retries take minutes).
 */
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type RunningServer, startServer } from '../../../lib/deploy/local-serve.js';
import { openSession } from '../../../lib/log/write/writer.js';
import { runHansard } from '../../support/cli.js';
import { tmpDirs } from '../../support/tmp.js';

const scratch = tmpDirs('hansard-upload-refusals-');
const ADMIN = `hns_${'Up1oadRefusa1s'.repeat(3)}x`;
const QUOTA = 300;
let srv: RunningServer;
let work: string;

beforeAll(async () => {
  work = scratch.make();
  srv = await startServer({
    port: 0,
    host: '127.0.0.1',
    data: join(work, 'data'),
    bootstrapToken: ADMIN,
    quotaBytes: QUOTA,
    rateLimit: 0,
    print: () => {},
    log: () => {},
  });
}, 60_000);
afterAll(async () => {
  await srv?.close();
});

/** A session whose one segment is larger than the quota. */
function bigSession(): { dir: string; path: string } {
  const s = openSession(join(work, 'sessions'), { agent: 'quota-test' });
  for (let i = 0; i < 10; i++) s.note({ author: 'tester', text: `note ${i} ${'x'.repeat(100)}` });
  s.end();
  return { dir: s.dir, path: s.path };
}

const upload = (args: string[], token = ADMIN, url = srv.url) =>
  runHansard(['upload', ...args], { cwd: work, env: { HANSARD_URL: url, HANSARD_TOKEN: token } });

type JsonError = {
  error: { code: string; message: string; details: Record<string, unknown>; exit_code: number };
};

describe('hansard upload refused by the server', () => {
  it('413 quota_exceeded: --json has the code, quota_bytes and used_bytes; text names (413 quota_exceeded)', async () => {
    const s = bigSession();
    const json = await upload([s.dir, '--json']);
    expect(json.code).toBe(2);
    const e = (JSON.parse(json.err) as JsonError).error;
    expect(e.code).toBe('quota_exceeded');
    expect(e.exit_code).toBe(2);
    expect(e.details).toMatchObject({ status: 413, quota_bytes: QUOTA, file: s.path, offset: 0 });
    expect(typeof e.details.used_bytes).toBe('number');
    expect(e.message).toContain(`${s.path}: a chunk at offset 0`);

    const text = await upload([bigSession().dir]);
    expect(text.code).toBe(2);
    expect(text.err).toMatch(
      /^hansard: the server refused: .*a chunk at offset 0: .*\(413 quota_exceeded\)\n/,
    );
  });

  it('403 forbidden (a token without ingest): --json has the code and the scopes required', async () => {
    const made = await runHansard(['token', 'create', '--scopes', 'read', '--json'], {
      cwd: work,
      env: { HANSARD_URL: srv.url, HANSARD_TOKEN: ADMIN },
    });
    expect(made.code, made.err).toBe(0);
    const readToken = (JSON.parse(made.out) as { token: string }).token;
    const r = await upload([bigSession().dir, '--json'], readToken);
    expect(r.code).toBe(2);
    const e = (JSON.parse(r.err) as JsonError).error;
    expect(e.code).toBe('forbidden');
    expect(e.details).toMatchObject({ status: 403 });
    expect(e.details.required).toContain('ingest');
  });

  describe('429 rate_limited after the retries', () => {
    let limited: Server;
    let url: string;
    let answered = 0;
    beforeAll(async () => {
      limited = createServer((req, res) => {
        req.resume();
        // The chunk limits are asked for first; an answer without them leaves the defaults.
        if (req.url === '/healthz') {
          res.writeHead(200, { 'content-type': 'application/json' });
          res.end('{}');
          return;
        }
        answered += 1;
        res.writeHead(429, { 'content-type': 'application/json' });
        res.end(
          JSON.stringify({
            error: {
              code: 'rate_limited',
              message: 'this token may make 1 requests per 60 s: try again in 42 s',
              details: { limit: 1, window_seconds: 60, retry_after_seconds: 42 },
            },
          }),
        );
      });
      await new Promise<void>((r) => limited.listen(0, '127.0.0.1', r));
      url = `http://127.0.0.1:${(limited.address() as AddressInfo).port}`;
    });
    afterAll(() => new Promise<void>((r) => limited.close(() => r())));

    it('--json has rate_limited, 429 and retry_after_seconds, not 503 unavailable', async () => {
      const r = await upload([bigSession().dir, '--json'], ADMIN, url);
      expect(answered).toBe(6); // the first try and 5 retries
      expect(r.code).toBe(2);
      const e = (JSON.parse(r.err) as JsonError).error;
      expect(e.code).toBe('rate_limited');
      expect(e.details).toMatchObject({ status: 429, retry_after_seconds: 42 });
      expect(e.message).toContain('after 5 retries');
    }, 60_000);
  });
});
