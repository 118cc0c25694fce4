/**
 * `hansard import claude-code|codex FILE` says which person it recorded the prompts as (issue 14 finding 8):
 * a transcript does not name the person, so without `--user` every import is person `user`, and the
 * summary says so and how to name them; the README's import paragraph mentions `--user`.
 */
import { mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { afterEach, beforeEach, expect, it } from 'vitest';
import { runHansard } from '../../support/cli.js';

let root: string;
beforeEach(() => {
  root = mkdtempSync(join(tmpdir(), 'hansard-import-person-'));
});
afterEach(() => rmSync(root, { recursive: true, force: true }));

const run = (args: string[]) => runHansard(args, { cwd: root, env: {} });
const transcript = resolve('test/fixtures/cases/01-sidechain-subagent-prompt.jsonl');
const rollout = resolve('test/fixtures/synthetic/codex-rollout-tools.jsonl');

it('without --user: says the prompts are person "user" and how to name them', async () => {
  const r = await run(['import', 'claude-code', transcript]);
  expect(r.code).toBe(0);
  expect(r.err).toContain("recorded prompts as person 'user': pass --user NAME to name them");
  expect(segments(r.out.trim())).toContain('"user_id":"user"');
});

it('with --user: names the person it recorded, without the hint', async () => {
  const r = await run(['import', 'claude-code', transcript, '--user', 'ada']);
  expect(r.code).toBe(0);
  expect(r.err).toContain("recorded prompts as person 'ada'\n");
  expect(r.err).not.toContain('pass --user');
});

it('codex rollouts say the same', async () => {
  const r = await run(['import', 'codex', rollout]);
  expect(r.code).toBe(0);
  expect(r.err).toContain("recorded prompts as person 'user': pass --user NAME to name them");
});

it("the README's import paragraph mentions --user", () => {
  const readme = readFileSync('README.md', 'utf8');
  const para = readme.slice(readme.indexOf('A Claude Code transcript becomes a session'));
  expect(para.slice(0, 1200)).toContain('--user NAME');
});

/** All the segment files of a session directory, concatenated. */
function segments(dir: string): string {
  return readdirSync(dir)
    .filter((n) => n.endsWith('.jsonl'))
    .map((n) => readFileSync(join(dir, n), 'utf8'))
    .join('');
}
