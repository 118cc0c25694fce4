/** `hansard verify|inspect DIR` in-process (issue 3): exit codes, text and --json output. */
import { appendFileSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { VERIFY_CODE_INFO } from '../../../lib/log/analyse/verify-codes.js';
import { openSession } from '../../../lib/log/index.js';
import { runHansard } from '../../support/cli.js';

let root: string;
beforeEach(() => {
  root = mkdtempSync(join(tmpdir(), 'hansard-verify-cli-'));
});
afterEach(() => rmSync(root, { recursive: true, force: true }));

const run = (args: string[]) => runHansard(args, { cwd: root, env: {} });

function session(torn = false): string {
  const s = openSession(root, { agent: 'bot' });
  const m = s.message({ user_id: 'priya', text: 'hi' });
  s.turnStart({ context_message_ids: [m.id] });
  if (torn) appendFileSync(s.path, '{"v":3,"sid":\n');
  s.end();
  return s.dir;
}

describe('hansard verify', () => {
  it('exits 0 and says ok for a clean session', async () => {
    const r = await run(['verify', session()]);
    expect(r.code).toBe(0);
    expect(r.out).toMatch(/^ok: 4 events in 1 writer; 0 errors, 0 warnings, 0 info$/m);
  });

  it('exits 1 and names the code and line when a rule is broken, also with --json', async () => {
    const dir = session(true);
    const r = await run(['verify', dir]);
    expect(r.code).toBe(1);
    expect(r.out).toMatch(/error\s+truncated_line\s+w_\w+ line 4:/);
    const j = await run(['verify', dir, '--json']);
    expect(j.code).toBe(1);
    const report = JSON.parse(j.out);
    expect(report.ok).toBe(false);
    expect(report.problems[0]).toMatchObject({ severity: 'error', code: 'truncated_line', line: 4 });
  });

  it('exits 2 for a path that is not a session', async () => {
    const r = await run(['verify', join(root, 'nope')]);
    expect(r.code).toBe(2);
    expect(r.err).toContain('neither a session directory nor a session id');
  });
});

describe('hansard inspect', () => {
  it('prints a summary, and the same summary as JSON with --json', async () => {
    const dir = session();
    const r = await run(['inspect', dir]);
    expect(r.code).toBe(0);
    expect(r.out).toContain('4 events, 1 writer,');
    expect(r.out).toContain('participants: priya (1 message)');
    const j = JSON.parse((await run(['inspect', dir, '--json'])).out);
    expect(j).toMatchObject({ events: 4, turns: { total: 1, by_status: { open: 1 } }, verify: { ok: true } });
  });
});

describe('hansard verify --codes', () => {
  it('lists every code with its severity and meaning, from the code that reports them', async () => {
    const r = await run(['verify', '--codes']);
    expect(r.code).toBe(0);
    // the log's section (the bundle's follows a blank line: test/client/cli/verify-codes-bundle.test.ts)
    const lines = r.out.split('\n\n')[0]!.trimEnd().split('\n').slice(1);
    expect(lines).toHaveLength(Object.keys(VERIFY_CODE_INFO).length);
    expect(lines).toContain(
      "error    seq_gap                     a writer's seq does not start at 1 or skips numbers: events are missing",
    );
    // Markdown is the docs' business: no backticks or links in a terminal.
    expect(r.out).not.toMatch(/`|\]\(|\.md/);
    const json = await run(['verify', '--codes', '--json']);
    expect(JSON.parse(json.out).log).toEqual(VERIFY_CODE_INFO);
  });

  it('needs a session otherwise (exit 2), and its help names no repository file', async () => {
    const r = await run(['verify']);
    expect(r.code).toBe(2);
    expect(r.err).toContain('which session?');
    const help = await run(['verify', '--help']);
    expect(help.out).toContain('hansard verify --codes');
    expect(help.out).not.toMatch(/docs\/|seed|\.md/);
  });
});
