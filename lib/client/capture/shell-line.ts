/**
 * A command as one POSIX shell line: what hansard writes into Claude Code's hooks (which runs them through
 * a shell) and what it tells an agent to run. Its own module: the hook bundle needs it without the rest of
 * `integrations.ts` (diff, the settings mergers).
 */

/** `argv` as one POSIX shell command line: a word of safe characters as it is, any other single-quoted. */
export function shellLine(argv: string[]): string {
  return argv
    .map((a) => (/^[A-Za-z0-9_/.,:=@%+-]+$/.test(a) ? a : `'${a.replaceAll("'", `'\\''`)}'`))
    .join(' ');
}
