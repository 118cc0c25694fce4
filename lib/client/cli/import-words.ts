/**
 * Words the import commands print (docs/import.md): counts with the right plural ("1 prompt", "2
 * prompts"), and which importer a file that another one refused belongs to (`transcriptKind`), so the
 * refusal names the command that takes it.
 */
import { closeSync, openSync, readSync } from 'node:fs';
import type { ImportProblem, ImportProblemKind } from '../../importers/claude-code-transcript.js';

/** `n` and the word, plural unless n is 1: `counted(1, 'prompt')` is "1 prompt"; `plural` when not +s. */
export function counted(n: number, word: string, plural = `${word}s`): string {
  return `${n} ${n === 1 ? word : plural}`;
}

/**
 * The import summary's clauses on the lines it could not take as they are, one per kind that occurred
 * (ImportProblemKind; docs/import.md "What an import reports"), each starting `; `, naming the first:
 * `; 1 line could not be read (kept as notes, first: line 3: line is not valid JSON)`,
 * `; 1 result answers no call seen before it (kept with its call id; verify warns; first: line 4)`,
 * `; 2 lines read in part (first: line 7: timestamp "x" is not RFC 3339)`. Empty when there are none.
 */
export function problemWords(problems: readonly ImportProblem[]): string {
  const of = (kind: ImportProblemKind) => problems.filter((p) => p.kind === kind);
  const at = (p: ImportProblem) => `line ${p.line}${p.file ? ` of ${p.file}` : ''}`;
  const first = (ps: ImportProblem[]) => `first: ${at(ps[0]!)}: ${ps[0]!.message}`;
  const unread = of('kept_as_note');
  const orphans = of('orphan_result');
  const partial = of('read_in_part');
  const one = orphans.length === 1;
  return (
    (unread.length
      ? `; ${counted(unread.length, 'line')} could not be read (kept as notes, ${first(unread)})`
      : '') +
    (orphans.length
      ? `; ${counted(orphans.length, 'result')} ${one ? 'answers' : 'answer'} no call seen before ${one ? 'it' : 'them'} (kept with ${one ? 'its call id' : 'their call ids'}; verify warns; first: ${at(orphans[0]!)})`
      : '') +
    (partial.length ? `; ${counted(partial.length, 'line')} read in part (${first(partial)})` : '')
  );
}

/**
 * The summary's clauses on compactions, interruptions and lines left out as copies (`skipped`), each
 * starting `, ` and only when there are some: `, 1 compaction, 1 interruption, 4 lines skipped (…)`. A
 * skipped line is one read and not written as an event of its own because what it says is recorded
 * already (a prompt's or answer's copy, a turn end, a compaction's second record) or is telemetry.
 */
export function eventWords(c: {
  compactions: number;
  interruptions: number;
  skipped?: Record<string, number>;
}): string {
  const skipped = Object.values(c.skipped ?? {}).reduce((n, k) => n + k, 0);
  return (
    (c.compactions ? `, ${counted(c.compactions, 'compaction')}` : '') +
    (c.interruptions ? `, ${counted(c.interruptions, 'interruption')}` : '') +
    (skipped
      ? `, ${counted(skipped, 'line')} skipped (copies of what is recorded, and telemetry; --json lists them)`
      : '')
  );
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
