/**
 * Claude Code's side of `hansard integrations sync` (issue 11 item 4): hansard's hook entries in a
 * Claude Code settings file (`~/.claude/settings.json` or `<project>/.claude/settings.json`), merged into
 * what is there. The settings' hook format (Claude Code's hooks reference):
 *
 * ```json
 * {"hooks": {"PreToolUse": [{"matcher": "*", "hooks": [{"type": "command", "command": "…", "timeout": 5}]}]}}
 * ```
 *
 * Pure functions on the file's text: the caller reads and writes (./integrations.ts). Everything that is
 * not hansard's (other hooks, other events, other keys, their order) is left as it was; a file whose
 * meaning would not change is not rewritten, so a second sync is byte-identical.
 */
import { applyEdits, modify } from 'jsonc-parser';

/**
 * The Claude Code hook events hansard records: the nine of issue 11 item 1, plus PostToolUseFailure (the
 * only result a failing tool call gets: Claude Code 2.1 never sends PostToolUse for it) and SubagentStart
 * (where a subagent's part begins), both of which `hansard hook claude-code` maps.
 */
export const CLAUDE_HOOK_EVENTS = [
  'SessionStart',
  'UserPromptSubmit',
  'PreToolUse',
  'PostToolUse',
  'PostToolUseFailure',
  'Notification',
  'Stop',
  'SubagentStart',
  'SubagentStop',
  'PreCompact',
  'SessionEnd',
] as const;
export type ClaudeHookEvent = (typeof CLAUDE_HOOK_EVENTS)[number];

/** Events whose matcher selects tools: hansard matches every tool. The others take no matcher (all). */
const TOOL_EVENTS: ReadonlySet<string> = new Set(['PreToolUse', 'PostToolUse', 'PostToolUseFailure']);

/**
 * Claude Code's timeout for hansard's hook, in seconds. The hook itself answers within 3.5 s (seed 000:
 * "a hook stops after 3.5 seconds, before its agent's five-second limit").
 */
export const CLAUDE_HOOK_TIMEOUT_S = 5;

/** A settings file hansard cannot merge into: not JSON, or hooks not in Claude Code's shape. */
export class SettingsFormatError extends Error {
  override name = 'SettingsFormatError';
}

/**
 * Whether a hook command is hansard's Claude Code hook (any install path, old or new): it names a
 * `hansard` program or script and runs `hook claude-code`.
 */
export function isHansardClaudeCommand(command: unknown): boolean {
  return typeof command === 'string' && /hansard\S*['"]?\s+hook\s+claude-code\b/.test(command);
}

type Json = null | boolean | number | string | Json[] | { [k: string]: Json };
type Obj = { [k: string]: Json };

const isObj = (v: unknown): v is Obj => typeof v === 'object' && v !== null && !Array.isArray(v);

/** The matcher group hansard installs for `event`. */
function ourGroup(event: string, command: string): Obj {
  const hook: Obj = { type: 'command', command, timeout: CLAUDE_HOOK_TIMEOUT_S };
  return TOOL_EVENTS.has(event) ? { matcher: '*', hooks: [hook] } : { hooks: [hook] };
}

/** What one settings file holds of hansard's hooks (for `hansard doctor`). */
export interface ClaudeHooksState {
  /** events with a hansard hook entry */
  events: ClaudeHookEvent[];
  /** the distinct hansard commands found */
  commands: string[];
}

/**
 * Parses a settings file's text. Empty or absent (null) is `{}`.
 * @throws SettingsFormatError when it is not a JSON object, or its `hooks` is not Claude Code's shape
 */
export function parseClaudeSettings(text: string | null, path: string): Obj {
  if (text === null || text.trim() === '') return {};
  let parsed: unknown;
  try {
    parsed = JSON.parse(text);
  } catch (err) {
    throw new SettingsFormatError(
      `${path} is not valid JSON (${(err as Error).message}); fix or move it, then run this again. Nothing was changed`,
    );
  }
  if (!isObj(parsed)) throw new SettingsFormatError(`${path} is not a JSON object; nothing was changed`);
  const hooks = parsed.hooks;
  if (hooks === undefined) return parsed;
  if (!isObj(hooks)) {
    throw new SettingsFormatError(`${path}: "hooks" is not an object of events; nothing was changed`);
  }
  for (const [event, groups] of Object.entries(hooks)) {
    if (!Array.isArray(groups) || groups.some((g) => !isObj(g) || !Array.isArray(g.hooks))) {
      throw new SettingsFormatError(
        `${path}: hooks.${event} is not a list of {"matcher", "hooks": [...]} groups; nothing was changed`,
      );
    }
  }
  return parsed;
}

/** Hansard's hook entries in parsed settings, by event. */
export function claudeHooksState(settings: Obj): ClaudeHooksState {
  const events: ClaudeHookEvent[] = [];
  const commands = new Set<string>();
  const hooks = isObj(settings.hooks) ? settings.hooks : {};
  for (const event of CLAUDE_HOOK_EVENTS) {
    const groups = hooks[event];
    if (!Array.isArray(groups)) continue;
    let found = false;
    for (const g of groups) {
      if (!isObj(g) || !Array.isArray(g.hooks)) continue;
      for (const h of g.hooks) {
        if (isObj(h) && isHansardClaudeCommand(h.command)) {
          found = true;
          commands.add(h.command as string);
        }
      }
    }
    if (found) events.push(event);
  }
  return { events, commands: [...commands] };
}

/** The result of merging: the new text (equal to the old one when nothing changed) and what changed. */
export interface ClaudeMerge {
  text: string;
  changed: boolean;
  /** events whose hansard entry was added, replaced or removed */
  events: ClaudeHookEvent[];
}

/** One edit of the file: set (or with `undefined`, delete) the value at a JSON path; `insert` adds an array item. */
interface Edit {
  path: (string | number)[];
  value: Json | undefined;
  insert?: boolean;
}

/**
 * Installs (or with `remove`, takes out) hansard's hook for every event of `CLAUDE_HOOK_EVENTS` in a
 * settings file's text, leaving every other hook, event and key as it was.
 * - A group holding only hansard's entry is hansard's: it is rewritten in place to the wanted shape.
 * - A hansard entry inside someone else's group is taken out of it (their hooks stay), and hansard gets a
 *   group of its own; a second hansard group of one event is dropped.
 * - An event or `hooks` object emptied by `remove` is dropped.
 * Only the groups that change are rewritten (jsonc-parser edits in the file's own indentation); the rest
 * of the text keeps its bytes, and a file whose meaning does not change is given back as it was.
 * @throws SettingsFormatError as `parseClaudeSettings`
 */
export function mergeClaudeSettings(
  text: string | null,
  opts: { command: string; remove?: boolean; path: string },
): ClaudeMerge {
  const settings = parseClaudeSettings(text, opts.path);
  const hadHooks = isObj(settings.hooks);
  const hooks: Obj = isObj(settings.hooks) ? settings.hooks : {};
  const touched: ClaudeHookEvent[] = [];
  const edits: Edit[] = [];
  for (const event of CLAUDE_HOOK_EVENTS) {
    const present = Array.isArray(hooks[event]);
    const groups = (present ? hooks[event] : []) as Obj[];
    const kept: Obj[] = [];
    const ops: Edit[] = [];
    let ours = false;
    groups.forEach((g, i) => {
      const entries = g.hooks as Json[];
      const mine = entries.filter((h) => isObj(h) && isHansardClaudeCommand(h.command));
      if (mine.length === 0) {
        kept.push(g);
      } else if (mine.length === entries.length) {
        // hansard's own group: keep its place (the first one only), in the wanted shape
        if (!opts.remove && !ours) {
          const want = ourGroup(event, opts.command);
          kept.push(want);
          if (JSON.stringify(g) !== JSON.stringify(want))
            ops.push({ path: ['hooks', event, i], value: want });
        } else {
          ops.push({ path: ['hooks', event, i], value: undefined });
        }
        ours = true;
      } else {
        const rest = entries.filter((h) => !mine.includes(h));
        kept.push({ ...g, hooks: rest });
        ops.push({ path: ['hooks', event, i, 'hooks'], value: rest });
      }
    });
    if (!opts.remove && !ours) {
      kept.push(ourGroup(event, opts.command));
      if (present)
        ops.unshift({
          path: ['hooks', event, groups.length],
          value: ourGroup(event, opts.command),
          insert: true,
        });
    }
    if (JSON.stringify(kept) === JSON.stringify(groups)) continue;
    touched.push(event);
    if (kept.length > 0) hooks[event] = kept;
    else delete hooks[event];
    // From the last index down, so that no edit moves the place of one still to come.
    if (!present || kept.length === 0)
      edits.push({ path: ['hooks', event], value: kept.length ? kept : undefined });
    else edits.push(...ops.sort((a, b) => (b.path[2] as number) - (a.path[2] as number)));
  }
  if (touched.length === 0) return { text: text ?? '', changed: false, events: [] };
  const emptied = Object.keys(hooks).length === 0;
  if (emptied) delete settings.hooks;
  else settings.hooks = hooks;
  let next: string;
  if (text === null || text.trim() === '') {
    next = `${JSON.stringify(settings, null, 2)}\n`;
  } else if (!hadHooks || emptied) {
    next = applyEdit(text, { path: ['hooks'], value: emptied ? undefined : hooks });
  } else {
    next = edits.reduce(applyEdit, text);
  }
  // The edits must say exactly what was computed; anything else is our bug, and the file is not written.
  if (JSON.stringify(JSON.parse(next)) !== JSON.stringify(settings)) {
    throw new Error(
      `internal error: the merged ${opts.path} does not hold what was computed; nothing was changed`,
    );
  }
  return { text: next, changed: true, events: touched };
}

/** `text` with one edit applied, new parts indented like the file (two spaces when it does not say). */
function applyEdit(text: string, edit: Edit): string {
  const indent = text.match(/^[{[][^\n]*\n([ \t]+)\S/)?.[1] ?? '  ';
  const formattingOptions = {
    insertSpaces: !indent.startsWith('\t'),
    tabSize: indent.startsWith('\t') ? 1 : indent.length,
    eol: '\n', // jsonc-parser keeps a CRLF file's own line ends (test: keeps CRLF line ends)
  };
  const changes = modify(text, edit.path, edit.value, {
    formattingOptions,
    ...(edit.insert ? { isArrayInsertion: true } : {}),
  });
  return applyEdits(text, changes);
}
