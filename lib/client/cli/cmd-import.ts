/**
 * `hansard import claude-code TRANSCRIPT.jsonl [--out DIR]` and `hansard import codex ROLLOUT.jsonl [--out DIR]`
 * (DESIGN §6, docs/import.md): another tool's record of a session into a hansard session. Each also takes
 * the tool's own streamed output, told apart by its first JSON object (cmd-import-streams.ts).
 */
import { rmSync } from 'node:fs';
import { resolve } from 'node:path';
import type { Command } from 'commander';
import { importCodexRollout } from '../../importers/codex.js';
import { importClaudeCodeTranscript } from '../../importers/index.js';
import { UsageError } from '../api/errors.js';
import { type Io, printJson } from '../api/io.js';
import { describeFsError } from '../api/upload.js';
import { registerImportHcn } from './cmd-hcn.js';
import { importStreamIfAny } from './cmd-import-streams.js';
import {
  counted,
  DEFAULT_IMPORT_USER,
  eventWords,
  otherImporter,
  personLine,
  problemWords,
} from './import-words.js';
import { jsonOption } from './options.js';

export function registerImport(program: Command, io: Io): void {
  const imp = program
    .command('import')
    .description("turn another tool's transcript into a hansard session")
    .addHelpText(
      'after',
      '\nSources: claude-code (transcripts), codex (rollouts), hcn (hcn run --json and hcn-observer/1 streams).\n' +
        'claude-code also takes claude -p --output-format stream-json output, codex also codex exec --json output.',
    );
  imp
    .command('claude-code')
    .description(
      'import a Claude Code transcript (~/.claude/projects/…/*.jsonl) or claude -p --output-format stream-json output',
    )
    .argument('<transcript>', 'the transcript file')
    .option('--out <dir>', 'where to create the session directory', './sessions')
    .option('--user <id>', "the user id for the person's prompts", DEFAULT_IMPORT_USER)
    .addOption(jsonOption())
    .action((file: string, o: ImportFileOptions) => importClaudeCode(file, o, io));
  registerImportCodex(imp, io);
  registerImportHcn(imp, io);
}

/** `hansard import codex FILE`: a Codex CLI session rollout (lib/importers/codex.ts). */
function registerImportCodex(imp: Command, io: Io): void {
  imp
    .command('codex')
    .description(
      'import a Codex CLI session rollout (~/.codex/sessions/**/rollout-*.jsonl) or codex exec --json output',
    )
    .argument('<rollout>', 'the rollout file')
    .option('--out <dir>', 'where to create the session directory', './sessions')
    .option('--user <id>', "the user id for the person's prompts", DEFAULT_IMPORT_USER)
    .addOption(jsonOption())
    .action((file: string, o: ImportFileOptions) => importCodex(file, o, io));
}

/** The options of `hansard import claude-code`, as commander parses them. */
export interface ImportFileOptions {
  out: string;
  user: string;
  json?: boolean;
}

/**
 * `hansard import claude-code <file>`: a Claude Code transcript (or a stream of them) as a session under
 * `o.out`; prints what it wrote.
 */
export async function importClaudeCode(file: string, o: ImportFileOptions, io: Io): Promise<void> {
  if (await importStreamIfAny(io, file, o, 'claude-code')) return;
  let result: Awaited<ReturnType<typeof importClaudeCodeTranscript>>;
  try {
    result = await importClaudeCodeTranscript(resolve(io.cwd, file), resolve(io.cwd, o.out), {
      userId: o.user,
    });
  } catch (err) {
    const code = (err as NodeJS.ErrnoException).code;
    if (code === 'ENOENT' || code === 'EISDIR' || code === 'EACCES')
      throw new UsageError(`cannot read ${file}: ${describeFsError(err)}`);
    throw err;
  }
  const c0 = result.counts;
  if (c0.prompts + c0.actions + c0.results + c0.outputs === 0) {
    rmSync(result.dir, { recursive: true, force: true });
    throw new UsageError(
      `${file} does not look like a Claude Code transcript: it has no user or assistant records (nothing was kept)${otherImporter(resolve(io.cwd, file), file, 'claude-code')}`,
    );
  }
  if (o.json) return printJson(io, result);
  const c = result.counts;
  io.stdout.write(`${result.dir}\n`);
  io.stderr.write(
    `imported ${counted(c.prompts, 'prompt')}, ${counted(c.turns, 'turn')}, ${counted(c.actions, 'action')}, ${counted(c.results, 'result')}, ${counted(c.outputs, 'output')}, ${counted(c.notes, 'note')}` +
      `${c.subagentWriters ? `, ${counted(c.subagentWriters, 'subagent writer')}${c.unlinkedSubagents ? ` (${c.unlinkedSubagents} linked to no call)` : ''}` : ''}${eventWords(c)}` +
      `${problemWords(result.problems)}\n` +
      personLine(c.prompts, o.user) +
      `next: hansard upload ${result.dir}\n`,
  );
}

/**
 * `hansard import codex <file>`: a Codex rollout (or a stream of them) as a session under `o.out`; prints
 * what it wrote.
 */
export async function importCodex(file: string, o: ImportFileOptions, io: Io): Promise<void> {
  if (await importStreamIfAny(io, file, o, 'codex')) return;
  let result: Awaited<ReturnType<typeof importCodexRollout>>;
  try {
    result = await importCodexRollout(resolve(io.cwd, file), resolve(io.cwd, o.out), { userId: o.user });
  } catch (err) {
    const code = (err as NodeJS.ErrnoException).code;
    if (code === 'ENOENT' || code === 'EISDIR' || code === 'EACCES')
      throw new UsageError(`cannot read ${file}: ${describeFsError(err)}`);
    throw err;
  }
  const c = result.counts;
  if (c.prompts + c.actions + c.results + c.outputs === 0) {
    rmSync(result.dir, { recursive: true, force: true });
    throw new UsageError(
      `${file} does not look like a Codex rollout: it has no prompts, tool calls or answers (nothing was kept)${otherImporter(resolve(io.cwd, file), file, 'codex')}`,
    );
  }
  if (o.json) return printJson(io, result);
  io.stdout.write(`${result.dir}\n`);
  io.stderr.write(
    `imported ${counted(c.prompts, 'prompt')}, ${counted(c.turns, 'turn')}, ${counted(c.actions, 'action')}, ${counted(c.results, 'result')}, ${counted(c.outputs, 'output')}, ${counted(c.reasoning, 'reasoning summary', 'reasoning summaries')}, ${counted(c.tokenUsage, 'token usage record')}, ${counted(c.notes, 'note')}` +
      `${eventWords(c)}${problemWords(result.problems)}\n` +
      personLine(c.prompts, o.user) +
      `next: hansard upload ${result.dir}\n`,
  );
}
