/**
 * `hansard import claude-code FILE` in-process (issue 10 item 1): the summary names the subagent writers
 * and compactions the transcript held, and the session directory holds one segment per writer.
 */
import { mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { afterEach, beforeEach, expect, it } from 'vitest';
import { runHansard } from '../../support/cli.js';

let root: string;
beforeEach(() => {
  root = mkdtempSync(join(tmpdir(), 'hansard-import-cc-cli-'));
});
afterEach(() => rmSync(root, { recursive: true, force: true }));

const run = (args: string[]) => runHansard(args, { cwd: root, env: {} });

it('says how many subagent writers it opened, one segment each beside the main one', async () => {
  const r = await run([
    'import',
    'claude-code',
    resolve('test/fixtures/cases/01-sidechain-subagent-prompt.jsonl'),
  ]);
  expect(r.code).toBe(0);
  expect(r.err).toContain('imported 1 prompt, 2 turns, 2 actions, 2 results');
  expect(r.err).toMatch(/, 1 subagent writer(?!s)/);
  expect(readdirSync(r.out.trim()).filter((n) => n.endsWith('.jsonl'))).toHaveLength(2);
});

it('inspect tells the subagent writer from the main one: its subagent id and the action that launched it', async () => {
  const r = await run([
    'import',
    'claude-code',
    resolve('test/fixtures/cases/01-sidechain-subagent-prompt.jsonl'),
  ]);
  const dir = r.out.trim();
  const json = JSON.parse((await run(['inspect', dir, '--json'])).out) as {
    writers: { w: string; subagent_id: string | null; parent_action_id: string | null }[];
  };
  const main = json.writers.find((w) => w.subagent_id === null)!;
  const sub = json.writers.find((w) => w.subagent_id !== null)!;
  expect(main.parent_action_id).toBeNull();
  const task = readFileSync(join(dir, `${main.w}.jsonl`), 'utf8')
    .split('\n')
    .filter(Boolean)
    .map((l) => JSON.parse(l) as { type: string; id: string; tool?: string })
    .find((e) => e.type === 'agent.action' && e.tool === 'Task')!;
  expect(sub.parent_action_id).toBe(task.id);
  const text = (await run(['inspect', dir])).out;
  expect(text).toContain(`writer ${sub.w}  claude-code (hansard import claude-code)`);
  expect(text).toContain(`, subagent ${sub.subagent_id} launched by action ${task.id}`);
  expect(text.split('\n').find((l) => l.includes(`writer ${main.w}`))).not.toContain('subagent');
});

it('says how many compactions it recorded: a boundary and the summary after it are one', async () => {
  const r = await run([
    'import',
    'claude-code',
    resolve('test/fixtures/cases/02-compact-summary-as-prompt.jsonl'),
  ]);
  expect(r.code).toBe(0);
  expect(r.err).toContain('imported 2 prompts, 2 turns, 0 actions, 0 results');
  expect(r.err).toContain(', 1 compaction');
  expect(r.err).not.toContain('2 compactions');
  expect(r.err).not.toContain('subagent');
});

it('says a result whose call is not in the file was kept with its id, not that a line could not be read', async () => {
  const r = await run(['import', 'claude-code', resolve('test/fixtures/cases/06-orphan-tool-result.jsonl')]);
  expect(r.code).toBe(0);
  // the 2 notes are the two assistant messages' token usage (issue 27)
  expect(r.err).toContain('imported 1 prompt, 1 turn, 1 action, 2 results, 1 output, 2 notes');
  expect(r.err).toContain(
    '; 1 result answers no call seen before it (kept with its call id; verify warns; first: line 4)',
  );
  expect(r.err).not.toContain('could not be read');
});

it('says a line that is not JSON could not be read and was kept as a note, apart from the rest', async () => {
  const lines = readFileSync(resolve('test/fixtures/cases/06-orphan-tool-result.jsonl'), 'utf8').split('\n');
  lines.splice(2, 0, '{"type": "user", "message": ');
  writeFileSync(join(root, 't.jsonl'), lines.join('\n'));
  const r = await run(['import', 'claude-code', 't.jsonl']);
  expect(r.code).toBe(0);
  expect(r.err).toContain(
    '; 1 line could not be read (kept as notes, first: line 3: line is not valid JSON)' +
      '; 1 result answers no call seen before it (kept with its call id; verify warns; first: line 5)',
  );
});

it('refuses a Codex rollout and names the command that imports it', async () => {
  const rollout = resolve('test/fixtures/synthetic/codex-rollout-tools.jsonl');
  const r = await run(['import', 'claude-code', rollout, '--out', 'sessions']);
  expect(r.code).toBe(2);
  expect(r.err).toContain('does not look like a Claude Code transcript');
  expect(r.err).toContain(
    `it looks like a Codex rollout: import it with \`hansard import codex ${rollout}\``,
  );
});
