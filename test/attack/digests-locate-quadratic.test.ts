/**
 * Issue 15 attack: `hansard verify --digests` goes quadratic on a tampered bundle. A session uploaded one
 * line per chunk (as hooks do) and a segment in which every line was edited in place (same length, e.g. a
 * search-and-replace over the file) makes locate-chunks look for an anchor at every chunk: for each one
 * it probes ~25 offsets × 16 candidates with 1-byte reads and scans a window to the file's end. Measured
 * on lib/audit/locate-chunks.ts directly (100-byte lines): 500 chunks 12.5 s, 1,000 33 s, 2,000 78 s,
 * 4,000 247 s, for a 400 KB segment. The answer is right (NOT verified) but an auditor's check of a
 * sub-megabyte bundle takes minutes, hours for a long session. Fixed (newline bitmap, per-length scan
 * memory, one hashing budget: lib/audit/chunk-search.ts): this test's CLI run takes ~2 s.
 *
 * Real server on loopback, the real export, the CLI in a child process with a time limit.
 */
import { spawnSync } from 'node:child_process';
import { mkdtempSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { beforeAll, describe, expect, it } from 'vitest';
import { generateSession } from '../../bench/gen.js';
import { listSegments } from '../../lib/log/index.js';
import { fetchExport, untarTo, useSigningServer } from '../support/export-bundle.js';
import { request } from '../support/http.js';

const ROOT = resolve(import.meta.dirname, '../..');
const { srv } = useSigningServer('hansard-attack-quad-keys-');
const LINES = 1500;

let sid: string;

beforeAll(async () => {
  const dir = await generateSession(srv.workDir, LINES, 1);
  sid = dir.split('/').pop()!;
  const { w, path } = listSegments(dir)[0]!;
  const bytes = readFileSync(path);
  // one line per chunk
  for (let offset = 0; offset < bytes.length; ) {
    const end = bytes.indexOf(0x0a, offset) + 1;
    const a = await request(srv, 'POST', `/v1/sessions/${sid}/writers/${w}/chunks?offset=${offset}`, {
      token: srv.tenant.admin,
      body: bytes.subarray(offset, end),
    });
    expect(a.status, a.text).toBe(201);
    offset = end;
  }
}, 120_000);

describe('issue 15 attack: locate-chunks time', () => {
  it('a bundle of 1,500 one-line chunks, every line edited in place, is refused within 20 s', async () => {
    const bundle = await fetchExport(srv, sid, srv.tokens.reader);
    const work = mkdtempSync(join(tmpdir(), 'hansard-attack-quad-'));
    // every line edited, same length: "v":3 → "v":4
    await untarTo(bundle, work, (name, body) =>
      name.includes('/segments/') ? Buffer.from(body.toString().replaceAll('"v":3', '"v":4')) : body,
    );
    const main = `const { runCli } = await import(${JSON.stringify(`${ROOT}/lib/client/cli/main.ts`)});
const io = { stdout: process.stdout, stderr: process.stderr, env: process.env, cwd: process.cwd() };
process.exitCode = await runCli(process.argv.slice(1), io);`;
    const started = Date.now();
    const r = spawnSync(
      process.execPath,
      [
        '--import',
        'tsx',
        '--input-type=module',
        '-e',
        main,
        'verify',
        '--digests',
        join(work, sid),
        '--json',
      ],
      { cwd: ROOT, encoding: 'utf8', timeout: 20_000, maxBuffer: 64 * 1024 * 1024 },
    );
    const took = Date.now() - started;
    // On the code under attack the child was killed at 20 s (status null), still walking the chunks; now
    // the locator's work is about linear (lib/audit/chunk-search.ts): ~2 s here, mostly process start.
    expect(r.status, `took ${took} ms`).toBe(1);
    console.log(`verify --digests on 1,500 edited one-line chunks: ${took} ms`);
    const report = JSON.parse(r.stdout) as { findings: Array<{ code: string }> };
    expect(report.findings.filter((f) => f.code === 'chunk_modified')).toHaveLength(LINES);
  }, 120_000);
});
