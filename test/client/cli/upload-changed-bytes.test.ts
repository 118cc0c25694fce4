/**
 * `hansard upload` refuses a file whose already-uploaded bytes changed, even when the change keeps the
 * file's length and line count (test/fixtures/cases/05-*, 05b-*; issue 15 item 1): it compares each
 * acknowledged chunk's SHA-256 (`GET …/writers/{w}/chunks`) with the same bytes of the file, names the
 * first differing line, and sends nothing, so the server keeps what it had. A real server on loopback,
 * the real CLI in-process.
 */
import { copyFileSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { runHansard } from '../../support/cli.js';
import { request } from '../../support/http.js';
import { useServer } from '../../support/server.js';
import { tmpDirs } from '../../support/tmp.js';

const CASES = 'test/fixtures/cases';
const BEFORE = join(CASES, '05-segment-rewritten-after-upload.before.jsonl');
const AFTER = join(CASES, '05b-same-length-edit-after-upload.after.jsonl');
const SID = 's_01M8PZQHZJW9RP7SB7CRX944BR';
const W = 'w_01M8PZQHZJWWKHXHVVVGWSJZEB';

const srv = useServer({ tokens: { ingest: ['ingest'] } });
const scratch = tmpDirs('hansard-upload-changed-');

/** A session directory holding the case's segment as `file`. */
function sessionWith(file: string): { dir: string; segment: string } {
  const dir = join(scratch.make(), SID);
  mkdirSync(dir);
  const segment = join(dir, `${W}.jsonl`);
  copyFileSync(file, segment);
  return { dir, segment };
}

async function stored(): Promise<string> {
  const res = await request(srv, {
    method: 'GET',
    path: `/v1/sessions/${SID}/writers/${W}/segment`,
    token: srv.tenant.admin,
  });
  expect(res.status).toBe(200);
  return res.text;
}

const upload = (dir: string, token: string) =>
  runHansard(['upload', dir], { cwd: process.cwd(), env: { HANSARD_URL: srv.url, HANSARD_TOKEN: token } });

describe('case 05b: a same-length edit of an uploaded line', () => {
  it('is refused naming line 3, nothing is sent, and the server keeps what it had', async () => {
    const before = readFileSync(BEFORE);
    const after = readFileSync(AFTER);
    // The case as its README states it: same bytes up to the edit, one line longer after it.
    expect(after.subarray(0, before.length).equals(before)).toBe(false);
    expect(after.subarray(0, before.length).toString().split('\n').length).toBe(
      before.toString().split('\n').length,
    );

    const { dir, segment } = sessionWith(BEFORE);
    const first = await upload(dir, srv.tenant.admin);
    expect(first.code).toBe(0);
    expect(await stored()).toBe(before.toString());

    writeFileSync(segment, after);
    const second = await upload(dir, srv.tenant.admin);
    expect(second.code).toBe(2);
    expect(second.err).toMatch(/is not the segment the server has: line 3 differs from what was uploaded/);
    expect(second.err).toMatch(/append-only/);
    expect(await stored()).toBe(before.toString());
  });

  it('with a token that may not read segments back, names the lines of the chunk that changed', async () => {
    // A session of its own (the first test's holds the same writer id).
    const before = readFileSync(BEFORE).toString();
    const sid2 = 's_01M8QD00000000000000000000';
    const dir2 = join(scratch.make(), sid2);
    mkdirSync(dir2);
    const seg2 = join(dir2, `${W}.jsonl`);
    writeFileSync(seg2, before.replaceAll(SID, sid2));
    expect((await upload(dir2, srv.tokens.ingest)).code).toBe(0);
    writeFileSync(seg2, readFileSync(AFTER).toString().replaceAll(SID, sid2));
    const second = await upload(dir2, srv.tokens.ingest);
    expect(second.code).toBe(2);
    expect(second.err).toMatch(/one of lines 1–4 \(bytes 0–\d+\) differs from what was uploaded/);
  });

  it('an unchanged prefix with appended lines still uploads (the digests match)', async () => {
    const sid3 = 's_01M8QD11111111111111111111';
    const dir = join(scratch.make(), sid3);
    mkdirSync(dir);
    const seg = join(dir, `${W}.jsonl`);
    const before = readFileSync(BEFORE).toString().replaceAll(SID, sid3);
    writeFileSync(seg, before);
    expect((await upload(dir, srv.tokens.ingest)).code).toBe(0);
    const extra = readFileSync(AFTER).toString().split('\n')[4]!.replaceAll(SID, sid3);
    writeFileSync(seg, `${before}${extra}\n`);
    const again = await upload(dir, srv.tokens.ingest);
    expect(again.err).not.toMatch(/not the segment/);
    expect(again.code).toBe(0);
    expect(again.out).toMatch(/1 line/);
  });
});

describe('GET …/writers/{w}/chunks', () => {
  it('lists each acknowledged chunk with its SHA-256, a page at a time', async () => {
    const sid4 = 's_01M8QD22222222222222222222';
    const dir = join(scratch.make(), sid4);
    mkdirSync(dir);
    const lines = readFileSync(BEFORE).toString().replaceAll(SID, sid4).split('\n').filter(Boolean);
    const seg = join(dir, `${W}.jsonl`);
    // Three uploads of one, two and one more lines: three chunks.
    for (const n of [1, 3, 4]) {
      writeFileSync(seg, `${lines.slice(0, n).join('\n')}\n`);
      expect((await upload(dir, srv.tokens.ingest)).code).toBe(0);
    }
    const page = async (q: string) =>
      request(srv, {
        method: 'GET',
        path: `/v1/sessions/${sid4}/writers/${W}/chunks${q}`,
        token: srv.tokens.ingest,
      });
    const all = await page('');
    expect(all.status).toBe(200);
    const body = all.json as {
      chunks: { offset: number; length: number; sha256: string; lines: number }[];
      next_from: number | null;
    };
    expect(body.chunks.map((c) => c.lines)).toEqual([1, 3, 4]);
    expect(body.next_from).toBeNull();
    const file = readFileSync(seg);
    const { createHash } = await import('node:crypto');
    for (const c of body.chunks)
      expect(c.sha256).toBe(
        createHash('sha256')
          .update(file.subarray(c.offset, c.offset + c.length))
          .digest('hex'),
      );
    const one = (await page('?limit=1')).json as typeof body;
    expect(one.chunks).toHaveLength(1);
    expect(one.next_from).toBe(body.chunks[1]!.offset);
    const rest = (await page(`?from=${one.next_from}&limit=5`)).json as typeof body;
    expect(rest.chunks.map((c) => c.lines)).toEqual([3, 4]);
    expect(rest.next_from).toBeNull();
    expect((await page('?limit=0')).status).toBe(400);
    expect((await page('?from=0x10')).status).toBe(400);
  });
});
