/**
 * Words the import commands print (docs/import.md): counts with the right plural ("1 prompt", "2
 * prompts"), and which importer a file that another one refused belongs to (`transcriptKind`), so the
 * refusal names the command that takes it.
 */
import { closeSync, openSync, readSync } from 'node:fs';

/** `n` and the word, plural unless n is 1: `counted(1, 'prompt')` is "1 prompt"; `plural` when not +s. */
export function counted(n: number, word: string, plural = `${word}s`): string {
  return `${n} ${n === 1 ? word : plural}`;
}

/** The `--user` default of the import commands: the person every imported prompt is recorded as. */
export const DEFAULT_IMPORT_USER = 'user';

/**
 * The summary's line on who the prompts were recorded as (issue 14 finding 8): a transcript does not name
 * the person, so the import records `--user` (default `user`) and says so, with how to change it.
 * Empty when nothing was recorded as a person (no prompts).
 */
export function personLine(prompts: number, user: string): string {
  if (prompts === 0) return '';
  return user === DEFAULT_IMPORT_USER
    ? `recorded prompts as person '${user}': pass --user NAME to name them\n`
    : `recorded prompts as person '${user}'\n`;
}

/** How much of a file `transcriptKind` reads: its first lines are enough to tell the two apart. */
const SNIFF_BYTES = 64 * 1024;

/**
 * Which tool wrote a JSONL file, from its first lines: `codex` for a Codex rollout (records
 * `{"timestamp","type":"session_meta"|"response_item"|"event_msg"|"turn_context","payload"}`),
 * `claude-code` for a Claude Code transcript (`{"type":"user"|"assistant","message",…}` with a
 * `uuid` or `sessionId`), null when neither or unreadable. Never throws.
 */
export function transcriptKind(path: string): 'claude-code' | 'codex' | null {
  let text: string;
  try {
    const fd = openSync(path, 'r');
    try {
      const buf = Buffer.alloc(SNIFF_BYTES);
      text = buf.subarray(0, readSync(fd, buf, 0, SNIFF_BYTES, 0)).toString('utf8');
    } finally {
      closeSync(fd);
    }
  } catch {
    return null;
  }
  for (const line of text.split('\n').slice(0, 50)) {
    let r: Record<string, unknown>;
    try {
      r = JSON.parse(line) as Record<string, unknown>;
    } catch {
      continue;
    }
    if (!r || typeof r !== 'object') continue;
    const type = r.type;
    if (
      typeof type === 'string' &&
      ['session_meta', 'response_item', 'event_msg', 'turn_context'].includes(type) &&
      r.payload &&
      typeof r.payload === 'object'
    ) {
      return 'codex';
    }
    if ((type === 'user' || type === 'assistant') && r.message && (r.uuid || r.sessionId)) {
      return 'claude-code';
    }
  }
  return null;
}

/** The refusal's tail for a file another importer takes: `; it looks like …: hansard import X FILE`. */
export function otherImporter(path: string, file: string, command: 'claude-code' | 'codex'): string {
  const kind = transcriptKind(path);
  if (kind === null || kind === command) return '';
  const what = kind === 'codex' ? 'a Codex rollout' : 'a Claude Code transcript';
  return `; it looks like ${what}: import it with \`hansard import ${kind} ${file}\``;
}
