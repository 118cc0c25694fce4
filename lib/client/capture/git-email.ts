/**
 * The person's git `user.email` on their `participant.join` (issue 29 item 4: "the capture hook records
 * the person's git user.email where one is set, with their consent by a setting"), so the board can list
 * their sessions under their sign-in identity ("my sessions").
 *
 * Consent is the person's own and off by default: `share_git_email: true` in `<state>/config.json` (the
 * file the hooks already read for their server, in the person's own state directory, mode 0600; written
 * by `hansard integrations sync --share-git-email`, taken out by `--no-share-git-email`), or
 * `HANSARD_SHARE_GIT_EMAIL=1` (`0` turns it off), which wins over the file as `HANSARD_URL` does.
 *
 * With consent, the hook runs `git config --get user.email` in the session's working directory once per
 * session, at its start (Claude Code's `SessionStart`, a Codex thread's first notify), before it takes
 * the session's lock and with a short timeout (`GIT_EMAIL_TIMEOUT_MS`), and keeps what it read in the
 * session's mapping state (`gitEmail`: the address, or null when none was set), so it never runs again
 * for that session. No git, no address set, one that does not look like an address, or a git slower than
 * the timeout: nothing is recorded, and the hook answers as without consent.
 *
 * The address goes on the person's `participant.join` as the field `email`, outside the type's own fields
 * (seed 001: "unrecognized fields on a known event type round-trip losslessly through extra"; DESIGN §3
 * serialization order puts it after `display_name`). The type carries no free text, so the writer never
 * redacts it: it is the person's own identity, recorded because they asked. Without consent, or without
 * an address, no join is written (the hook wrote none before issue 29).
 */
import { execFile } from 'node:child_process';
import { EmailAddress } from '../../contract/sign-in.js';
import type { EmitOptions, SessionWriter } from '../../log/write/writer.js';
import { readJson } from '../api/json-files.js';
import { readRegularFile } from '../api/safe-fs.js';
import { hookBudgetMs } from './hook-watchdog.js';
import { type CaptureHarness, configPath, mappingStatePath } from './state-dir.js';

/** The environment variable of the consent: `1` on, `0` off; unset (or anything else): the config file. */
export const SHARE_GIT_EMAIL_ENV = 'HANSARD_SHARE_GIT_EMAIL';
/** The key of the consent in `<state>/config.json`. */
export const SHARE_GIT_EMAIL_KEY = 'share_git_email';
/** Longest wait for `git config`, in ms: it answers in a few ms; the hook's budget is 3.5 s. */
export const GIT_EMAIL_TIMEOUT_MS = 500;
/**
 * The part of the hook's budget (ms) git never takes: the session's lock, writing and saving, and the
 * answer (a SessionStart's token request takes what is left, at most 1.5 s: session-start.ts).
 */
export const GIT_EMAIL_RESERVE_MS = 1_500;

/** The part of a session's mapping state this module keeps. */
export interface GitEmailState {
  /** the git `user.email` read at the session's start; null: read, none set; absent: not read */
  gitEmail?: string | null;
}

/**
 * Whether the person consented to record their git `user.email`: `HANSARD_SHARE_GIT_EMAIL` (`1`/`0`),
 * else `share_git_email: true` in `<state>/config.json`. Never throws (an unreadable file: no consent).
 */
export function shareGitEmail(env: NodeJS.ProcessEnv, state: string): boolean {
  const v = env[SHARE_GIT_EMAIL_ENV];
  if (v === '1') return true;
  if (v === '0') return false;
  try {
    const file = JSON.parse(readRegularFile(configPath(state), 1024 * 1024).toString('utf8')) as unknown;
    return (file as Record<string, unknown> | null)?.[SHARE_GIT_EMAIL_KEY] === true;
  } catch {
    return false;
  }
}

/**
 * `raw` as the hook records it: trimmed, one `@`, no space, at most 254 characters (lib/contract/sign-in.ts
 * `EmailAddress`), and no control or format character; else null. Its case is kept: the server
 * compares addresses in lower case (`normalEmail`).
 */
export function validEmail(raw: string): string | null {
  const email = raw.trim();
  if (/[\p{Cc}\p{Cf}]/u.test(email)) return null;
  return EmailAddress.safeParse(email).success ? email : null;
}

/**
 * `git config --get user.email` in `cwd` (the repository's setting, else the person's global one), given
 * at most `timeoutMs` (then killed). Resolves to the address (`validEmail`), or null: no git, no address
 * set, `cwd` gone, too slow, or not an address. Never rejects. Git is told never to prompt.
 */
export function readGitEmail(cwd: string, timeoutMs: number, env: NodeJS.ProcessEnv): Promise<string | null> {
  return new Promise((done) => {
    try {
      execFile(
        'git',
        ['config', '--get', 'user.email'],
        {
          cwd,
          env: { ...env, GIT_TERMINAL_PROMPT: '0' },
          timeout: Math.max(1, Math.floor(timeoutMs)),
          killSignal: 'SIGKILL',
          maxBuffer: 4096,
          windowsHide: true,
          encoding: 'utf8',
        },
        (err, stdout) => done(err ? null : validEmail(String(stdout))),
      );
    } catch {
      done(null); // a cwd that is not a string, an env the platform refuses
    }
  });
}

/**
 * What a hook invocation reads at a session's start: the git `user.email` of `cwd` when the person
 * consented (`shareGitEmail`) and the session's mapping state (`harness`, `id` under `state`) has not
 * read it yet; undefined when there is nothing to read (no consent, no cwd, read already, or less of the
 * hook's budget left than `GIT_EMAIL_RESERVE_MS` and 1 ms). The state is only peeked at here (no lock):
 * the write under the lock checks again (`joinWithEmail`), so two starts at once record one join.
 * Git gets at most `GIT_EMAIL_TIMEOUT_MS`, and never more than the budget leaves past the reserve.
 * @param ctx the invocation's environment and start (ms on `performance.now()`'s clock; default 0)
 */
export async function gitEmailAtStart(
  ctx: { env: NodeJS.ProcessEnv; startedAt?: number },
  state: string,
  harness: CaptureHarness,
  id: string,
  cwd: string | null | undefined,
): Promise<string | null | undefined> {
  if (!cwd || !shareGitEmail(ctx.env, state)) return undefined;
  const left = hookBudgetMs(ctx.env) - (performance.now() - (ctx.startedAt ?? 0)) - GIT_EMAIL_RESERVE_MS;
  if (left < 1) return undefined;
  const st = readJson(mappingStatePath(state, harness, id)) as GitEmailState | null;
  if (st && st.gitEmail !== undefined) return undefined;
  return readGitEmail(cwd, Math.min(GIT_EMAIL_TIMEOUT_MS, left), ctx.env);
}

/**
 * Records what `gitEmailAtStart` read, once per session: when `email` was read (not undefined) and the
 * state has none yet, keeps it in `st.gitEmail` and, for an address, writes the person's
 * `participant.join` (`user_id`, `display_name` null) with `email` among its fields. Returns whether a
 * join was written. Throws only the writer's errors.
 */
export function joinWithEmail(
  w: SessionWriter,
  st: GitEmailState,
  userId: string,
  email: string | null | undefined,
  o: EmitOptions,
): boolean {
  if (email === undefined || st.gitEmail !== undefined) return false;
  st.gitEmail = email;
  if (email === null) return false;
  w.participantJoin({ user_id: userId, display_name: null }, { ...o, extra: { ...o.extra, email } });
  return true;
}
