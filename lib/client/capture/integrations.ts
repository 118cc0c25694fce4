/**
 * `hansard integrations sync` (issue 11 item 4, seed 000 "Check hook failures"): installs or refreshes
 * hansard's hooks in Claude Code's settings and Codex's `notify`, and writes where the hooks find the
 * server (`<state>/config.json`, mode 0600). Every file is merged into, never replaced: other hooks and
 * keys stay as they were, a second run changes nothing (byte for byte), and a file that cannot be parsed
 * is refused before anything is written.
 *
 * Files (docs/capture.md):
 * - Claude Code, user: `$CLAUDE_CONFIG_DIR/settings.json`, else `~/.claude/settings.json`
 * - Claude Code, project (`--project DIR`): `DIR/.claude/settings.json`
 * - Codex: `$CODEX_HOME/config.toml`, else `~/.codex/config.toml`
 * - `<state>/config.json` (lib/client/capture/state-dir.ts)
 *
 * The hook command is this checkout's `bin/hansard` run by the absolute path of the node that runs this
 * command (`process.execPath`): it works whatever PATH the agent gives its hooks. Moving the checkout or
 * removing that node breaks it; `hansard doctor` notices, and a sync refreshes it.
 */
import {
  chmodSync,
  mkdirSync,
  readFileSync,
  realpathSync,
  renameSync,
  statSync,
  writeFileSync,
} from 'node:fs';
import { homedir } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { createTwoFilesPatch, FILE_HEADERS_ONLY } from 'diff';
import { TOKEN_PATTERN } from '../../contract/tokens.js';
import { DEFAULT_URL } from '../api/config.js';
import { SHARE_GIT_EMAIL_KEY } from './git-email.js';
import { type ClaudeHookEvent, mergeClaudeSettings } from './integrations-claude.js';
import { mergeCodexConfig } from './integrations-codex.js';
import { shellLine } from './shell-line.js';
import { configPath, stateDir } from './state-dir.js';

/** A flag value sync refuses (a token or URL of the wrong shape): exit 2. */
export class IntegrationsInputError extends Error {
  override name = 'IntegrationsInputError';
}

/** The files sync writes, by what they configure. */
export type SyncTarget = 'claude-code' | 'claude-code:project' | 'codex' | 'server-config';

/** What sync did (or with `dryRun`, would do) to one file. */
export interface SyncChange {
  target: SyncTarget;
  path: string;
  /** `conflict`: Codex's notify runs another program and was left alone */
  action: 'created' | 'updated' | 'unchanged' | 'conflict';
  /** Claude Code events whose hansard entry was added, refreshed or taken out */
  events?: ClaudeHookEvent[];
  /** a sentence for a person */
  message: string;
  /** unified diff of the file (tokens masked); empty when unchanged */
  diff: string;
}

export interface SyncOptions {
  env: NodeJS.ProcessEnv;
  cwd: string;
  /** a project folder: Claude Code's hooks go into its `.claude/settings.json` instead of the user's */
  project?: string;
  /** one harness only */
  only?: 'claude-code' | 'codex';
  /** take hansard's entries out instead */
  remove?: boolean;
  /** compute the changes and their diffs, write nothing */
  dryRun?: boolean;
  /** replace Codex's `notify` even when it runs another program */
  force?: boolean;
  /** the server the hooks ship to; default HANSARD_URL */
  url?: string;
  /** the token they ship with; default HANSARD_TOKEN */
  token?: string;
  /**
   * the person's consent that the hooks record their git `user.email` on their `participant.join` (issue
   * 29 item 4, git-email.ts): true sets `share_git_email` in `<state>/config.json`, false takes it out,
   * absent leaves it as it is
   */
  shareGitEmail?: boolean;
}

const home = (env: NodeJS.ProcessEnv) => env.HOME || homedir();

/** Claude Code's user settings: `$CLAUDE_CONFIG_DIR/settings.json`, else `~/.claude/settings.json`. */
export function claudeUserSettingsPath(env: NodeJS.ProcessEnv): string {
  return join(env.CLAUDE_CONFIG_DIR || join(home(env), '.claude'), 'settings.json');
}
/** A project's shared Claude Code settings: `DIR/.claude/settings.json`. */
export function claudeProjectSettingsPath(dir: string): string {
  return join(dir, '.claude', 'settings.json');
}
/** Codex's config: `$CODEX_HOME/config.toml`, else `~/.codex/config.toml`. */
export function codexConfigPath(env: NodeJS.ProcessEnv): string {
  return join(env.CODEX_HOME || join(home(env), '.codex'), 'config.toml');
}

/** This checkout's root: the nearest folder above this module with hansard's package.json. */
function packageRoot(): string {
  let dir = dirname(fileURLToPath(import.meta.url));
  for (;;) {
    try {
      const pkg = JSON.parse(readFileSync(join(dir, 'package.json'), 'utf8')) as { name?: string };
      if (pkg.name === 'hansard') return dir;
    } catch {
      // not here: go up
    }
    const up = dirname(dir);
    if (up === dir) throw new Error('cannot find the hansard checkout above this module');
    dir = up;
  }
}

/** The program and script that run `hansard`: `[absolute node, absolute bin/hansard]`. */
export function hansardArgv(): string[] {
  return [process.execPath, join(packageRoot(), 'bin', 'hansard')];
}

/** `argv` as one POSIX shell command line (Claude Code runs hook commands through a shell). */
export { shellLine };

/** The command line Claude Code runs for each hook event. */
export function claudeHookCommand(): string {
  return shellLine([...hansardArgv(), 'hook', 'claude-code']);
}
/** Codex's `notify` value: the event JSON is appended as the last argument. */
export function codexNotifyArgv(): string[] {
  return [...hansardArgv(), 'hook', 'codex'];
}

function readText(path: string): string | null {
  try {
    return readFileSync(path, 'utf8');
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'ENOENT') return null;
    throw err;
  }
}

/**
 * Writes `text` to `path` through a temporary file in the same folder and a rename (a reader never sees
 * half a file). A symlink is followed (its target is written, the link stays); an existing file keeps its
 * mode, a new one gets `mode`; `forceMode` sets it either way. @throws the file system's error
 */
export function writeFileAtomic(path: string, text: string, mode = 0o644, forceMode = false): void {
  let target = path;
  try {
    target = realpathSync(path);
  } catch {
    // absent: written where asked
  }
  let keep = mode;
  if (!forceMode) {
    try {
      keep = statSync(target).mode & 0o7777;
    } catch {
      // new file
    }
  }
  mkdirSync(dirname(target), { recursive: true });
  const tmp = `${target}.hansard-${process.pid}-${Date.now().toString(36)}.tmp`;
  writeFileSync(tmp, text, { mode: keep });
  chmodSync(tmp, keep); // the umask may have narrowed it
  renameSync(tmp, target);
}

/** A unified diff of one file, `/dev/null` for an absent side. */
function unifiedDiff(path: string, before: string | null, after: string): string {
  if (before === after) return '';
  return createTwoFilesPatch(before === null ? '/dev/null' : path, path, before ?? '', after, '', '', {
    context: 3,
    headerOptions: FILE_HEADERS_ONLY,
  });
}

interface Planned {
  change: SyncChange;
  write?: { path: string; text: string; mode: number; forceMode: boolean };
}

function planClaude(path: string, target: SyncTarget, opts: SyncOptions): Planned {
  const before = readText(path);
  const merged = mergeClaudeSettings(before, {
    command: claudeHookCommand(),
    remove: opts.remove === true,
    path,
  });
  if (!merged.changed) {
    const message = opts.remove
      ? `${path}: no hansard hooks to take out`
      : `${path}: hansard's Claude Code hooks are up to date`;
    return { change: { target, path, action: 'unchanged', message, diff: '' } };
  }
  const what = opts.remove ? 'took out' : before === null ? 'installed' : 'installed or refreshed';
  return {
    change: {
      target,
      path,
      action: before === null ? 'created' : 'updated',
      events: merged.events,
      message: `${path}: ${what} hansard's hook for ${merged.events.join(', ')}`,
      diff: unifiedDiff(path, before, merged.text),
    },
    write: { path, text: merged.text, mode: 0o644, forceMode: false },
  };
}

function planCodex(opts: SyncOptions): Planned {
  const path = codexConfigPath(opts.env);
  const before = readText(path);
  const merged = mergeCodexConfig(before, {
    argv: codexNotifyArgv(),
    remove: opts.remove === true,
    force: opts.force === true,
    path,
  });
  if (merged.conflict) {
    return {
      change: {
        target: 'codex',
        path,
        action: 'conflict',
        message:
          `${path}: notify already runs another program (${JSON.stringify(merged.conflict.notify)}); Codex takes ` +
          'one, so it was left alone. Replace it with hansard integrations sync --only codex --force',
        diff: '',
      },
    };
  }
  if (!merged.changed) {
    const message = opts.remove
      ? `${path}: no hansard notify to take out`
      : `${path}: Codex's notify runs hansard`;
    return { change: { target: 'codex', path, action: 'unchanged', message, diff: '' } };
  }
  return {
    change: {
      target: 'codex',
      path,
      action: before === null ? 'created' : 'updated',
      message: `${path}: ${opts.remove ? 'took out' : 'set'} notify = hansard hook codex`,
      diff: unifiedDiff(path, before, merged.text),
    },
    write: { path, text: merged.text, mode: 0o600, forceMode: false },
  };
}

const mask = (text: string) => text.replace(/hns_[0-9A-Za-z]{4,}/g, (t) => `hns_…${t.slice(-4)}`);

/**
 * `<state>/config.json` with the server (`url`, `token`; not with `remove`) and the consent
 * (`share_git_email`) the options give, merged into what is there; null when they give none of them.
 */
function planServerConfig(opts: SyncOptions): Planned | null {
  const url = opts.remove ? undefined : (opts.url ?? opts.env.HANSARD_URL);
  const token = opts.remove ? undefined : (opts.token ?? opts.env.HANSARD_TOKEN);
  const share = opts.shareGitEmail;
  if (url === undefined && token === undefined && share === undefined) return null;
  if (token !== undefined && !TOKEN_PATTERN.test(token)) {
    throw new IntegrationsInputError(
      'the token is not a hansard token (hns_ followed by 43 letters and digits)',
    );
  }
  if (url !== undefined && !/^https?:\/\/[^\s]+$/.test(url)) {
    throw new IntegrationsInputError(
      `${JSON.stringify(url)} is not an http(s) URL (example: ${DEFAULT_URL})`,
    );
  }
  const path = configPath(stateDir(opts.env));
  const before = readText(path);
  let current: Record<string, unknown> = {};
  try {
    const parsed: unknown = before === null ? {} : JSON.parse(before);
    if (parsed && typeof parsed === 'object' && !Array.isArray(parsed))
      current = parsed as Record<string, unknown>;
  } catch {
    // unreadable: ours to rewrite (it holds nothing but url, token and share_git_email)
  }
  const next: Record<string, unknown> = {
    ...current,
    url: url ?? current.url ?? DEFAULT_URL,
    ...((token ?? current.token) ? { token: token ?? current.token } : {}),
  };
  if (share === true) next[SHARE_GIT_EMAIL_KEY] = true;
  else if (share === false) delete next[SHARE_GIT_EMAIL_KEY];
  const consent =
    next[SHARE_GIT_EMAIL_KEY] === true
      ? '; they record your git user.email when you join a session (--no-share-git-email stops it)'
      : share === false
        ? '; they do not record your git user.email'
        : '';
  const text = `${JSON.stringify(next, null, 2)}\n`;
  if (text === before) {
    return {
      change: {
        target: 'server-config',
        path,
        action: 'unchanged',
        message: `${path}: the hooks ship to ${String(next.url)}${consent}`,
        diff: '',
      },
    };
  }
  return {
    change: {
      target: 'server-config',
      path,
      action: before === null ? 'created' : 'updated',
      message: `${path}: the hooks ship to ${String(next.url)}${next.token ? ' with the given token' : ''}${consent} (mode 0600)`,
      diff: mask(unifiedDiff(path, before, text)),
    },
    write: { path, text, mode: 0o600, forceMode: true },
  };
}

/** What `syncIntegrations` answers. */
export interface SyncResult {
  dry_run: boolean;
  remove: boolean;
  /** whether any file changed (or would, with dry_run) */
  changed: boolean;
  changes: SyncChange[];
}

/**
 * Plans every file first, then (unless `dryRun`) writes the changed ones, so a file that cannot be parsed
 * stops the sync before anything is written.
 * @throws SettingsFormatError (Claude Code settings not JSON or not its hooks shape), CodexConfigError
 *   (config.toml not TOML), IntegrationsInputError (a bad token or URL); the file system's errors
 */
export function syncIntegrations(opts: SyncOptions): SyncResult {
  const plans: Planned[] = [];
  if (opts.only !== 'codex') {
    plans.push(
      opts.project !== undefined
        ? planClaude(claudeProjectSettingsPath(resolve(opts.cwd, opts.project)), 'claude-code:project', opts)
        : planClaude(claudeUserSettingsPath(opts.env), 'claude-code', opts),
    );
  }
  if (opts.only !== 'claude-code' && opts.project === undefined) plans.push(planCodex(opts));
  // With `remove`, only a consent taken back (--no-share-git-email) touches the config.
  if (!opts.remove || opts.shareGitEmail === false) {
    const server = planServerConfig(opts);
    if (server) plans.push(server);
  }
  if (!opts.dryRun) {
    for (const p of plans)
      if (p.write) writeFileAtomic(p.write.path, p.write.text, p.write.mode, p.write.forceMode);
  }
  const changes = plans.map((p) => p.change);
  return {
    dry_run: opts.dryRun === true,
    remove: opts.remove === true,
    changed: changes.some((c) => c.action === 'created' || c.action === 'updated'),
    changes,
  };
}
