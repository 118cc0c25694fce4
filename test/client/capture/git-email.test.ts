/**
 * The person's git user.email on their participant.join, with their consent (issue 29 item 4,
 * lib/client/capture/git-email.ts), over real git repositories in temp folders (git's global and system
 * config kept out: HOME is a temp folder, GIT_CONFIG_NOSYSTEM). The hooks run in this process
 * (`runClaudeHook`, `runCodexHook`) and, for the consent and a machine without git, as the real
 * `bin/hansard hook claude-code` process.
 */
import { execFileSync } from 'node:child_process';
import { mkdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { validEmail } from '../../../lib/client/capture/git-email.js';
import { runClaudeHook, runCodexHook } from '../../../lib/client/capture/hook.js';
import { syncIntegrations } from '../../../lib/client/capture/integrations.js';
import { configPath, mappingStatePath, readHookFailures } from '../../../lib/client/capture/state-dir.js';
import { runHansard } from '../../support/cli.js';
import { tmpDirs } from '../../support/tmp.js';
import { runHook, sessionEvents, spoolSessions, useBuiltCli, verifyDir } from './helpers.js';

const tmp = tmpDirs('hansard-git-email-');
const cli = useBuiltCli('git-email');

type Env = Record<string, string>;

/** A person's machine: a state dir, a HOME with no git config, and a repository (user.email when given). */
function machine(email?: string): { state: string; repo: string; env: Env } {
  const root = tmp.make();
  const home = join(root, 'home');
  const repo = join(root, 'repo');
  mkdirSync(home);
  const env: Env = {
    HOME: home,
    XDG_CONFIG_HOME: join(home, '.config'),
    GIT_CONFIG_NOSYSTEM: '1',
    PATH: process.env.PATH ?? '/usr/bin:/bin',
    HANSARD_STATE_DIR: join(root, 'state'),
    HANSARD_USER: 'priya',
    CLAUDE_CONFIG_DIR: join(home, '.claude'),
    CODEX_HOME: join(home, '.codex'),
  };
  execFileSync('git', ['init', '-q', repo], { env });
  if (email !== undefined) execFileSync('git', ['-C', repo, 'config', 'user.email', email], { env });
  return { state: env.HANSARD_STATE_DIR!, repo, env };
}

const start = (repo: string, session = 'sess-1', source = 'startup') =>
  JSON.stringify({
    session_id: session,
    hook_event_name: 'SessionStart',
    source,
    cwd: repo,
    transcript_path: join(repo, 'none.jsonl'),
  });

const claude = (raw: string, env: Env) =>
  runClaudeHook(raw, { env, selfCommand: null, startedAt: performance.now() });

/** Every event of the state's only spooled session. */
function events(state: string): Record<string, unknown>[] {
  const dirs = spoolSessions(state);
  expect(dirs).toHaveLength(1);
  return sessionEvents(dirs[0]!);
}
const joins = (evs: Record<string, unknown>[]) => evs.filter((e) => e.type === 'participant.join');
const stateOf = (state: string, harness: 'claude-code' | 'codex', id: string) =>
  JSON.parse(readFileSync(mappingStatePath(state, harness, id), 'utf8')) as Record<string, unknown>;
const contextOf = (stdout: string) =>
  (JSON.parse(stdout) as { hookSpecificOutput: { additionalContext: string } }).hookSpecificOutput
    .additionalContext;

describe('Claude Code, with consent (HANSARD_SHARE_GIT_EMAIL=1)', () => {
  it("records the repository's user.email on the person's participant.join, once per session", async () => {
    const m = machine('Priya.Patel@example.com');
    const env = { ...m.env, HANSARD_SHARE_GIT_EMAIL: '1' };
    const out = await claude(start(m.repo), env);
    expect(contextOf(out)).toContain('hansard is recording this session as s_');
    let evs = events(m.state);
    expect(evs.map((e) => e.type)).toEqual(['writer.start', 'participant.join']);
    expect(evs[1]).toMatchObject({
      type: 'participant.join',
      user_id: 'priya',
      display_name: null,
      email: 'Priya.Patel@example.com',
    });
    // The seed's field order, then the extra field; the join carries no `redacted` (no free text).
    const line = readFileSync(join(spoolSessions(m.state)[0]!, `${evs[0]!.w}.jsonl`), 'utf8').split('\n')[1]!;
    expect(line).toMatch(
      /"type":"participant\.join","user_id":"priya","display_name":null,.*"email":"Priya\.Patel@example\.com"\}$/,
    );
    expect(stateOf(m.state, 'claude-code', 'sess-1').gitEmail).toBe('Priya.Patel@example.com');

    // Read once: a later start of the same session (resumed, compacted) neither reads git nor joins again.
    execFileSync('git', ['-C', m.repo, 'config', 'user.email', 'someone.else@example.com'], { env });
    await claude(start(m.repo, 'sess-1', 'resume'), env);
    await claude(
      JSON.stringify({
        session_id: 'sess-1',
        hook_event_name: 'UserPromptSubmit',
        prompt: 'hi',
        cwd: m.repo,
      }),
      env,
    );
    evs = events(m.state);
    expect(joins(evs)).toHaveLength(1);
    expect(JSON.stringify(evs)).not.toContain('someone.else@example.com');
    expect(evs.find((e) => e.type === 'message')).toMatchObject({ user_id: 'priya' });
    expect(stateOf(m.state, 'claude-code', 'sess-1').gitEmail).toBe('Priya.Patel@example.com');
    expect((await verifyDir(spoolSessions(m.state)[0]!)).filter((p) => p.severity === 'error')).toEqual([]);
    expect(readHookFailures(m.state)).toEqual([]);
  });

  it('records nothing when no user.email is set, or one that is no address; the hook answers as ever', async () => {
    const none = machine();
    const env = { ...none.env, HANSARD_SHARE_GIT_EMAIL: '1' };
    expect(contextOf(await claude(start(none.repo), env))).toContain('hansard is recording this session');
    expect(joins(events(none.state))).toEqual([]);
    expect(stateOf(none.state, 'claude-code', 'sess-1').gitEmail).toBeNull();

    const bad = machine('priya at example dot com');
    await claude(start(bad.repo), { ...bad.env, HANSARD_SHARE_GIT_EMAIL: '1' });
    expect(joins(events(bad.state))).toEqual([]);
    expect(stateOf(bad.state, 'claude-code', 'sess-1').gitEmail).toBeNull();
  });

  it('records nothing without git on PATH, or in a working directory that is gone; the hook still answers', async () => {
    const m = machine('priya@example.com');
    const noGit = tmp.make();
    const env = { ...m.env, HANSARD_SHARE_GIT_EMAIL: '1', PATH: noGit };
    expect(contextOf(await claude(start(m.repo), env))).toContain('hansard is recording this session');
    expect(joins(events(m.state))).toEqual([]);
    expect(stateOf(m.state, 'claude-code', 'sess-1').gitEmail).toBeNull();
    expect(readHookFailures(m.state)).toEqual([]);

    const gone = machine('priya@example.com');
    const out = await claude(start(join(gone.repo, 'no-such-folder')), {
      ...gone.env,
      HANSARD_SHARE_GIT_EMAIL: '1',
    });
    expect(contextOf(out)).toContain('hansard is recording this session');
    expect(joins(events(gone.state))).toEqual([]);
  });
});

describe('Claude Code without consent', () => {
  it('writes no join and no email anywhere, and never reads git (the default)', async () => {
    const m = machine('priya@example.com');
    await claude(start(m.repo), m.env);
    await claude(
      JSON.stringify({
        session_id: 'sess-1',
        hook_event_name: 'UserPromptSubmit',
        prompt: 'hi',
        cwd: m.repo,
      }),
      m.env,
    );
    const evs = events(m.state);
    expect(joins(evs)).toEqual([]);
    expect(JSON.stringify(evs)).not.toContain('priya@example.com');
    expect(stateOf(m.state, 'claude-code', 'sess-1')).not.toHaveProperty('gitEmail');
  });
});

describe('the consent kept by `integrations sync`', () => {
  it('--share-git-email sets it in <state>/config.json, HANSARD_SHARE_GIT_EMAIL=0 overrides it, --no-share-git-email takes it out', async () => {
    const m = machine('priya@example.com');
    const sync = (shareGitEmail: boolean, remove = false) =>
      syncIntegrations({ env: m.env, cwd: m.repo, only: 'claude-code', shareGitEmail, remove });
    const on = sync(true);
    const change = on.changes.find((c) => c.target === 'server-config')!;
    expect(change.message).toContain('they record your git user.email when you join a session');
    expect(JSON.parse(readFileSync(configPath(m.state), 'utf8'))).toMatchObject({ share_git_email: true });
    expect(sync(true).changes.find((c) => c.target === 'server-config')!.action).toBe('unchanged');

    await claude(start(m.repo, 'sess-on'), m.env);
    expect(joins(events(m.state))).toEqual([expect.objectContaining({ email: 'priya@example.com' })]);

    // The environment wins over the file (as HANSARD_URL does): 0 is no consent.
    const off = machine('priya@example.com');
    syncIntegrations({ env: off.env, cwd: off.repo, only: 'claude-code', shareGitEmail: true });
    await claude(start(off.repo, 'sess-env-off'), { ...off.env, HANSARD_SHARE_GIT_EMAIL: '0' });
    expect(joins(events(off.state))).toEqual([]);

    // Taken back (also alongside --remove): the key is gone, and a new session records none.
    sync(false, true);
    expect(JSON.parse(readFileSync(configPath(m.state), 'utf8'))).not.toHaveProperty('share_git_email');
    await claude(start(m.repo, 'sess-off'), m.env);
    const all = spoolSessions(m.state).flatMap((d) => sessionEvents(d));
    expect(joins(all)).toHaveLength(1);
  });
});

describe('`hansard integrations sync` flags', () => {
  it('--share-git-email sets the consent, a sync with neither flag keeps it, --no-share-git-email takes it out; --remove refuses --share-git-email', async () => {
    const m = machine();
    const sync = (...flags: string[]) =>
      runHansard(['integrations', 'sync', '--only', 'claude-code', ...flags], { cwd: m.repo, env: m.env });
    const config = () => JSON.parse(readFileSync(configPath(m.state), 'utf8')) as Record<string, unknown>;
    const on = await sync('--share-git-email');
    expect(on.code).toBe(0);
    expect(on.out).toContain('they record your git user.email when you join a session');
    expect(config().share_git_email).toBe(true);
    expect((await sync('--url', 'http://127.0.0.1:9999')).code).toBe(0);
    expect(config()).toMatchObject({ url: 'http://127.0.0.1:9999', share_git_email: true });
    const refused = await sync('--remove', '--share-git-email');
    expect(refused.code).toBe(2);
    expect(refused.err).toContain('--share-git-email does not go with --remove');
    expect(config().share_git_email).toBe(true);
    const off = await sync('--no-share-git-email');
    expect(off.code).toBe(0);
    expect(config()).not.toHaveProperty('share_git_email');
    expect(config().url).toBe('http://127.0.0.1:9999');
  });
});

describe('Codex, with consent', () => {
  it("writes the join with the email before the thread's first messages, and only once", async () => {
    const m = machine('priya@example.com');
    const env = { ...m.env, HANSARD_SHARE_GIT_EMAIL: '1' };
    const notify = (turn: string) =>
      JSON.stringify({
        type: 'agent-turn-complete',
        'thread-id': 'thread-1',
        'turn-id': turn,
        cwd: m.repo,
        'input-messages': [`do ${turn}`],
        'last-assistant-message': 'done',
      });
    expect(await runCodexHook(notify('t1'), { env, selfCommand: null, startedAt: performance.now() })).toBe(
      '',
    );
    await runCodexHook(notify('t2'), { env, selfCommand: null, startedAt: performance.now() });
    const evs = events(m.state);
    expect(evs.slice(0, 3).map((e) => e.type)).toEqual(['writer.start', 'participant.join', 'message']);
    expect(evs[1]).toMatchObject({
      user_id: 'priya',
      email: 'priya@example.com',
      hook_event: 'agent-turn-complete',
    });
    expect(joins(evs)).toHaveLength(1);
    expect(evs.filter((e) => e.type === 'message')).toHaveLength(2);
    expect(stateOf(m.state, 'codex', 'thread-1').gitEmail).toBe('priya@example.com');
  });
});

describe('validEmail', () => {
  it('takes one @, no space, at most 254 characters, no control or format character; keeps the case', () => {
    expect(validEmail(' Priya@Example.com\n')).toBe('Priya@Example.com');
    expect(validEmail(`${'a'.repeat(242)}@example.com`)).toHaveLength(254);
    for (const bad of [
      '',
      'priya',
      'a@b@example.com',
      '@example.com',
      'priya@',
      'priya patel@example.com',
      `${'a'.repeat(243)}@example.com`,
      'pri\u0000ya@example.com',
      'pri\u202eya@example.com',
    ])
      expect(validEmail(bad), JSON.stringify(bad)).toBeNull();
  });
});

describe('the real hook process', () => {
  it('records the join with consent, and without git on PATH answers the same with no join', async () => {
    const m = machine('priya@example.com');
    const run = await runHook(cli.bin, ['claude-code'], start(m.repo), {
      ...m.env,
      HANSARD_SHARE_GIT_EMAIL: '1',
    });
    expect(run.code).toBe(0);
    expect(run.stderr).toBe('');
    expect(contextOf(run.stdout)).toContain('hansard is recording this session');
    expect(joins(events(m.state))).toEqual([expect.objectContaining({ email: 'priya@example.com' })]);

    const bare = machine('priya@example.com');
    const noGit = await runHook(cli.bin, ['claude-code'], start(bare.repo), {
      ...bare.env,
      HANSARD_SHARE_GIT_EMAIL: '1',
      PATH: tmp.make(),
    });
    expect(noGit.code).toBe(0);
    expect(contextOf(noGit.stdout)).toContain('hansard is recording this session');
    expect(joins(events(bare.state))).toEqual([]);
    expect(readHookFailures(bare.state)).toEqual([]);
  });
});
