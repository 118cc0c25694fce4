/**
 * The CLI against a server whose storage fails (issue 8, durability attack E): `hansard replay`,
 * `inspect` and `upload` run in-process (runCli) against a real server on loopback over real files. A
 * storage fault the operator must fix (`data_loss`) is shown at once with its code, message, writer and
 * byte range and whom to ask, not retried five times into a generic 503; a fault that may pass
 * (`storage_read_only`, from a real read-only tmpfs) is tried a couple of times and then named; a replay
 * the server breaks off mid-way says so, with how many bytes came, and no stack trace.
 */
import { execFileSync } from 'node:child_process';
import { appendFileSync, mkdirSync, mkdtempSync, rmSync, truncateSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { runCli } from '../../../lib/client/cli/main.js';
import { openLocalStores } from '../../../lib/deploy/local.js';
import { chunkedSegment, postChunk } from '../../durability/segment-chunks.js';
import { writeSession } from '../../support/segments.js';
import { makeTenant, startServer, type TestServer } from '../../support/server.js';
import { storedSegmentPath } from '../../support/stored.js';

const work = mkdtempSync(join(tmpdir(), 'hansard-cli-faults-'));
let srv: TestServer;
let admin: string;
/** the tmpfs the segments live on, when this process may mount one (root) */
let tenantsMount: string | null = null;

beforeAll(async () => {
  srv = await startServer({}, (dataDir) => {
    const tenants = join(dataDir, 'tenants');
    mkdirSync(tenants, { recursive: true });
    try {
      execFileSync('mount', ['-t', 'tmpfs', '-o', 'size=64m', 'tmpfs', tenants], { stdio: 'pipe' });
      tenantsMount = tenants;
    } catch {
      // not root: the read-only case is skipped
    }
    return openLocalStores(dataDir);
  });
  admin = (await makeTenant(srv, 'local')).admin;
});

afterAll(async () => {
  if (tenantsMount) {
    execFileSync('mount', ['-o', 'remount,rw', tenantsMount]);
    execFileSync('umount', [tenantsMount]);
  }
  await srv?.close();
  rmSync(work, { recursive: true, force: true });
});

/** `hansard ARGS` in this process; `onWrite` sees each write to stdout. */
async function hansard(args: string[], onWrite?: (bytes: number) => void) {
  let out = 0;
  let err = '';
  const io = {
    stdout: {
      write: (s: string | Uint8Array) => {
        out += typeof s === 'string' ? Buffer.byteLength(s) : s.length;
        onWrite?.(out);
        return true;
      },
    },
    stderr: { write: (s: string) => (err += s) },
    env: { HANSARD_URL: srv.url, HANSARD_TOKEN: admin },
    cwd: work,
  };
  const code = await runCli(args, io);
  return { code, out, err };
}

describe('a segment cut behind the server’s back', () => {
  let seg: ReturnType<typeof writeSession>;
  let cut: number;
  beforeAll(async () => {
    seg = writeSession(join(work, 'cut'));
    const up = await hansard(['upload', seg.dir]);
    expect(up.code, up.err).toBe(0);
    cut = seg.bytes.length - 40;
    truncateSync(storedSegmentPath(srv, 'local', seg.sid, seg.w), cut);
  });

  for (const args of [
    (s: typeof seg) => ['replay', s.sid],
    (s: typeof seg) => ['replay', s.sid, '--format', 'text'],
    (s: typeof seg) => ['inspect', s.sid],
    (s: typeof seg) => ['upload', s.dir],
  ]) {
    it(`hansard ${args({ sid: 'SID', dir: 'DIR' } as typeof seg)[0]} … shows data_loss with the writer and the range at once, exit 1`, async () => {
      if (args(seg)[0] === 'upload') appendFileSync(seg.path, `${seg.lines[1]!.toString().trim()}\n`);
      const r = await hansard(args(seg));
      expect(r.code).toBe(1);
      expect(r.out).toBe(0);
      expect(r.err).toContain(
        `hansard: the server's storage failed: data_loss (500): the server has lost bytes [${cut}, ${seg.bytes.length})`,
      );
      expect(r.err).toContain(`  writer: ${seg.w}\n`);
      expect(r.err).toContain(`  bytes: [${cut}, ${seg.bytes.length}) of its segment\n`);
      expect(r.err).toMatch(
        /hint: no retry changes this: ask the server's operator; see docs\/operations\.md#data_loss/,
      );
      expect(r.err).not.toMatch(/retrying|unavailable|after retries/);
    });
  }
});

describe.skipIf(process.getuid?.() !== 0)(
  'the segments on a read-only filesystem (a real tmpfs remounted ro)',
  () => {
    it('hansard upload tries a couple of times, then names storage_read_only and the server’s message, exit 1', async () => {
      expect(tenantsMount).not.toBeNull();
      const seg = writeSession(join(work, 'ro'));
      execFileSync('mount', ['-o', 'remount,ro', tenantsMount!]);
      try {
        const r = await hansard(['upload', seg.dir]);
        expect(r.code).toBe(1);
        expect(r.err).toContain(
          "hansard: the server's storage failed: storage_read_only (503): the server's storage is read-only",
        );
        expect(r.err).toContain('  resume at: byte 0\n');
        expect(r.err).toMatch(
          /hint: it did not pass while this command tried again; run it again later, or ask the server's operator; see docs\/operations\.md#storage_read_only/,
        );
        expect(r.err.match(/the server answered 503 storage_read_only; retrying/g)).toHaveLength(2);
        expect(r.err).not.toMatch(/unavailable|a server fault/);
      } finally {
        execFileSync('mount', ['-o', 'remount,rw', tenantsMount!]);
      }
      expect((await hansard(['upload', seg.dir])).code).toBe(0);
    });
  },
);

describe('a segment cut while hansard replay streams it', () => {
  it('says the server stopped sending after N bytes, exit 1, no stack trace', async () => {
    // Larger than what the sockets and streams between the file and the client buffer.
    const seg = chunkedSegment(join(work, 'big'), 32 * 1024 * 1024, 4 * 1024 * 1024, 32 * 1024);
    let offset = 0;
    for (const chunk of seg.chunks) {
      expect((await postChunk(srv.url, admin, seg, offset, chunk)).status).toBe(201);
      offset += chunk.length;
    }
    const file = storedSegmentPath(srv, 'local', seg.sid, seg.w);
    let cutDone = false;
    const r = await hansard(['replay', seg.sid, '--raw'], () => {
      if (cutDone) return;
      cutDone = true;
      truncateSync(file, 1024 * 1024);
    });
    expect(cutDone).toBe(true);
    expect(r.code, r.err).toBe(1);
    expect(r.out).toBeLessThan(seg.bytes.length);
    expect(r.err).toMatch(
      new RegExp(`^hansard: the server stopped sending the replay of ${seg.sid} after ${r.out} bytes: `),
    );
    expect(r.err).toContain(`hansard verify ${seg.sid}`);
    expect(r.err).not.toMatch(/unexpected error|\n\s+at /);
  });
});
