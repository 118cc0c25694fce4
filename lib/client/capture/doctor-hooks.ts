/**
 * `hansard doctor`'s checks of the hooks installed in Claude Code and Codex (lib/client/capture/doctor.ts): the
 * files `hansard integrations sync` writes (lib/client/capture/integrations.ts) hold hansard's entries, for every
 * event, with a command that still runs (its node and bin/hansard exist).
 */
import { existsSync, readFileSync } from 'node:fs';
import { dirname, resolve } from 'node:path';
import type { Finding } from './doctor-finding.js';
import {
  claudeProjectSettingsPath,
  claudeUserSettingsPath,
  codexConfigPath,
  shellLine,
} from './integrations.js';
import { CLAUDE_HOOK_EVENTS, claudeHooksState, parseClaudeSettings } from './integrations-claude.js';
import { isHansardNotify, parseCodexConfig } from './integrations-codex.js';

const q = (s: string) => shellLine([s]);

/** The absolute paths a hook command runs (node, bin/hansard) that no longer exist. */
function missingPaths(words: string[]): string[] {
  const upToHook = words.slice(0, Math.max(0, words.indexOf('hook')));
  return upToHook.filter((w) => w.startsWith('/') && !existsSync(w));
}

/** A shell command line split into words (single and double quotes, backslash escapes). */
function shellWords(line: string): string[] {
  const words: string[] = [];
  for (const m of line.matchAll(/'([^']*)'|"((?:[^"\\]|\\.)*)"|((?:[^\s'"\\]|\\.)+)/g)) {
    words.push(m[1] ?? m[2]?.replace(/\\(.)/g, '$1') ?? m[3]!.replace(/\\(.)/g, '$1'));
  }
  // '\'' joins quoted pieces in one word; a word split that way only loses the path check, never passes a bad one
  return words;
}

/**
 * Claude Code's hooks: the user's settings and the project's (when it is another file) hold hansard's hook
 * for every event, with a command whose files exist. `absent`: Claude Code has no settings folder here.
 */
export function claudeFinding(opts: { env: NodeJS.ProcessEnv; cwd: string; project?: string }): {
  finding: Finding;
  absent: boolean;
} {
  const userPath = claudeUserSettingsPath(opts.env);
  const projectDir = resolve(opts.cwd, opts.project ?? '.');
  const projectPath = claudeProjectSettingsPath(projectDir);
  const files = [{ path: userPath, fix: 'hansard integrations sync --only claude-code' }];
  if (resolve(projectPath) !== resolve(userPath)) {
    files.push({ path: projectPath, fix: `hansard integrations sync --project ${q(projectDir)}` });
  }
  const problems: { message: string; fix: string }[] = [];
  const installed: string[] = [];
  const commands: string[] = [];
  for (const f of files) {
    let text: string;
    try {
      text = readFileSync(f.path, 'utf8');
    } catch {
      continue; // absent: nothing installed there
    }
    let state: ReturnType<typeof claudeHooksState>;
    try {
      state = claudeHooksState(parseClaudeSettings(text, f.path));
    } catch (err) {
      problems.push({ message: (err as Error).message, fix: `fix ${q(f.path)} by hand, then ${f.fix}` });
      continue;
    }
    if (state.events.length === 0) continue;
    const lacking = CLAUDE_HOOK_EVENTS.filter((e) => !state.events.includes(e));
    const gone = [...new Set(state.commands.flatMap((c) => missingPaths(shellWords(c))))];
    if (lacking.length > 0)
      problems.push({ message: `${f.path} lacks hansard's hook for ${lacking.join(', ')}`, fix: f.fix });
    if (gone.length > 0)
      problems.push({
        message: `${f.path}: the hook runs ${gone.join(', ')}, which no longer exists`,
        fix: f.fix,
      });
    if (lacking.length === 0 && gone.length === 0) installed.push(f.path);
    commands.push(...state.commands);
  }
  // Claude Code runs the hooks of both files; it merges identical commands only, so two different
  // hansard commands would record every event twice.
  if (new Set(commands).size > 1) {
    problems.push({
      message: `hansard's hook is installed with different commands (${[...new Set(commands)].join(' | ')}): each event would be recorded more than once`,
      fix: files.map((f) => f.fix).join(' && '),
    });
  }
  if (problems.length > 0) {
    return {
      finding: {
        check: 'claude_code_hooks',
        ok: false,
        message: problems.map((p) => p.message).join('; '),
        fix: [...new Set(problems.map((p) => p.fix))].join(' && '),
      },
      absent: false,
    };
  }
  if (installed.length > 0) {
    return {
      finding: {
        check: 'claude_code_hooks',
        ok: true,
        message: `hansard's hooks for all ${CLAUDE_HOOK_EVENTS.length} events in ${installed.join(' and ')}`,
        fix: null,
      },
      absent: false,
    };
  }
  const absent = !existsSync(dirname(userPath)) && !existsSync(projectPath);
  return {
    finding: {
      check: 'claude_code_hooks',
      ok: absent, // no Claude Code here: fine unless Codex does not capture either (runDoctor decides)
      message: absent
        ? `Claude Code is not set up here (no ${dirname(userPath)}); hansard integrations sync installs its hooks`
        : `hansard's hooks are not installed in ${files.map((f) => f.path).join(' or ')}`,
      fix: 'hansard integrations sync',
    },
    absent,
  };
}

/** Codex's `notify` runs hansard. `absent`: there is no Codex folder here. */
export function codexFinding(env: NodeJS.ProcessEnv): { finding: Finding; absent: boolean } {
  const path = codexConfigPath(env);
  const fix = 'hansard integrations sync --only codex';
  let text: string | null = null;
  try {
    text = readFileSync(path, 'utf8');
  } catch {
    // absent
  }
  let notify: unknown;
  try {
    notify = parseCodexConfig(text, path).notify;
  } catch (err) {
    return {
      finding: {
        check: 'codex_notify',
        ok: false,
        message: (err as Error).message,
        fix: `fix ${q(path)} by hand, then ${fix}`,
      },
      absent: false,
    };
  }
  if (isHansardNotify(notify)) {
    const gone = missingPaths(notify as string[]);
    return {
      finding:
        gone.length > 0
          ? {
              check: 'codex_notify',
              ok: false,
              message: `${path}: notify runs ${gone.join(', ')}, which no longer exists`,
              fix,
            }
          : {
              check: 'codex_notify',
              ok: true,
              message: `${path}: notify runs hansard hook codex`,
              fix: null,
            },
      absent: false,
    };
  }
  if (notify !== undefined) {
    return {
      finding: {
        check: 'codex_notify',
        ok: false,
        message: `${path}: notify runs another program (${JSON.stringify(notify)}); Codex takes one, so hansard does not capture Codex`,
        fix: `${fix} --force`,
      },
      absent: false,
    };
  }
  const absent = !existsSync(dirname(path));
  return {
    finding: {
      check: 'codex_notify',
      ok: absent,
      message: absent
        ? `Codex is not set up here (no ${dirname(path)}); hansard integrations sync installs its notify`
        : `${path} has no notify: hansard does not capture Codex`,
      fix,
    },
    absent,
  };
}
