/**
 * Which recorded action a declared evidence ref names (issue 12 item 2, issue 24 item 2, docs/status.md
 * "How a ref finds its action"): the parts of the evidence check that read commands and ids as a shell and
 * a runtime would, kept apart from the verdicts (lib/log/analyse/evidence.ts).
 *
 * - Ids match only in the forms runtimes mint: an event id `a_` + ULID, or a native tool-call id
 *   `toolu_…` / `srvtoolu_…` (Claude) or `call_…` (Codex, OpenAI). A `call_id` a writer chose freely
 *   (`"make check"`) is no id: it never wins over command matching.
 * - A command matches a ref when it equals it, or starts with the ref's words (two at least) followed by
 *   arguments only. Whatever a shell reads as the end of a command or as a way to run another one ends the
 *   match: a newline or carriage return (and the other line terminators), `;`, `&`, `|`, redirections,
 *   substitutions, subshells and groups, and a backslash (a line continuation or an escaped operator).
 */

/** An action event id as the writer mints it (DESIGN §3 ids). */
const ACTION_ID = /^a_[0-9A-HJKMNP-TV-Z]{26}$/;

/** A native tool-call id as runtimes mint them: Claude `toolu_…` / `srvtoolu_…`, Codex and OpenAI `call_…`. */
const RUNTIME_CALL_ID = /^(?:toolu_|srvtoolu_|call_)[A-Za-z0-9_-]{1,200}$/;

/**
 * What may follow a command's words and change what ran: a line terminator (a shell runs the next line as
 * another command), `;` `&` `|` (lists, pipes, background), `<` `>` (redirection), backquote and `$(` (command
 * substitution), `(` `)` `{` `}` (subshells, groups), and `\` (a continuation joins the next line; an
 * escaped newline or operator is how the others hide).
 */
const SHELL_CONTROL = /[\n\r\v\f\u0085\u2028\u2029;&|<>`(){}\\]|\$\(/;

/** True when `ref` has the form of an action event id (`a_` + ULID). */
export function isActionId(ref: string): boolean {
  return ACTION_ID.test(ref);
}

/** True when `id` has the form of a tool-call id a runtime mints (`toolu_…`, `srvtoolu_…`, `call_…`). */
export function isRuntimeCallId(id: string): boolean {
  return RUNTIME_CALL_ID.test(id);
}

/** Runs of the blanks a shell splits words on (space, tab) as one space; line terminators are kept. */
const collapseBlanks = (s: string) => s.replace(/[ \t]+/g, ' ').replace(/^[ \t\n]+|[ \t\n]+$/g, '');

/** A ref as commands are compared with it: blanks collapsed, trimmed. */
export function normalRef(ref: string): string {
  return collapseBlanks(ref);
}

/**
 * The command an action's input names: a string input, or its `command` / `cmd` field (a string, or an
 * argv array, whose `sh -c` / `bash -lc` wrapper is dropped); null when it has none. Blanks (space, tab)
 * are collapsed; line breaks are kept, since a shell reads them as the end of a command.
 */
export function commandOf(input: unknown): string | null {
  if (typeof input === 'string') return collapseBlanks(input);
  if (typeof input !== 'object' || input === null || Array.isArray(input)) return null;
  const o = input as Record<string, unknown>;
  const c = o.command ?? o.cmd;
  if (typeof c === 'string') return collapseBlanks(c);
  if (Array.isArray(c) && c.every((x) => typeof x === 'string')) {
    const argv = c as string[];
    const wrapped = argv.length === 3 && /(^|\/)(ba|z)?sh$/.test(argv[0]!) && /^-l?c$/.test(argv[1]!);
    // An argv without a shell is one command whatever its words hold; joined, its words read as arguments.
    return wrapped
      ? collapseBlanks(argv[2]!)
      : collapseBlanks(argv.join(' ').replace(SHELL_LINE_BREAKS, ' '));
  }
  return null;
}

const SHELL_LINE_BREAKS = /[\n\r\v\f\u0085\u2028\u2029]/g;

/**
 * How `command` matches `ref` (both as `commandOf` / `normalRef` give them): `command` when equal,
 * `command_prefix` when `command` starts with `ref`'s words (`ref` has two words at least) and what follows
 * is arguments only (`SHELL_CONTROL` absent), else null.
 */
export function commandMatch(command: string, ref: string): 'command' | 'command_prefix' | null {
  if (command === ref) return 'command';
  if (!ref.includes(' ') || !command.startsWith(`${ref} `)) return null;
  return SHELL_CONTROL.test(command.slice(ref.length)) ? null : 'command_prefix';
}
