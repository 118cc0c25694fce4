/**
 * `hansard replay SID` of a large session on AWS (issue 17.2): the API answers 202 while it merges a stored
 * copy, then 303 to a short-lived URL of it (lib/service/sessions/large-replay.ts). Against two stand-in servers on
 * loopback (the API, and the host of the stored copy): the CLI waits as `Retry-After` says, saying so on
 * stderr, prints the copy's bytes, and never sends its token to the copy's host; a wait longer than the
 * CLI's limit ends with a sentence and exit 1, not a hang.
 */
import { createServer, type IncomingHttpHeaders, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { runHansard } from '../../support/cli.js';
import { tmpDirs } from '../../support/tmp.js';

const scratch = tmpDirs('hansard-replay-large-');
const SID = 's_01J00000000000000000000000';
const TOKEN = `hns_${'R'.repeat(43)}`;
const COPY = Buffer.from('{"v":3,"line":1}\n{"v":3,"line":2}\n');

let api: Server;
let store: Server;
let apiUrl: string;
let storeUrl: string;
/** what each stand-in was asked, with the headers */
const apiAsked: Array<{ url: string; headers: IncomingHttpHeaders }> = [];
const storeAsked: Array<{ url: string; headers: IncomingHttpHeaders }> = [];
/** 202s the API answers before its 303 (per session id) */
let building = 1;
let retryAfter = '1';

const listen = async (s: Server) => {
  await new Promise<void>((done) => s.listen(0, '127.0.0.1', done));
  return `http://127.0.0.1:${(s.address() as AddressInfo).port}`;
};

beforeAll(async () => {
  store = createServer((req, res) => {
    storeAsked.push({ url: req.url ?? '', headers: req.headers });
    res.writeHead(200, { 'content-type': 'application/x-ndjson', 'content-length': COPY.length });
    res.end(COPY);
  });
  storeUrl = await listen(store);
  api = createServer((req, res) => {
    apiAsked.push({ url: req.url ?? '', headers: req.headers });
    if (building > 0) {
      building -= 1;
      res.writeHead(202, { 'content-type': 'application/json', 'retry-after': retryAfter });
      res.end(
        JSON.stringify({ status: 'building', session_bytes: 9_000_000, retry_after: Number(retryAfter) }),
      );
      return;
    }
    const url = `${storeUrl}/replays/acme/${SID}/abc.ndjson?X-Amz-Signature=00`;
    res.writeHead(303, { 'content-type': 'application/json', location: url });
    res.end(
      JSON.stringify({ status: 'ready', session_bytes: 9_000_000, replay: { url, bytes: COPY.length } }),
    );
  });
  apiUrl = await listen(api);
});

afterAll(async () => {
  for (const s of [api, store]) {
    s.closeAllConnections();
    await new Promise((done) => s.close(done));
  }
});

describe('hansard replay of a session the server stores a copy of', () => {
  it('waits while it is merged, prints the copy, and keeps the token to the API', async () => {
    building = 2;
    retryAfter = '1';
    apiAsked.length = 0;
    storeAsked.length = 0;
    const r = await runHansard(['replay', SID], {
      cwd: scratch.make(),
      env: { HANSARD_URL: apiUrl, HANSARD_TOKEN: TOKEN },
    });
    expect(r.code, r.err).toBe(0);
    expect(r.out).toBe(COPY.toString());
    expect(r.err).toMatch(/merging the replay of s_\w+ \(a large session\); asking again in 1 s/);
    expect(apiAsked).toHaveLength(3);
    for (const a of apiAsked) {
      expect(a.url).toBe(`/v1/sessions/${SID}/replay?format=ndjson`);
      expect(a.headers.authorization).toBe(`Bearer ${TOKEN}`);
    }
    expect(storeAsked).toHaveLength(1);
    expect(storeAsked[0]!.url).toContain('X-Amz-Signature=00');
    expect(storeAsked[0]!.headers.authorization).toBeUndefined();
  }, 30_000);

  it('stops with a sentence when the server asks it to wait past its limit', async () => {
    building = 1;
    retryAfter = String(3 * 60 * 60);
    const r = await runHansard(['replay', SID], {
      cwd: scratch.make(),
      env: { HANSARD_URL: apiUrl, HANSARD_TOKEN: TOKEN },
    });
    expect(r.code).toBe(1);
    expect(r.out).toBe('');
    expect(r.err).toMatch(/still merging the replay after \d+ s: run the command again later/);
    building = 0;
  }, 30_000);
});
