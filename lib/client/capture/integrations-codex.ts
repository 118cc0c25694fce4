/**
 * Codex's side of `hansard integrations sync` (issue 11 items 2 and 4): the `notify` program in Codex's
 * `config.toml` (`$CODEX_HOME/config.toml`, `~/.codex/config.toml` by default). Codex runs `notify` with
 * the event JSON as its last argument, so hansard's entry is `["<node>", "<bin/hansard>", "hook", "codex"]`.
 *
 * The file is edited with a TOML library that keeps comments, whitespace and the order of everything it
 * does not touch (@decimalturn/toml-patch), never with string edits. Codex takes one `notify` program:
 * another program's entry is not replaced unless asked (`force`).
 */
import { parse, patch } from '@decimalturn/toml-patch';

/** A config.toml hansard cannot merge into (not TOML). */
export class CodexConfigError extends Error {
  override name = 'CodexConfigError';
}

/** Whether a `notify` value is hansard's Codex hook (any install path): ends with `hook codex` after a hansard program. */
export function isHansardNotify(notify: unknown): boolean {
  if (!Array.isArray(notify) || notify.length < 3 || !notify.every((a) => typeof a === 'string'))
    return false;
  const n = notify.length;
  return (
    notify[n - 2] === 'hook' &&
    notify[n - 1] === 'codex' &&
    notify.slice(0, n - 2).some((a: string) => /hansard/.test(a))
  );
}

/**
 * Parses config.toml text (absent or empty: `{}`).
 * @throws CodexConfigError when it is not TOML or not a table
 */
export function parseCodexConfig(text: string | null, path: string): Record<string, unknown> {
  if (text === null || text.trim() === '') return {};
  let parsed: unknown;
  try {
    parsed = parse(text);
  } catch (err) {
    const why = (err as Error).message.split('\n')[0];
    throw new CodexConfigError(
      `${path} is not valid TOML (${why}); fix or move it, then run this again. Nothing was changed`,
    );
  }
  if (typeof parsed !== 'object' || parsed === null || Array.isArray(parsed)) {
    throw new CodexConfigError(`${path} is not a TOML table; nothing was changed`);
  }
  return parsed as Record<string, unknown>;
}

/** What a merge did to Codex's config. */
export interface CodexMerge {
  text: string;
  changed: boolean;
  /** `conflict`: `notify` runs another program and was left alone (pass `force` to replace it) */
  conflict: null | { notify: unknown };
}

/**
 * Sets Codex's `notify` to `argv` (or with `remove`, takes hansard's `notify` out; another program's
 * stays), keeping the rest of the text as it was. Unchanged meaning gives the text back byte for byte.
 * @throws CodexConfigError as `parseCodexConfig`
 */
export function mergeCodexConfig(
  text: string | null,
  opts: { argv: string[]; remove?: boolean; force?: boolean; path: string },
): CodexMerge {
  const config = parseCodexConfig(text, opts.path);
  const current = config.notify;
  const unchanged = { text: text ?? '', changed: false, conflict: null };
  if (opts.remove) {
    if (!isHansardNotify(current)) return unchanged;
    const { notify: _dropped, ...rest } = config;
    return { text: ensureNewline(patch(text ?? '', rest)), changed: true, conflict: null };
  }
  if (JSON.stringify(current) === JSON.stringify(opts.argv)) return unchanged;
  if (current !== undefined && !isHansardNotify(current) && !opts.force) {
    return { ...unchanged, conflict: { notify: current } };
  }
  const next = patch(text ?? '', { ...config, notify: opts.argv });
  return { text: ensureNewline(next), changed: true, conflict: null };
}

function ensureNewline(text: string): string {
  return text === '' || text.endsWith('\n') ? text : `${text}\n`;
}
