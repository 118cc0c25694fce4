/** `hansard import codex FILE` in-process (issue 10 item 2): the session directory, exit codes, help. */
import { existsSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { runHansard } from '../../support/cli.js';

const SYNTHETIC = resolve('test/fixtures/synthetic/codex-rollout-tools.jsonl');
const CLAUDE = resolve('test/fixtures/real/ccl-representative_messages.jsonl');
const CASE34 = resolve('test/fixtures/cases/34-codex-compacted-item.jsonl');

let root: string;
beforeEach(() => {
  root = mkdtempSync(join(tmpdir(), 'hansard-import-codex-cli-'));
});
afterEach(() => rmSync(root, { recursive: true, force: true }));

const run = (args: string[]) => runHansard(args, { cwd: root, env: {} });

describe('hansard import codex', () => {
  it('prints the session directory, says what it imported, and the session verifies clean', async () => {
    const r = await run(['import', 'codex', SYNTHETIC, '--out', 'sessions']);
    expect(r.code).toBe(0);
    const dir = r.out.trim();
    expect(dir).toMatch(/[/\\]sessions[/\\]s_[0-9A-HJKMNP-TV-Z]{26}$/);
    expect(existsSync(dir)).toBe(true);
    expect(r.err).toContain(
      'imported 2 prompts, 2 turns, 4 actions, 3 results, 1 output, 1 reasoning summary,',
    );
    const v = await run(['verify', dir]);
    expect(v.code).toBe(0);
    expect(v.out).toMatch(/^ok: .* 0 errors/m);
  });

  it('exits 2 with a sentence for a missing file', async () => {
    const r = await run(['import', 'codex', 'nope.jsonl']);
    expect(r.code).toBe(2);
    expect(r.err).toMatch(/cannot read nope\.jsonl/);
    expect(r.out).toBe('');
  });

  it('exits 2 for a file that is not a Codex rollout and keeps nothing', async () => {
    const r = await run(['import', 'codex', CLAUDE, '--out', 'sessions']);
    expect(r.code).toBe(2);
    expect(r.err).toMatch(/does not look like a Codex rollout/);
    expect(r.err).toContain(
      `it looks like a Claude Code transcript: import it with \`hansard import claude-code ${CLAUDE}\``,
    );
    expect(existsSync(join(root, 'sessions')) ? readdirSync(join(root, 'sessions')) : []).toEqual([]);
    writeFileSync(join(root, 'text.jsonl'), 'hello\nworld\n');
    const t = await run(['import', 'codex', 'text.jsonl', '--out', 'sessions']);
    expect(t.code).toBe(2);
    expect(t.err).toMatch(/does not look like a Codex rollout/);
    expect(t.err).not.toContain('it looks like');
  });

  it('says how many compactions, interruptions and skipped lines it counted, as --json does', async () => {
    // Case 34 (one compaction written three ways), then a prompt the person stopped mid-call.
    const more = [
      { type: 'event_msg', payload: { type: 'user_message', message: 'and the prices?', images: [] } },
      {
        type: 'response_item',
        payload: { type: 'function_call', name: 'shell', arguments: '{"command":["ls"]}', call_id: 'call_x' },
      },
      { type: 'event_msg', payload: { type: 'turn_aborted', reason: 'interrupted' } },
    ].map((l, i) => JSON.stringify({ timestamp: `2026-11-02T09:20:0${i}.000Z`, ...l }));
    const file = join(root, 'rollout.jsonl');
    writeFileSync(file, `${readFileSync(CASE34, 'utf8')}${more.join('\n')}\n`);
    const json = await run(['import', 'codex', file, '--json']);
    const c = JSON.parse(json.out).counts as { compactions: number; interruptions: number; skipped: object };
    const skipped = Object.values(c.skipped).reduce((n: number, k: number) => n + k, 0);
    expect([c.compactions, c.interruptions, skipped]).toEqual([1, 1, 8]);
    const r = await run(['import', 'codex', file]);
    expect(r.code).toBe(0);
    expect(r.err).toContain(
      ', 1 compaction, 1 interruption, 8 lines skipped (copies of what is recorded, and telemetry; --json lists them)',
    );
  });

  it('is listed by hansard import --help', async () => {
    const r = await run(['import', '--help']);
    expect(r.out + r.err).toMatch(/codex \[options\] <rollout>/);
    expect(r.out + r.err).toMatch(/claude-code/);
  });
});
