/**
 * `hansard integrations sync [--project [DIR]] [--only claude-code|codex] [--remove] [--dry-run]
 * [--force] [--url URL] [--token T] [--share-git-email | --no-share-git-email] [--json]` (issue 11 item 4,
 * DESIGN §6; the consent of issue 29 item 4, lib/client/capture/git-email.ts): installs or refreshes
 * hansard's hooks in Claude Code's settings and Codex's config (lib/client/capture/integrations.ts). Exit 0 when
 * done (changed or not), 1 when Codex's notify belongs to another program and was left alone, 2 when a
 * file cannot be parsed (nothing is written then) or a flag is wrong.
 */
import { type Command, Option } from 'commander';
import { escapeControl } from '../../log/format/escape.js';
import { ExitError, UsageError } from '../api/errors.js';
import { type Io, printJson } from '../api/io.js';
import { IntegrationsInputError, type SyncResult, syncIntegrations } from '../capture/integrations.js';
import { SettingsFormatError } from '../capture/integrations-claude.js';
import { CodexConfigError } from '../capture/integrations-codex.js';
import { jsonOption } from './options.js';

/** The options of `hansard integrations sync`, as commander parses them. */
export interface SyncFlags {
  project?: string | true;
  only?: 'claude-code' | 'codex';
  remove?: boolean;
  dryRun?: boolean;
  force?: boolean;
  url?: string;
  token?: string;
  /** true: `--share-git-email`; false: `--no-share-git-email`; absent: neither */
  shareGitEmail?: boolean;
  json?: boolean;
}

export function registerIntegrations(program: Command, io: Io): void {
  const integrations = program
    .command('integrations')
    .description("install or refresh hansard's capture hooks in Claude Code and Codex");
  integrations
    .command('sync')
    .description(
      "install or refresh hansard's hooks in Claude Code's settings (~/.claude/settings.json) and Codex's notify (~/.codex/config.toml), merging into what is there",
    )
    .option(
      '--project [dir]',
      "Claude Code's hooks into DIR/.claude/settings.json (default: this folder) instead of the user's; Codex is left alone",
    )
    .addOption(new Option('--only <harness>', 'one harness only').choices(['claude-code', 'codex']))
    .option('--remove', "take hansard's entries out (other hooks and keys stay)")
    .option('--dry-run', 'show the changes as a unified diff and write nothing')
    .option('--force', "replace Codex's notify even when it runs another program")
    .option('--url <url>', 'the server the hooks ship to, kept in <state>/config.json (default HANSARD_URL)')
    .option('--token <token>', 'the token they ship with, kept there with mode 0600 (default HANSARD_TOKEN)')
    .option(
      '--share-git-email',
      'your consent: the hooks record your git user.email on your participant.join when a session starts, so the board can list your sessions under your sign-in (kept in <state>/config.json; HANSARD_SHARE_GIT_EMAIL=1|0 wins over it)',
    )
    .option('--no-share-git-email', 'take that consent back: the hooks record no email')
    .addOption(jsonOption())
    .addHelpText(
      'after',
      '\nA second run changes nothing. A settings file that is not valid JSON (or a config.toml that is not\n' +
        'TOML) is refused and left as it is. Restart Claude Code and Codex afterwards to load the hooks;\n' +
        'no conversation needs importing again. Then check with: hansard doctor',
    )
    .action((o: SyncFlags) => syncIntegrationsCommand(o, io));
}

function printResult(io: Io, r: SyncResult): void {
  for (const c of r.changes) {
    const mark = c.action === 'conflict' ? '✗' : c.action === 'unchanged' ? '=' : r.dry_run ? '~' : '✓';
    io.stdout.write(`${mark} ${escapeControl(c.message)}\n`);
    if (r.dry_run && c.diff) io.stdout.write(c.diff.split('\n').map(escapeControl).join('\n'));
  }
  if (r.dry_run)
    io.stdout.write(r.changed ? 'dry run: nothing was written\n' : 'dry run: nothing to change\n');
  else if (r.changed)
    io.stdout.write('Restart Claude Code and Codex to load the hooks, then check: hansard doctor\n');
}

/**
 * `hansard integrations sync`: places (or with `--remove` takes out) hansard's hooks in Claude Code and
 * Codex (lib/client/capture `syncIntegrations`) and prints each change, or the result as JSON.
 * @throws UsageError for `--project` with `--only codex`, or settings that cannot be read
 * @throws ExitError 1 when a setting of someone else's stood in the way (a conflict)
 */
export function syncIntegrationsCommand(o: SyncFlags, io: Io): void {
  if (o.project !== undefined && o.only === 'codex') {
    throw new UsageError('--project places Claude Code hooks; it does not go with --only codex');
  }
  if (o.remove && o.shareGitEmail === true) {
    throw new UsageError(
      '--share-git-email does not go with --remove (take consent back with --no-share-git-email)',
    );
  }
  let result: SyncResult;
  try {
    result = syncIntegrations({
      env: io.env,
      cwd: io.cwd,
      ...(o.project !== undefined ? { project: o.project === true ? '.' : o.project } : {}),
      ...(o.only ? { only: o.only } : {}),
      remove: o.remove === true,
      dryRun: o.dryRun === true,
      force: o.force === true,
      ...(o.url !== undefined ? { url: o.url } : {}),
      ...(o.token !== undefined ? { token: o.token } : {}),
      ...(o.shareGitEmail !== undefined ? { shareGitEmail: o.shareGitEmail } : {}),
    });
  } catch (err) {
    if (
      err instanceof SettingsFormatError ||
      err instanceof CodexConfigError ||
      err instanceof IntegrationsInputError
    ) {
      throw new UsageError(err.message);
    }
    throw err;
  }
  const conflict = result.changes.some((c) => c.action === 'conflict');
  if (o.json) printJson(io, result);
  else printResult(io, result);
  if (conflict) throw new ExitError(1);
}
