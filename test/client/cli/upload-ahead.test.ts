/**
 * The upload client when another upload of the same segment got further than this run's view of the file
 * (issue 8.8, DESIGN §6 `hansard upload`): a real hansard server in-process, msw in front of it holding
 * this run's first chunk POST while another upload runs. A server at or past what this run meant to send
 * is done when its bytes are this file's, and still an error when they are not.
 */
import { appendFileSync, cpSync, mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { bypass, http } from 'msw';
import { describe, expect, it } from 'vitest';
import { ApiClient } from '../../../lib/client/api/client.js';
import { UsageError } from '../../../lib/client/api/errors.js';
import { uploadSession } from '../../../lib/client/api/upload.js';
import { openSession } from '../../../lib/log/write/writer.js';
import { useMswServer } from '../../support/msw-server.js';

const srv = useMswServer();
const { msw } = srv;

const client = () => new ApiClient({ url: srv.url, token: srv.token, minTimeoutMs: 5 });

/** A new session of one writer with `notes` notes, not ended (its writer may append more). */
function makeSession(notes: number) {
  const writer = openSession(mkdtempSync(join(srv.tmp, 'src-')), { agent: 'ahead-test' });
  for (let i = 0; i < notes; i++) writer.note({ author: 'tester', text: `note ${i} ${'x'.repeat(100)}` });
  return writer;
}

/**
 * Holds the first chunk POST of the segment until `meanwhile` has run, then lets it through; records the
 * status of every chunk POST the server answered.
 */
function holdFirstPost(sid: string, w: string, meanwhile: () => Promise<void>): number[] {
  const statuses: number[] = [];
  let held = false;
  msw.use(
    http.post(`${srv.url}/v1/sessions/${sid}/writers/${w}/chunks`, async ({ request }) => {
      if (!held) {
        held = true;
        await meanwhile();
      }
      const res = await fetch(bypass(request));
      statuses.push(res.status);
      return res;
    }),
  );
  return statuses;
}

/** What the server stores of a writer's segment. */
async function storedBytes(sid: string, w: string): Promise<Buffer> {
  const res = await fetch(`${srv.url}/v1/sessions/${sid}/writers/${w}/segment`, {
    headers: { authorization: `Bearer ${srv.token}` },
  });
  expect(res.status).toBe(200);
  return Buffer.from(await res.arrayBuffer());
}

describe('uploadSession when the server is ahead of this run', { timeout: 30_000 }, () => {
  it('is done when another upload sent more of the file than this run saw (409 past its view)', async () => {
    const writer = makeSession(3);
    const seen = readFileSync(writer.path).length;
    const statuses = holdFirstPost(writer.sid, writer.w, async () => {
      // While this run's chunk is on its way: the writer appends, another upload sends the longer file.
      for (let i = 0; i < 4; i++) writer.note({ author: 'tester', text: `later ${i}` });
      const other = await uploadSession(writer.dir, { client: client() });
      expect(other.segments[0]!.length).toBeGreaterThan(seen);
    });
    const r = await uploadSession(writer.dir, { client: client() });
    const file = readFileSync(writer.path);
    // the other run's chunk (201), then this run's shorter chunk at the same offset (409)
    expect(statuses).toEqual([201, 409]);
    expect(r.segments[0]).toMatchObject({ length: file.length, sent_bytes: 0, chunks: 0, pending_bytes: 0 });
    expect((await storedBytes(writer.sid, writer.w)).equals(file)).toBe(true);
  });

  it('is still an error when the server holds more than the file and it is not this file', async () => {
    const writer = makeSession(3);
    writer.end();
    // Another copy of the directory whose segment goes on differently, uploaded while this run waits.
    const copy = mkdtempSync(join(srv.tmp, 'copy-'));
    cpSync(writer.dir, copy, { recursive: true });
    const copyPath = join(copy, `${writer.w}.jsonl`);
    appendFileSync(copyPath, `${JSON.stringify({ note: 'only in the copy' })}\n`);
    holdFirstPost(writer.sid, writer.w, async () => {
      await uploadSession(copy, { client: client() });
    });
    const failed = uploadSession(writer.dir, { client: client() });
    await expect(failed).rejects.toBeInstanceOf(UsageError);
    // The first line that differs is named (issue 15.1), and that the file is the shorter.
    await expect(failed).rejects.toThrow(
      /line \d+ differs from what was uploaded \(the file has \d+ bytes, the server holds \d+\)/,
    );
  });

  it('is still an error when the server holds as much as the file but different lines', async () => {
    const writer = makeSession(4);
    writer.end();
    const file = readFileSync(writer.path);
    const lines = file.toString('utf8').split('\n').slice(0, -1);
    // The copy: the same first two lines, then one line as long as all the rest (same length, fewer lines).
    const head = `${lines.slice(0, 2).join('\n')}\n`;
    const restBytes = file.length - Buffer.byteLength(head);
    const stub = JSON.stringify({ seq: 99, pad: '' });
    const other = `${head}${JSON.stringify({ seq: 99, pad: 'y'.repeat(restBytes - stub.length - 1) })}\n`;
    expect(Buffer.byteLength(other)).toBe(file.length);
    const copy = mkdtempSync(join(srv.tmp, 'copy-'));
    cpSync(writer.dir, copy, { recursive: true });
    writeFileSync(join(copy, `${writer.w}.jsonl`), other);
    holdFirstPost(writer.sid, writer.w, async () => {
      await uploadSession(copy, { client: client() });
    });
    const failed = uploadSession(writer.dir, { client: client() });
    await expect(failed).rejects.toBeInstanceOf(UsageError);
    await expect(failed).rejects.toThrow(/line 3 differs from what was uploaded/);
  });
});
