/**
 * One hook invocation (issue 11): `hansard hook claude-code` (payload on stdin) and `hansard hook codex`
 * (payload as the last argument). Never in the agent's way: these functions never throw and return only
 * what belongs on stdout (empty, or Claude Code's SessionStart JSON); every failure is recorded without
 * payload content in `<state>/hook-failures.json`.
 *
 * Steps: parse (zod, tolerant), take the per-session lock (proper-lockfile), load the mapping state,
 * reopen the spool writer and write the mapped events (redacted by the writer), save the state (tmp +
 * rename), unlock, then start the detached shipper without waiting for it. The 3.5 s deadline is the
 * caller's (`hook-main.ts`, `hook-watchdog.ts`): it answers empty and exits 0 whatever is still pending,
 * even when this code blocks.
 */
import { randomUUID } from 'node:crypto';
import { lstatSync, readdirSync, unlinkSync } from 'node:fs';
import { join } from 'node:path';
import { renewSessionLeases } from '../work/hook-heartbeat.js';
import { applyClaudeEvent, ClaudeHookPayload, type ClaudeState, newClaudeState } from './claude-code.js';
import { USAGE_READ_MAX_BYTES, type UsageOptions } from './claude-usage.js';
import { applyCodexEvent, CodexNotifyPayload, type CodexState, newCodexState } from './codex.js';
import { gitEmailAtStart } from './git-email.js';
import { hookBudgetMs } from './hook-watchdog.js';
import { type InboxProgress, inboxPath, readInbox } from './inbox.js';
import { asFailure, withSessionState } from './session-state.js';
import { shipperRunning, spawnShipper } from './spawn.js';
import {
  type CaptureConfig,
  type HookFailureReason,
  mappingStatePath,
  readCaptureConfig,
  readJson,
  recordHookFailure,
  spoolDir,
  stateDir,
} from './state-dir.js';

export { HOOK_BUDGET_MS, hookBudgetMs } from './hook-watchdog.js';

/** How a hook runs. */
export interface HookContext {
  env: NodeJS.ProcessEnv;
  /** program and first arguments that start this CLI (for the detached shipper); null: do not ship */
  selfCommand: string[] | null;
  /** ms on `performance.now()`'s clock when the invocation started (default 0: the process start) */
  startedAt?: number;
  /** test seam: called after the events are written, before the state is saved */
  afterWrite?: () => void;
  /** what the deadline timer needs to know (`hook-main.ts`) */
  progress?: HookProgress;
}

/**
 * How far an invocation got, for its deadline: past the budget, a payload that is parsed but not yet
 * `committed` (events written, state saved) is deferred to the session's inbox (`inbox.ts`), not lost.
 */
export interface HookProgress {
  /** `harness:event` once the payload is parsed: what a failure is recorded under */
  hook: string;
  defer: { inbox: string; payload: unknown } | null;
  /** set just before the first event is written: past it, deferring could write the event twice */
  writing?: boolean;
  /** set when a request to the server failed: its DNS lookup may still run in libuv's pool at exit */
  network?: boolean;
  committed: boolean;
}

/** `hansard hook claude-code`: maps one payload; returns stdout (empty, or the SessionStart JSON). */
export async function runClaudeHook(raw: string, ctx: HookContext): Promise<string> {
  const state = stateDir(ctx.env);
  let hook = 'claude-code:unknown';
  const started = ctx.startedAt ?? 0;
  let payload: ClaudeHookPayload;
  try {
    const parsed = ClaudeHookPayload.safeParse(JSON.parse(raw));
    if (!parsed.success) throw new Error('no session_id or hook_event_name');
    payload = parsed.data;
  } catch (err) {
    fail(
      state,
      hook,
      'bad_input',
      `the payload is not a Claude Code hook payload: ${(err as Error).name}`,
      started,
    );
    return '';
  }
  hook = `claude-code:${payload.hook_event_name.slice(0, 60)}`;
  if (ctx.progress) {
    ctx.progress.hook = hook;
    ctx.progress.defer = {
      inbox: inboxPath(mappingStatePath(state, 'claude-code', payload.session_id)),
      payload: { ...payload, hook_deferred: randomUUID() },
    };
  }
  const config = readCaptureConfig(ctx.env, state);
  const isStart = payload.hook_event_name === 'SessionStart';
  const declaredEvents = ctx.env.HANSARD_DECLARED_EVENTS === '1';
  // With the person's consent, their git user.email: read once per session, before the lock (git-email.ts).
  const gitEmail = isStart
    ? await gitEmailAtStart(ctx, state, 'claude-code', payload.session_id, payload.cwd)
    : undefined;
  let st: ClaudeState;
  try {
    st = await withSessionState<ClaudeState>(
      state,
      'claude-code',
      payload.session_id,
      (loaded, deferred, persistNew) =>
        applyClaude(state, ctx, loaded, [...deferred, payload], persistNew, gitEmail),
      ctx.progress,
    );
  } catch (err) {
    const f = asFailure(err);
    fail(state, hook, f.reason, f.message, started);
    if (!isStart) return '';
    const why = f.reason === 'state_unwritable' ? `the state directory ${state} is not writable` : f.message;
    return JSON.stringify(
      (await import('./session-start.js')).sessionStartOutput({
        sid: null,
        cwd: null,
        token: null,
        shipping: why,
        declaredEvents,
      }),
    );
  }
  // Its session's open work items: their local leases, at most once per TTL/3; the shipper sends them.
  renewSessionLeases(state, st.sid);
  let out = '';
  if (isStart) out = await sessionStart(state, payload, st, config, ctx, declaredEvents);
  startShipper(state, config, ctx);
  return out;
}

/** `hansard hook codex '<json>'`: records one notify payload; stdout is always empty. */
export async function runCodexHook(raw: string | undefined, ctx: HookContext): Promise<string> {
  const state = stateDir(ctx.env);
  const started = ctx.startedAt ?? 0;
  let payload: CodexNotifyPayload;
  try {
    const parsed = CodexNotifyPayload.safeParse(JSON.parse(raw ?? ''));
    if (!parsed.success) throw new Error('no type');
    payload = parsed.data;
  } catch (err) {
    fail(
      state,
      'codex:unknown',
      'bad_input',
      `the argument is not a Codex notify payload: ${(err as Error).name}`,
      started,
    );
    return '';
  }
  const hook = `codex:${payload.type.slice(0, 60)}`;
  const thread = payload['thread-id'] ?? 'unknown-thread';
  if (ctx.progress) {
    ctx.progress.hook = hook;
    ctx.progress.defer = {
      inbox: inboxPath(mappingStatePath(state, 'codex', thread)),
      payload: { ...payload, hook_deferred: randomUUID() },
    };
  }
  const gitEmail = await gitEmailAtStart(ctx, state, 'codex', thread, payload.cwd);
  try {
    await withSessionState<CodexState>(
      state,
      'codex',
      thread,
      (loaded, deferred, persistNew) =>
        applyCodex(state, ctx, loaded, [...deferred, payload], persistNew, gitEmail),
      ctx.progress,
    );
  } catch (err) {
    const f = asFailure(err);
    fail(state, hook, f.reason, f.message, started);
    return '';
  }
  startShipper(state, readCaptureConfig(ctx.env, state), ctx);
  return '';
}

/** SessionStart's answer: identity and context, with a token reused or minted within the budget. */
async function sessionStart(
  state: string,
  payload: ClaudeHookPayload,
  st: ClaudeState,
  config: CaptureConfig,
  ctx: HookContext,
  declaredEvents: boolean,
): Promise<string> {
  const ss = await import('./session-start.js');
  let token: ClaudeState['token'] | string | null = ss.reusableToken(st);
  if (token === null) {
    // Leave half a second of the budget for saving and answering.
    const left = hookBudgetMs(ctx.env) - (performance.now() - (ctx.startedAt ?? 0)) - 500;
    token = await ss.mintSessionToken(config, st.sid, Math.floor(Math.min(1_500, left)));
    // No token (refused, unreachable, too slow): a DNS lookup may still be running at exit.
    if (ctx.progress && typeof token === 'string' && config.token) ctx.progress.network = true;
    if (typeof token === 'object') {
      const minted = token;
      await withSessionState<ClaudeState>(
        state,
        'claude-code',
        payload.session_id,
        (loaded, deferred, p) => {
          const s = applyClaude(state, ctx, loaded ?? st, deferred, p);
          s.token = minted;
          return s;
        },
        undefined,
        'claude-code:SessionStart',
      ).catch((err) =>
        fail(state, 'claude-code:SessionStart', asFailure(err).reason, asFailure(err).message, 0),
      );
    } else if (config.token) {
      fail(
        state,
        'claude-code:SessionStart',
        'server_unreachable',
        token,
        performance.now() - (ctx.startedAt ?? 0),
      );
    }
  }
  const shipping = config.token
    ? `shipped to ${config.url ?? 'http://127.0.0.1:8787'}`
    : 'kept locally: no server configured, run `hansard integrations sync`';
  return JSON.stringify(
    ss.sessionStartOutput({
      sid: st.sid,
      cwd: payload.cwd ?? st.cwd,
      token,
      shipping,
      declaredEvents,
      // What this hook was run as (the absolute node and bin/hansard sync wrote): runnable off PATH too.
      command: ctx.selfCommand,
      url: config.url ?? null,
    }),
  );
}

/** Starts the detached shipper when a server is configured and none runs now. */
function startShipper(state: string, config: CaptureConfig, ctx: HookContext): void {
  if (!config.token || ctx.selfCommand === null) return;
  if (!shipperRunning(state)) spawnShipper(state, ctx.selfCommand, ctx.env);
}

/**
 * Writes the events of `payloads` (deferred ones first) onto the loaded state, or a new one. `gitEmail`:
 * what `gitEmailAtStart` read for this invocation's payload (absent: nothing read).
 */
function applyClaude(
  state: string,
  ctx: HookContext,
  loaded: ClaudeState | null,
  payloads: unknown[],
  persistNew: (s: ClaudeState) => void,
  gitEmail?: string | null,
): ClaudeState {
  let s: ClaudeState | null = loaded?.version === 1 && typeof loaded.sid === 'string' ? loaded : null;
  const usage = usageOptions(state, ctx);
  for (const raw of payloads) {
    const p = ClaudeHookPayload.safeParse(raw);
    if (!p.success) continue;
    // Seen before: loaded, or made by an earlier (deferred) payload of this batch.
    const seen = s !== null;
    if (s === null) {
      s = newClaudeState(p.data.cwd ?? null);
      persistNew(s);
    }
    usage.event = p.data.hook_event_name;
    const userId = userOf(ctx.env);
    applyClaudeEvent(p.data, s, { spool: spoolDir(state), userId, existing: seen, usage, gitEmail });
  }
  ctx.afterWrite?.();
  return s ?? newClaudeState(null);
}

/** The part of the budget kept free of transcript reads: for writing, saving and answering. */
const USAGE_RESERVE_MS = 1_500;

/**
 * What an invocation may spend reading token usage from Claude Code's transcripts (claude-usage.ts): no
 * read starts past its budget less `USAGE_RESERVE_MS` (at most half the budget), and all its reads
 * together take at most `USAGE_READ_MAX_BYTES`. A refused transcript is recorded (`transcript_refused`)
 * under the event being written.
 */
function usageOptions(state: string, ctx: HookContext): UsageOptions & { event: string } {
  const budget = hookBudgetMs(ctx.env);
  const o = {
    event: 'unknown',
    env: ctx.env,
    deadline: (ctx.startedAt ?? 0) + budget - Math.min(USAGE_RESERVE_MS, budget / 2),
    budget: { bytes: USAGE_READ_MAX_BYTES },
    refused: (reason: string) =>
      fail(
        state,
        `claude-code:${o.event.slice(0, 60)}`,
        'transcript_refused',
        `Claude Code's transcript (transcript_path) was not read for token usage: ${reason}`,
        ctx.startedAt ?? 0,
      ),
  };
  return o;
}

function applyCodex(
  state: string,
  ctx: HookContext,
  loaded: CodexState | null,
  payloads: unknown[],
  persistNew: (s: CodexState) => void,
  gitEmail?: string | null,
): CodexState {
  let s: CodexState | null = loaded?.version === 1 && typeof loaded.sid === 'string' ? loaded : null;
  for (const raw of payloads) {
    const p = CodexNotifyPayload.safeParse(raw);
    if (!p.success) continue;
    if (s === null) {
      s = newCodexState(p.data.cwd ?? null);
      persistNew(s);
    }
    applyCodexEvent(p.data, s, { spool: spoolDir(state), userId: userOf(ctx.env), gitEmail });
  }
  ctx.afterWrite?.();
  return s ?? newCodexState(null);
}

/**
 * Writes the events of every deferred payload no hook has taken yet (the shipper runs this before it
 * ships, so that a session's last deferred event does not wait for a hook that never comes), and removes
 * spill files a hook and its supervisor both left (`removeStaleSpills`). Never throws.
 */
export async function drainInboxes(state: string, env: NodeJS.ProcessEnv): Promise<number> {
  let n = 0;
  for (const harness of ['claude-code', 'codex'] as const) {
    let all: string[];
    try {
      all = readdirSync(join(state, harness));
    } catch {
      continue;
    }
    removeStaleSpills(join(state, harness), all);
    const names = all.filter((f) => f.endsWith('.inbox'));
    for (const f of names) {
      const statePath = join(state, harness, `${f.slice(0, -'.inbox'.length)}.json`);
      const st = readJson(statePath) as InboxProgress | null;
      if (readInbox(join(state, harness, f), st?.inboxOffset ?? 0).lines.length === 0) continue;
      let id: string;
      try {
        id = decodeURIComponent(f.slice(0, -'.inbox'.length));
      } catch {
        continue; // not a name this code made
      }
      const ctx: HookContext = { env, selfCommand: null };
      await (harness === 'claude-code'
        ? withSessionState<ClaudeState>(state, harness, id, (loaded, deferred, p) =>
            applyClaude(state, ctx, loaded, deferred, p),
          )
        : withSessionState<CodexState>(state, harness, id, (loaded, deferred, p) =>
            applyCodex(state, ctx, loaded, deferred, p),
          )
      ).then(
        () => n++,
        () => {},
      );
    }
  }
  return n;
}

/** A spill file older than this is no live hook's: a hook lives 4.6 s at most, its rescuer a second more. */
const STALE_SPILL_MS = 10 * 60 * 1000;

/**
 * Removes the spill files (`<inbox>.<pid>.spill`, hook-watchdog.ts) of `dir` older than `STALE_SPILL_MS`:
 * left only when a hook and its supervisor both died (a reboot). They hold a payload unredacted; whether
 * its events were written is unknown, so it is not deferred again (it could be written twice).
 */
function removeStaleSpills(dir: string, names: string[]): void {
  const now = Date.now();
  for (const f of names) {
    if (!f.endsWith('.spill')) continue;
    try {
      const p = join(dir, f);
      if (now - lstatSync(p).mtimeMs > STALE_SPILL_MS) unlinkSync(p);
    } catch {
      // gone meanwhile
    }
  }
}

function userOf(env: NodeJS.ProcessEnv): string {
  return env.HANSARD_USER || 'user';
}

function fail(
  state: string,
  hook: string,
  reason: HookFailureReason,
  message: string,
  startedAt: number,
): void {
  recordHookFailure(state, { hook, reason, message, ms: Math.round(performance.now() - startedAt) });
}
