/**
 * The harnesses' own output behind `hansard import claude-code FILE` and `hansard import codex FILE`
 * (DESIGN §6, docs/import.md): each command reads FILE's first JSON object and, when it is Claude Code
 * stream-json or a `codex exec --json` stream rather than a transcript or rollout, imports it here.
 */
import { rmSync } from 'node:fs';
import { resolve } from 'node:path';
import { importClaudeCodeStream, isClaudeStreamJson } from '../../importers/claude-code-stream.js';
import { importCodexExec, isCodexExecJson } from '../../importers/codex-exec.js';
import { firstObject } from '../../importers/stream-lines.js';
import { UsageError } from '../api/errors.js';
import { type Io, printJson } from '../api/io.js';
import { describeFsError } from '../api/upload.js';
import { counted, eventWords, personLine, problemWords } from './import-words.js';

/** What the import commands take. */
interface ImportFlags {
  out: string;
  user: string;
  json?: boolean;
}

/** `fn()`, a file that cannot be read (ENOENT, EISDIR, EACCES) said as a `UsageError` naming `file`. */
async function readable<T>(file: string, fn: () => Promise<T>): Promise<T> {
  try {
    return await fn();
  } catch (err) {
    const code = (err as NodeJS.ErrnoException).code;
    if (code === 'ENOENT' || code === 'EISDIR' || code === 'EACCES')
      throw new UsageError(`cannot read ${file}: ${describeFsError(err)}`);
    throw err;
  }
}

/** The format of `file` by its first JSON object: which importer of a tool's two formats reads it. */
export async function streamFormat(
  io: Io,
  file: string,
): Promise<'claude-stream-json' | 'codex-exec-json' | null> {
  const first = await readable(file, () => firstObject(resolve(io.cwd, file)));
  if (first === null) return null;
  if (isClaudeStreamJson(first)) return 'claude-stream-json';
  if (isCodexExecJson(first)) return 'codex-exec-json';
  return null;
}

/**
 * When `file` is a tool's streamed output (by its first JSON object), imports it and returns true; a
 * stream of the other tool is a `UsageError` naming the command that imports it; false for anything
 * else (a transcript or rollout: the caller's own importer reads it). Throws `UsageError` for a file
 * that cannot be read.
 */
export async function importStreamIfAny(
  io: Io,
  file: string,
  o: ImportFlags,
  command: 'claude-code' | 'codex',
): Promise<boolean> {
  const f = await streamFormat(io, file);
  if (f === null) return false;
  const own = f === 'claude-stream-json' ? 'claude-code' : 'codex';
  if (own !== command)
    throw new UsageError(
      `${file} is ${f === 'claude-stream-json' ? 'Claude Code stream-json' : 'codex exec --json'} output: import it with \`hansard import ${own} ${file}\``,
    );
  if (f === 'claude-stream-json') await importClaudeStreamCommand(io, file, o);
  else await importCodexExecCommand(io, file, o);
  return true;
}

/** `hansard import claude-code FILE` for stream-json output (lib/importers/claude-code-stream.ts). */
export async function importClaudeStreamCommand(io: Io, file: string, o: ImportFlags): Promise<void> {
  const result = await readable(file, () =>
    importClaudeCodeStream(resolve(io.cwd, file), resolve(io.cwd, o.out), { userId: o.user }),
  );
  const c = result.counts;
  if (c.prompts + c.actions + c.results + c.outputs === 0) {
    rmSync(result.dir, { recursive: true, force: true });
    throw new UsageError(
      `${file} holds Claude Code stream-json records but no messages, tool calls or answers (nothing was kept)`,
    );
  }
  if (o.json) return printJson(io, result);
  io.stdout.write(`${result.dir}\n`);
  io.stderr.write(
    `imported Claude Code stream-json: ${counted(c.prompts, 'prompt')}, ${counted(c.turns, 'turn')}, ${counted(c.actions, 'action')}, ${counted(c.results, 'result')}, ${counted(c.outputs, 'output')}, ${counted(c.notes, 'note')}` +
      `${c.subagentWriters ? `, ${counted(c.subagentWriters, 'subagent writer')}${c.unlinkedSubagents ? ` (${c.unlinkedSubagents} linked to no call)` : ''}` : ''}${eventWords(c)}` +
      `${result.result === null ? '; the stream ends with no result record (cut off): its turn is interrupted' : ''}` +
      `${problemWords(result.problems)}\n` +
      result.notices.map((n) => `note: ${n}\n`).join('') +
      personLine(c.prompts, o.user) +
      `next: hansard upload ${result.dir}\n`,
  );
}

/** `hansard import codex FILE` for a `codex exec --json` stream (lib/importers/codex-exec.ts). */
export async function importCodexExecCommand(io: Io, file: string, o: ImportFlags): Promise<void> {
  const result = await readable(file, () =>
    importCodexExec(resolve(io.cwd, file), resolve(io.cwd, o.out), { userId: o.user }),
  );
  const c = result.counts;
  if (c.prompts + c.actions + c.results + c.outputs === 0) {
    rmSync(result.dir, { recursive: true, force: true });
    throw new UsageError(
      `${file} holds codex exec --json events but no messages, commands or answers (nothing was kept)`,
    );
  }
  if (o.json) return printJson(io, result);
  io.stdout.write(`${result.dir}\n`);
  io.stderr.write(
    `imported codex exec --json: ${counted(c.turns, 'turn')}, ${counted(c.actions, 'action')}, ${counted(c.results, 'result')}, ${counted(c.outputs, 'output')}, ${counted(c.reasoning, 'reasoning note')}, ${counted(c.tokenUsage, 'token usage record')}, ${counted(c.errors, 'error')}, ${counted(c.notes, 'note')}` +
      `${eventWords(c)}${result.interrupted ? '; the stream ends mid-turn (cut off): its turn is interrupted' : ''}` +
      `${problemWords(result.problems)}\n` +
      result.notices.map((n) => `note: ${n}\n`).join('') +
      personLine(c.prompts, o.user) +
      `next: hansard upload ${result.dir}\n`,
  );
}
