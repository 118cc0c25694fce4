/**
 * One hook invocation (issue 11): `hansard hook claude-code` (payload on stdin) and `hansard hook codex`
 * (payload as the last argument). Never in the agent's way: these functions never throw and return only
 * what belongs on stdout (empty, or Claude Code's SessionStart JSON); every failure is recorded without
 * payload content in `<state>/hook-failures.json`.
 *
 * Steps: parse (zod, tolerant), take the per-session lock (proper-lockfile), load the mapping state,
 * reopen the spool writer and write the mapped events (redacted by the writer), save the state (tmp +
 * rename), unlock, then start the detached shipper without waiting for it. The 3.5 s deadline is the
 * caller's (`hook-main.ts`): a timer that answers empty and exits 0 whatever is still pending.
 */
import { mkdirSync } from 'node:fs';
import { lock } from 'proper-lockfile';
import {
  type ApplyOptions,
  applyClaudeEvent,
  ClaudeHookPayload,
  type ClaudeState,
  newClaudeState,
} from './claude-code.js';
import { applyCodexEvent, CodexNotifyPayload, type CodexState, newCodexState } from './codex.js';
import { shipperRunning, spawnShipper } from './spawn.js';
import {
  type CaptureConfig,
  type CaptureHarness,
  type HookFailureReason,
  mappingStatePath,
  readCaptureConfig,
  readJson,
  recordHookFailure,
  spoolDir,
  stateDir,
  writeJsonAtomic,
} from './state-dir.js';

/** The budget a hook answers within (seed 000: before the agent's five-second limit). */
export const HOOK_BUDGET_MS = 3_500;
/** A session lock not refreshed for this long is a dead hook's: taken over (proper-lockfile's minimum). */
const SESSION_LOCK_STALE_MS = 2_000;

/** How a hook runs. */
export interface HookContext {
  env: NodeJS.ProcessEnv;
  /** program and first arguments that start this CLI (for the detached shipper); null: do not ship */
  selfCommand: string[] | null;
  /** ms on `performance.now()`'s clock when the invocation started (default 0: the process start) */
  startedAt?: number;
  /** test seam: called after the events are written, before the state is saved */
  afterWrite?: () => void;
  /** told `harness:event` once the payload is parsed (what a timeout is recorded under) */
  onEvent?: (hook: string) => void;
}

/** A failure with the reason hook-failures.json records. */
class HookFailure extends Error {
  constructor(
    readonly reason: HookFailureReason,
    message: string,
  ) {
    super(message);
  }
}

/** The budget of this process: `HANSARD_HOOK_BUDGET_MS` (tests shorten it), else 3.5 s. */
export function hookBudgetMs(env: NodeJS.ProcessEnv): number {
  const n = Number(env.HANSARD_HOOK_BUDGET_MS);
  return Number.isFinite(n) && n > 0 ? n : HOOK_BUDGET_MS;
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
  ctx.onEvent?.(hook);
  const config = readCaptureConfig(ctx.env, state);
  const isStart = payload.hook_event_name === 'SessionStart';
  const declaredEvents = ctx.env.HANSARD_DECLARED_EVENTS === '1';
  let st: ClaudeState;
  try {
    st = await withSessionState<ClaudeState>(state, 'claude-code', payload.session_id, (loaded) => {
      const existing = loaded?.version === 1 && typeof loaded.sid === 'string';
      const s = existing ? loaded : newClaudeState(payload.cwd ?? null);
      const opts: ApplyOptions = { spool: spoolDir(state), userId: userOf(ctx.env), existing };
      applyClaudeEvent(payload, s, opts);
      ctx.afterWrite?.();
      return s;
    });
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
  ctx.onEvent?.(hook);
  try {
    await withSessionState<CodexState>(state, 'codex', payload['thread-id'] ?? 'unknown-thread', (loaded) => {
      const s =
        loaded?.version === 1 && typeof loaded.sid === 'string' ? loaded : newCodexState(payload.cwd ?? null);
      applyCodexEvent(payload, s, { spool: spoolDir(state), userId: userOf(ctx.env) });
      ctx.afterWrite?.();
      return s;
    });
  } catch (err) {
    const f = asFailure(err);
    fail(state, hook, f.reason, f.message, started);
    return '';
  }
  startShipper(state, readCaptureConfig(ctx.env, state), ctx);
  return '';
}

/**
 * Runs `update` on the session's mapping state under its lock and saves what it returns (tmp + rename).
 * @throws HookFailure (`state_unwritable` for the file system's refusals, `timeout`-free: the caller's
 * deadline bounds the lock wait)
 */
async function withSessionState<S>(
  state: string,
  harness: CaptureHarness,
  id: string,
  update: (loaded: S | null) => S,
): Promise<S> {
  const path = mappingStatePath(state, harness, id);
  try {
    mkdirSync(path.slice(0, path.lastIndexOf('/')), { recursive: true, mode: 0o700 });
    mkdirSync(spoolDir(state), { recursive: true, mode: 0o700 });
  } catch (err) {
    throw new HookFailure('state_unwritable', `cannot create the state directory: ${codeOf(err)}`);
  }
  let release: () => Promise<void>;
  try {
    release = await lock(path, {
      lockfilePath: `${path.slice(0, -'.json'.length)}.lock`,
      realpath: false,
      stale: SESSION_LOCK_STALE_MS,
      // Parallel tool calls queue here; the caller's deadline, not a retry count, bounds the wait.
      retries: { retries: 1_000, factor: 1, minTimeout: 5, maxTimeout: 15, randomize: true },
      onCompromised: () => {},
    });
  } catch (err) {
    throw new HookFailure('state_unwritable', `cannot take the session lock: ${codeOf(err)}`);
  }
  try {
    const st = update(readJson(path) as S | null);
    writeJsonAtomic(path, st);
    return st;
  } catch (err) {
    if (err instanceof HookFailure) throw err;
    const code = codeOf(err);
    if (['EACCES', 'EPERM', 'EROFS', 'ENOSPC', 'EDQUOT', 'ENOTDIR'].includes(code))
      throw new HookFailure('state_unwritable', `cannot write the spool or state: ${code}`);
    throw new HookFailure('internal', `${(err as Error).name}: ${code}`);
  } finally {
    await release().catch(() => {});
  }
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
    token = await ss.mintSessionToken(config, st.sid, Math.min(1_500, left));
    if (typeof token === 'object') {
      const minted = token;
      await withSessionState<ClaudeState>(state, 'claude-code', payload.session_id, (loaded) => {
        const s = loaded ?? st;
        s.token = minted;
        return s;
      }).catch((err) =>
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
    ss.sessionStartOutput({ sid: st.sid, cwd: payload.cwd ?? st.cwd, token, shipping, declaredEvents }),
  );
}

/** Starts the detached shipper when a server is configured and none runs now. */
function startShipper(state: string, config: CaptureConfig, ctx: HookContext): void {
  if (!config.token || ctx.selfCommand === null) return;
  if (!shipperRunning(state)) spawnShipper(state, ctx.selfCommand, ctx.env);
}

function userOf(env: NodeJS.ProcessEnv): string {
  return env.HANSARD_USER || 'user';
}

function asFailure(err: unknown): HookFailure {
  return err instanceof HookFailure
    ? err
    : new HookFailure('internal', `${(err as Error)?.name ?? 'error'}: ${codeOf(err)}`);
}

/** An error's code (EACCES…) or its message's first line: never payload content. */
function codeOf(err: unknown): string {
  const e = err as NodeJS.ErrnoException;
  return (
    e?.code ??
    String(e?.message ?? err)
      .split('\n')[0]!
      .slice(0, 200)
  );
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
