/**
 * The `05b` case and its kind (issue 15 item 1): any edit of bytes `hansard upload` already sent, of any
 * length, anywhere (first chunk, middle, last uploaded chunk), and a file cut below the uploaded length,
 * is refused with exit 2 naming the first differing line, and the server keeps what it had (its raw
 * replay is the original bytes). And when every chunk the server lists matches the file but the writer's
 * chained digest (`digest` of `GET …/writers/{w}`) does not, the server's chunk list and index disagree:
 * refused too, nothing sent. A real server on loopback, the real CLI in-process
 * (test/client/cli/upload-changed-bytes.test.ts holds the 05b fixture itself).
 */
import { readFileSync, writeFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { openLocalStores } from '../../../lib/deploy/local.js';
import { openSession } from '../../../lib/log/index.js';
import { runHansard } from '../../support/cli.js';
import { request } from '../../support/http.js';
import { useServer } from '../../support/server.js';
import { tmpDirs } from '../../support/tmp.js';

/** Sessions whose writer index is made to answer a wrong chained digest (the disagreement case). */
const tampered = new Set<string>();
const srv = useServer({
  tokens: { ingest: ['ingest'] },
  stores: (dir) => {
    const stores = openLocalStores(dir);
    const state = stores.state;
    const getWriter = state.getWriter.bind(state);
    state.getWriter = async (tenant, sid, w) => {
      const rec = await getWriter(tenant, sid, w);
      return rec && tampered.has(sid) ? { ...rec, chain: 'f'.repeat(64) } : rec;
    };
    return stores;
  },
});
const scratch = tmpDirs('hansard-upload-edits-');

const upload = (dir: string, token = srv.tenant.admin) =>
  runHansard(['upload', dir], { cwd: process.cwd(), env: { HANSARD_URL: srv.url, HANSARD_TOKEN: token } });

interface Uploaded {
  sid: string;
  dir: string;
  path: string;
  original: Buffer;
  /** the file's lines, each with its newline */
  lines: string[];
}

/**
 * A session of one writer with 9 lines (writer.start and 8 messages), uploaded in three runs of three
 * lines each, so the server holds three chunks: lines 1–3, 4–6 and 7–9.
 */
async function uploadedInThree(): Promise<Uploaded> {
  const w = openSession(scratch.make(), { agent: 'coder' });
  for (let k = 2; k <= 9; k++) w.message({ user_id: 'ann', text: `the text of line ${k}` });
  w.close();
  const original = readFileSync(w.path);
  const lines = original.toString('utf8').split(/(?<=\n)/);
  expect(lines).toHaveLength(9);
  for (const n of [3, 6, 9]) {
    writeFileSync(w.path, lines.slice(0, n).join(''));
    const r = await upload(w.dir);
    expect(r.code, r.err).toBe(0);
  }
  const chunks = await request(srv, {
    method: 'GET',
    path: `/v1/sessions/${w.sid}/writers/${w.w}/chunks`,
    token: srv.tenant.admin,
  });
  expect((chunks.json as { chunks: { lines: number }[] }).chunks.map((c) => c.lines)).toEqual([3, 6, 9]);
  return { sid: w.sid, dir: w.dir, path: w.path, original, lines };
}

/** The server's raw replay of the session, as bytes. */
async function rawReplay(sid: string): Promise<Buffer> {
  const res = await request(srv, {
    method: 'GET',
    path: `/v1/sessions/${sid}/replay?raw=1`,
    token: srv.tenant.admin,
  });
  expect(res.status).toBe(200);
  return res.bytes;
}

/** A new line the edited file also carries at its end: the upload would have something to send. */
const APPENDED = (u: Uploaded) =>
  u.lines[8]!.replace('the text of line 9', 'a line added after the upload').replace(/"seq":9/, '"seq":10');

/** Each edit of the uploaded file, and the line the refusal must name. */
const EDITS: { name: string; edit: (u: Uploaded) => string; line: number }[] = [
  {
    name: 'same length, middle chunk',
    edit: (u) => u.original.toString().replace('the text of line 5', 'THE TEXT OF LINE 5'),
    line: 5,
  },
  {
    name: 'shorter line',
    edit: (u) => u.original.toString().replace('the text of line 5', 'line 5'),
    line: 5,
  },
  {
    name: 'longer line',
    edit: (u) => u.original.toString().replace('the text of line 5', 'the much longer text of line 5'),
    line: 5,
  },
  {
    name: 'a deleted line',
    edit: (u) => [...u.lines.slice(0, 4), ...u.lines.slice(5)].join(''),
    line: 5,
  },
  {
    name: 'an inserted line',
    edit: (u) => [...u.lines.slice(0, 4), u.lines[3]!, ...u.lines.slice(4)].join(''),
    line: 5,
  },
  {
    name: 'one byte changed in the first chunk',
    edit: (u) => u.original.toString().replace('the text of line 2', 'the text of line X'),
    line: 2,
  },
  {
    name: 'one byte changed in the last uploaded chunk',
    edit: (u) => u.original.toString().replace('the text of line 9', 'the text of line X'),
    line: 9,
  },
];

describe('an edit of uploaded bytes', () => {
  for (const { name, edit, line } of EDITS) {
    it(`${name}: refused naming line ${line}, the server keeps what it had`, async () => {
      const u = await uploadedInThree();
      writeFileSync(u.path, edit(u) + APPENDED(u));
      const r = await upload(u.dir);
      expect(r.code, r.err).toBe(2);
      expect(r.err).toMatch(
        new RegExp(`is not the segment the server has: line ${line} differs from what was uploaded`),
      );
      expect(r.err).toMatch(/The server keeps what it had/);
      expect((await rawReplay(u.sid)).equals(u.original)).toBe(true);
    });
  }
});

describe('a file cut below what was uploaded', () => {
  const CUTS: { name: string; cut: (u: Uploaded) => string; line: number }[] = [
    { name: 'inside line 8', cut: (u) => u.lines.slice(0, 7).join('') + u.lines[7]!.slice(0, 20), line: 8 },
    { name: 'at the end of the second chunk', cut: (u) => u.lines.slice(0, 6).join(''), line: 7 },
    { name: 'by the last newline only', cut: (u) => u.original.toString().slice(0, -1), line: 9 },
  ];
  for (const { name, cut, line } of CUTS) {
    it(`${name}: refused naming line ${line}`, async () => {
      const u = await uploadedInThree();
      writeFileSync(u.path, cut(u));
      const r = await upload(u.dir);
      expect(r.code, r.err).toBe(2);
      expect(r.err).toMatch(
        new RegExp(
          `line ${line} differs from what was uploaded \\(the file has \\d+ bytes, the server holds \\d+\\)`,
        ),
      );
      expect((await rawReplay(u.sid)).equals(u.original)).toBe(true);
    });
  }
});

describe("the server's chunk list and its writer index disagree", () => {
  it('every chunk matches the file but the chained digest does not: refused, nothing sent', async () => {
    const u = await uploadedInThree();
    const writer = await request(srv, {
      method: 'GET',
      path: `/v1/sessions/${u.sid}/writers/${u.path.match(/w_[0-9A-Z]{26}/)![0]}`,
      token: srv.tenant.admin,
    });
    // The server states the chain of what it holds (issue 15.1).
    expect((writer.json as { digest?: unknown }).digest).toMatch(/^[0-9a-f]{64}$/);
    tampered.add(u.sid);
    try {
      writeFileSync(u.path, u.original.toString() + APPENDED(u));
      const r = await upload(u.dir, srv.tokens.ingest);
      expect(r.code, r.err).toBe(2);
      expect(r.err).toMatch(/disagrees with itself: every chunk it lists .* matches this file/);
      expect(r.err).toMatch(/their chained digest is [0-9a-f]{64} where its index says f{64}/);
      expect(r.err).toMatch(/Nothing was sent/);
    } finally {
      tampered.delete(u.sid);
    }
    expect((await rawReplay(u.sid)).equals(u.original)).toBe(true);
    // The same file uploads once the index agrees again: the check compared, it did not guess.
    const again = await upload(u.dir, srv.tokens.ingest);
    expect(again.code, again.err).toBe(0);
    expect((await rawReplay(u.sid)).length).toBeGreaterThan(u.original.length);
  });
});
