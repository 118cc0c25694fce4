/**
 * `hansard integrations sync` (issue 11 item 4) on real files in a temporary HOME, through the CLI in
 * this process: hansard's hooks merged into Claude Code's settings and Codex's config, other hooks and
 * keys untouched, a second run byte-identical, `--remove` taking out only hansard's entries, `--dry-run`
 * writing nothing, malformed files refused with exit 2 and left as they were.
 */
import {
  chmodSync,
  existsSync,
  lstatSync,
  mkdirSync,
  readFileSync,
  statSync,
  symlinkSync,
  writeFileSync,
} from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { CLAUDE_HOOK_EVENTS } from '../../../lib/client/capture/integrations-claude.js';
import { runHansard } from '../../support/cli.js';
import { tmpDirs } from '../../support/tmp.js';

const dirs = tmpDirs('hansard-integrations-');
const TOKEN = `hns_${'a'.repeat(43)}`;

/** A temporary HOME with the given Claude Code settings and Codex config (null: absent). */
function home(claude: string | null, codex: string | null) {
  const root = dirs.make();
  const h = {
    root,
    settings: join(root, '.claude', 'settings.json'),
    codex: join(root, '.codex', 'config.toml'),
  };
  if (claude !== null) {
    mkdirSync(join(root, '.claude'));
    writeFileSync(h.settings, claude);
  }
  if (codex !== null) {
    mkdirSync(join(root, '.codex'));
    writeFileSync(h.codex, codex);
  }
  return h;
}

const env = (root: string, more: Record<string, string> = {}) => ({
  HOME: root,
  HANSARD_STATE_DIR: join(root, 'state'),
  ...more,
});
const sync = (root: string, args: string[] = [], more: Record<string, string> = {}) =>
  runHansard(['integrations', 'sync', ...args], { cwd: root, env: env(root, more) });
const read = (p: string) => readFileSync(p, 'utf8');

const FOREIGN_SETTINGS = `{
  "model": "opus",
  "permissions": { "allow": ["Bash(npm test)"] },
  "hooks": {
    "PreToolUse": [
      { "matcher": "Bash", "hooks": [{ "type": "command", "command": "~/bin/guard.sh", "timeout": 30 }] }
    ],
    "PostToolUseFailure": [{ "hooks": [{ "type": "command", "command": "notify-send failed" }] }]
  }
}
`;
const FOREIGN_TOML = `# my Codex settings
model = "o3" # the model I like

[model_providers.local]
name = "local" # loopback
base_url = "http://127.0.0.1:9/v1"
`;

/** Every hansard hook entry of a settings object, by event. */
function hansardEntries(settings: {
  hooks?: Record<string, { matcher?: string; hooks: { command: string }[] }[]>;
}) {
  const out: Record<string, { matcher?: string; command: string }[]> = {};
  for (const [event, groups] of Object.entries(settings.hooks ?? {})) {
    for (const g of groups) {
      for (const h of g.hooks) {
        if (/hansard\S*\s+hook claude-code/.test(h.command)) {
          out[event] ??= [];
          out[event].push({
            ...(g.matcher !== undefined ? { matcher: g.matcher } : {}),
            command: h.command,
          });
        }
      }
    }
  }
  return out;
}

describe('hansard integrations sync', () => {
  it('installs a hook for each event and Codex notify, keeping foreign hooks, keys and TOML comments', async () => {
    const h = home(FOREIGN_SETTINGS, FOREIGN_TOML);
    const r = await sync(h.root);
    expect(r.err).toBe('');
    expect(r.code).toBe(0);
    const s = JSON.parse(read(h.settings));
    const before = JSON.parse(FOREIGN_SETTINGS);
    expect(s.model).toBe('opus');
    expect(s.permissions).toEqual(before.permissions);
    expect(s.hooks.PostToolUseFailure[0]).toEqual(before.hooks.PostToolUseFailure[0]);
    expect(s.hooks.PreToolUse[0]).toEqual(before.hooks.PreToolUse[0]);
    const ours = hansardEntries(s);
    expect(Object.keys(ours).sort()).toEqual([...CLAUDE_HOOK_EVENTS].sort());
    for (const e of CLAUDE_HOOK_EVENTS) expect(ours[e]).toHaveLength(1);
    expect(ours.PreToolUse![0]!.matcher).toBe('*');
    expect(ours.PostToolUseFailure![0]!.matcher).toBe('*');
    expect(ours.Stop![0]!.matcher).toBeUndefined();
    const command = ours.Stop![0]!.command;
    expect(command).toMatch(/\/bin\/hansard hook claude-code$/);
    expect(command.startsWith(process.execPath)).toBe(true);

    const toml = read(h.codex);
    expect(toml).toContain('# my Codex settings');
    expect(toml).toContain('model = "o3" # the model I like');
    expect(toml).toContain('name = "local" # loopback');
    expect(toml).toMatch(/^notify = \[ ".*node.*", ".*\/bin\/hansard", "hook", "codex" \]$/m);
    // notify is a top-level key: it must come before the first table
    expect(toml.indexOf('notify')).toBeLessThan(toml.indexOf('[model_providers.local]'));
  });

  it('is idempotent: a second run writes the same bytes and reports no change', async () => {
    const h = home(FOREIGN_SETTINGS, FOREIGN_TOML);
    expect((await sync(h.root, ['--token', TOKEN])).code).toBe(0);
    const first = [read(h.settings), read(h.codex), read(join(h.root, 'state', 'config.json'))];
    const again = await sync(h.root, ['--token', TOKEN, '--json']);
    expect(again.code).toBe(0);
    expect([read(h.settings), read(h.codex), read(join(h.root, 'state', 'config.json'))]).toEqual(first);
    const report = JSON.parse(again.out);
    expect(report.changed).toBe(false);
    expect(report.changes.map((c: { action: string }) => c.action)).toEqual([
      'unchanged',
      'unchanged',
      'unchanged',
    ]);
  });

  it('refreshes an old hansard entry in place and takes one out of a foreign group, never duplicating it', async () => {
    const old = {
      hooks: {
        Stop: [
          { hooks: [{ type: 'command', command: 'echo first' }] },
          { hooks: [{ type: 'command', command: '/old/checkout/bin/hansard hook claude-code' }] },
          { hooks: [{ type: 'command', command: 'echo last' }] },
        ],
        PreToolUse: [
          {
            matcher: '*',
            hooks: [
              { type: 'command', command: 'echo mine' },
              { type: 'command', command: 'hansard hook claude-code' },
            ],
          },
        ],
      },
    };
    const h = home(JSON.stringify(old, null, 2), null);
    expect((await sync(h.root)).code).toBe(0);
    const s = JSON.parse(read(h.settings));
    // the old entry keeps its place between the foreign ones, with the new command
    expect(s.hooks.Stop.map((g: { hooks: { command: string }[] }) => g.hooks[0]!.command)).toEqual([
      'echo first',
      expect.stringMatching(/^\/.*\/bin\/hansard hook claude-code$/),
      'echo last',
    ]);
    expect(s.hooks.PreToolUse[0]).toEqual({
      matcher: '*',
      hooks: [{ type: 'command', command: 'echo mine' }],
    });
    expect(hansardEntries(s).PreToolUse).toHaveLength(1);
  });

  it('--remove takes out only hansard entries: the foreign settings and the TOML come back as they were', async () => {
    const h = home(FOREIGN_SETTINGS, FOREIGN_TOML);
    expect((await sync(h.root)).code).toBe(0);
    const r = await sync(h.root, ['--remove', '--json']);
    expect(r.code).toBe(0);
    expect(JSON.parse(r.out).changed).toBe(true);
    expect(JSON.parse(read(h.settings))).toEqual(JSON.parse(FOREIGN_SETTINGS));
    expect(read(h.codex)).toBe(FOREIGN_TOML);
    // and a remove with nothing of hansard's left changes nothing
    const settings = read(h.settings);
    expect(JSON.parse((await sync(h.root, ['--remove', '--json'])).out).changed).toBe(false);
    expect(read(h.settings)).toBe(settings);
  });

  it('--remove leaves another program in Codex notify alone', async () => {
    const toml = 'notify = ["/usr/local/bin/ding"]\n';
    const h = home(null, toml);
    expect((await sync(h.root, ['--remove'])).code).toBe(0);
    expect(read(h.codex)).toBe(toml);
  });

  it('--dry-run shows a unified diff and writes nothing', async () => {
    const h = home(FOREIGN_SETTINGS, FOREIGN_TOML);
    const mtime = statSync(h.settings).mtimeMs;
    const r = await sync(h.root, ['--dry-run', '--token', TOKEN]);
    expect(r.code).toBe(0);
    expect(read(h.settings)).toBe(FOREIGN_SETTINGS);
    expect(read(h.codex)).toBe(FOREIGN_TOML);
    expect(statSync(h.settings).mtimeMs).toBe(mtime);
    expect(existsSync(join(h.root, 'state', 'config.json'))).toBe(false);
    expect(r.out).toContain(`--- ${h.settings}`);
    expect(r.out).toContain(`+++ ${h.settings}`);
    expect(r.out).toMatch(/^\+ {4}"SessionStart": \[$/m);
    expect(r.out).toMatch(/^\+notify = \[/m);
    expect(r.out).toContain('--- /dev/null'); // the state config would be new
    expect(r.out).not.toContain(TOKEN); // the token is masked in the diff
    expect(r.out).toContain('dry run: nothing was written');
  });

  it('keeps CRLF line ends in a CRLF settings file', async () => {
    const crlf = FOREIGN_SETTINGS.replaceAll('\n', '\r\n');
    const h = home(crlf, null);
    expect((await sync(h.root)).code).toBe(0);
    const text = read(h.settings);
    expect(text).toContain('hook claude-code');
    expect(text.replaceAll('\r\n', '')).not.toContain('\n');
  });

  it('refuses malformed JSON settings with exit 2 and writes nothing, the Codex config neither', async () => {
    const bad = '{ "hooks": { "Stop": [ }\n';
    const h = home(bad, FOREIGN_TOML);
    const r = await sync(h.root, ['--token', TOKEN]);
    expect(r.code).toBe(2);
    expect(r.err).toContain(h.settings);
    expect(r.err).toContain('not valid JSON');
    expect(read(h.settings)).toBe(bad);
    expect(read(h.codex)).toBe(FOREIGN_TOML);
    expect(existsSync(join(h.root, 'state', 'config.json'))).toBe(false);
  });

  it('refuses hooks that are not Claude Code shaped with exit 2', async () => {
    const bad = '{"hooks": {"Stop": "echo no"}}\n';
    const h = home(bad, null);
    const r = await sync(h.root);
    expect(r.code).toBe(2);
    expect(r.err).toContain('hooks.Stop');
    expect(read(h.settings)).toBe(bad);
  });

  it('refuses a malformed config.toml with exit 2 and writes nothing, the Claude settings neither', async () => {
    const bad = 'model = = "o3"\n[tui\n';
    const h = home(FOREIGN_SETTINGS, bad);
    const r = await sync(h.root, ['--json']);
    expect(r.code).toBe(2);
    expect(JSON.parse(r.err).error.message).toContain('not valid TOML');
    expect(read(h.codex)).toBe(bad);
    expect(read(h.settings)).toBe(FOREIGN_SETTINGS);
  });

  it("leaves another program's Codex notify alone (exit 1) unless --force", async () => {
    const toml = '# mine\nnotify = ["/usr/local/bin/ding", "--loud"]\n';
    const h = home(null, toml);
    const r = await sync(h.root);
    expect(r.code).toBe(1);
    expect(r.out).toContain('--force');
    expect(read(h.codex)).toBe(toml);
    expect(existsSync(h.settings)).toBe(true); // Claude Code's part was done all the same
    expect((await sync(h.root, ['--force'])).code).toBe(0);
    expect(read(h.codex)).toMatch(/^# mine\nnotify = \[ ?".*", ".*\/bin\/hansard", "hook", "codex" ?\]\n$/);
  });

  it('writes <state>/config.json with mode 0600 from --url/--token or HANSARD_URL/HANSARD_TOKEN; a bad token is exit 2', async () => {
    const h = home(null, null);
    expect(
      (await sync(h.root, [], { HANSARD_URL: 'http://127.0.0.1:9999', HANSARD_TOKEN: TOKEN })).code,
    ).toBe(0);
    const path = join(h.root, 'state', 'config.json');
    expect(JSON.parse(read(path))).toEqual({ url: 'http://127.0.0.1:9999', token: TOKEN });
    expect(statSync(path).mode & 0o777).toBe(0o600);
    const bad = await sync(h.root, ['--token', 'hns_short']);
    expect(bad.code).toBe(2);
    expect(bad.err).toContain('not a hansard token');
    expect(JSON.parse(read(path)).token).toBe(TOKEN);
  });

  it('keeps the mode of an existing file and writes through a symlink', async () => {
    const h = home(FOREIGN_SETTINGS, null);
    chmodSync(h.settings, 0o640);
    const real = join(h.root, 'dotfiles-codex.toml');
    writeFileSync(real, FOREIGN_TOML);
    mkdirSync(join(h.root, '.codex'));
    symlinkSync(real, h.codex);
    expect((await sync(h.root)).code).toBe(0);
    expect(statSync(h.settings).mode & 0o777).toBe(0o640);
    expect(lstatSync(h.codex).isSymbolicLink()).toBe(true);
    expect(read(real)).toContain('hook');
  });

  it('--project DIR installs into DIR/.claude/settings.json and leaves the user settings and Codex alone', async () => {
    const h = home(FOREIGN_SETTINGS, FOREIGN_TOML);
    const project = join(h.root, 'repo');
    mkdirSync(project);
    const r = await sync(h.root, ['--project', project]);
    expect(r.code).toBe(0);
    expect(
      Object.keys(hansardEntries(JSON.parse(read(join(project, '.claude', 'settings.json'))))),
    ).toHaveLength(CLAUDE_HOOK_EVENTS.length);
    expect(read(h.settings)).toBe(FOREIGN_SETTINGS);
    expect(read(h.codex)).toBe(FOREIGN_TOML);
  });

  it('--project without a folder means this one; with --only codex it is a usage error', async () => {
    const h = home(null, null);
    const project = join(h.root, 'repo');
    mkdirSync(project);
    const r = await runHansard(['integrations', 'sync', '--project'], { cwd: project, env: env(h.root) });
    expect(r.code).toBe(0);
    expect(existsSync(join(project, '.claude', 'settings.json'))).toBe(true);
    expect(existsSync(h.settings)).toBe(false);
    const bad = await sync(h.root, ['--project', '--only', 'codex']);
    expect(bad.code).toBe(2);
    expect(bad.err).toContain('--project');
  });

  it('respects CODEX_HOME and CLAUDE_CONFIG_DIR', async () => {
    const h = home(null, null);
    const more = { CODEX_HOME: join(h.root, 'cx'), CLAUDE_CONFIG_DIR: join(h.root, 'cc') };
    expect((await sync(h.root, [], more)).code).toBe(0);
    expect(read(join(h.root, 'cx', 'config.toml'))).toContain('"codex"');
    expect(read(join(h.root, 'cc', 'settings.json'))).toContain('hook claude-code');
    expect(existsSync(h.settings)).toBe(false);
  });
});
