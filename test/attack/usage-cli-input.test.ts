/**
 * Attack on `hansard usage` (lib/client/cli/cmd-usage.ts, docs/usage.md "Reading them") with bad input:
 * a range backwards, a recompute without the admin scope or of a directory, a session that is not there;
 * over the real CLI (in this process) against a real server on loopback, and on a local session
 * directory written by the real library writer (test/support/usage-sessions.ts). Every refusal must be a
 * clear message and a non-zero exit, never a stack trace; a local directory and a stored session must
 * answer the same question the same way.
 */
import { mkdirSync, mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { newId } from '../../lib/log/index.js';
import { runHansard } from '../support/cli.js';
import type { LocalSegment } from '../support/segments.js';
import { useServer } from '../support/server.js';
import { upload } from '../support/stored.js';
import { claudeSession, TODAY } from '../support/usage-sessions.js';

const srv = useServer({ tokens: { reader: ['read'] } });
const STACK = /\n\s+at\s|node_modules|\.ts:\d+/;

let seg: LocalSegment;
const env = () => ({ HANSARD_URL: srv.url, HANSARD_TOKEN: srv.tokens.reader });
const run = (args: string[], e: Record<string, string> = {}) => {
  mkdirSync(srv.workDir, { recursive: true });
  return runHansard(['usage', ...args], { cwd: srv.workDir, env: e });
};

describe('hansard usage, refused', () => {
  it('a stored session with --from after --to: refused with the reason (the server says 400)', async () => {
    // written apart from the CLI's working directory, so that a session id is not taken for a directory there
    seg = claudeSession(mkdtempSync(join(tmpdir(), 'usage-cli-')));
    await upload(srv, srv.admin, seg);
    const r = await run([seg.sid, '--from', '2026-12-07', '--to', '2026-12-01'], env());
    expect(r.code).not.toBe(0);
    expect(r.err).toMatch(/after/);
    expect(r.err).not.toMatch(STACK);
  });

  // Was a defect (a local directory filtered its deltas with no from <= to check and printed a known
  // $0.0000): cmd-usage.ts now refuses the range before reading anything, for a directory too.
  it('a local directory with --from after --to: refused as the stored session is', async () => {
    const r = await run([seg.dir, '--from', '2026-12-07', '--to', '2026-12-01', '--json']);
    expect(r.code).toBe(2);
    expect(r.err).toMatch(/after/);
  });

  it('a date that is not one: exit 2, the flag named', async () => {
    for (const bad of ['yesterday', '2026-12-07T25:00Z', '12/07/2026']) {
      const r = await run([seg.dir, '--from', bad]);
      expect(r.code).toBe(2);
      expect(r.err).toContain('--from');
      expect(r.err).not.toMatch(STACK);
    }
  });

  it('--recompute with a read token: refused by the server, said plainly; the counters untouched', async () => {
    const before = await run([seg.sid, '--json'], env());
    const r = await run([seg.sid, '--recompute'], env());
    expect(r.code).not.toBe(0);
    expect(r.err).toMatch(/admin|scope|forbidden/i);
    expect(r.err).not.toMatch(STACK);
    expect(r.err).not.toContain(srv.tokens.reader);
    expect((await run([seg.sid, '--json'], env())).out).toBe(before.out);
  });

  it('--recompute of a local directory: exit 2 (there is nothing to recompute on)', async () => {
    const r = await run([seg.dir, '--recompute']);
    expect(r.code).toBe(2);
    expect(r.err).not.toMatch(STACK);
  });

  it('a session id that is not stored, and a directory that is not there: a clear error', async () => {
    const missing = await run([newId('s'), '--json'], env());
    expect(missing.code).not.toBe(0);
    expect(missing.err).toMatch(/not found|no such|does not exist/i);
    expect(missing.err).not.toMatch(STACK);
    const nodir = await run([`${srv.workDir}/no/such/dir`]);
    expect(nodir.code).not.toBe(0);
    expect(nodir.err).not.toMatch(STACK);
  });

  it('the tenant over more than a year: refused with the limit', async () => {
    const r = await run(['--from', '2024-01-01', '--to', TODAY], env());
    expect(r.code).not.toBe(0);
    expect(r.err).toMatch(/366/);
    expect(r.err).not.toMatch(STACK);
  });
});
