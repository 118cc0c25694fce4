/**
 * A capture session's mapping state under its lock (issue 11; issue 25 attack item 16): what every hook
 * invocation and the shipper's drain of deferred payloads run their writes through. Takes the session's
 * lock (proper-lockfile, a folder beside the state), reads the state (telling an unreadable file from an
 * absent one, `state-recover.ts`), takes the deferred payloads of its inbox (`inbox.ts`), runs the
 * caller's update and saves the state through a rename.
 */
import { join } from 'node:path';
import { lock } from 'proper-lockfile';
import { mkdirs } from '../api/safe-fs.js';
import { type ClaudeState, newClaudeState } from './claude-code.js';
import { type CodexState, newCodexState } from './codex.js';
import { type InboxProgress, inboxPath, segmentSizes, takeInbox, uncommittedDeferrals } from './inbox.js';
import {
  type CaptureHarness,
  type HookFailureReason,
  mappingStatePath,
  recordHookFailure,
  spoolDir,
  writeJsonAtomic,
} from './state-dir.js';
import { findSpoolSession, readMappingState } from './state-recover.js';

/**
 * A session lock not refreshed for this long is a dead hook's and is taken over. Its holder refreshes it
 * every second (`SESSION_LOCK_UPDATE_MS`); at 2 s (proper-lockfile's minimum) a holder starved of CPU on
 * a loaded machine was taken over while it wrote, and two hooks reused a seq (the concurrency test caught
 * it with every capture suite running at once). After a kill -9 of a holder the next hooks wait: they
 * answer empty at the budget and defer their payloads, nothing is lost.
 */
const SESSION_LOCK_STALE_MS = 5_000;
const SESSION_LOCK_UPDATE_MS = 1_000;

/** How far an invocation got, as its deadlines read it (`HookProgress` of `hook.ts`). */
export interface StateProgress {
  hook: string;
  writing?: boolean;
  committed: boolean;
}

/** A failure with the reason hook-failures.json records. */
export class HookFailure extends Error {
  constructor(
    readonly reason: HookFailureReason,
    message: string,
  ) {
    super(message);
  }
}

/**
 * Runs `update` on the session's mapping state under its lock and saves what it returns (tmp + rename).
 * `progress` (the invocation's, for its deadlines): `writing` is set before `update` runs, `committed`
 * once the state is saved. A state file that is there but cannot be read (not a regular file, not JSON:
 * `state-recover.ts`) is not taken for an absent one: the session the spool holds for `id` goes on in a
 * new writer (or, when none is found, a new one begins), and a `state_unreadable` failure is recorded
 * under `hook` saying which.
 * @throws HookFailure (`state_unwritable` for the file system's refusals, `timeout`-free: the caller's
 * deadline bounds the lock wait)
 */
export async function withSessionState<S extends InboxProgress>(
  state: string,
  harness: CaptureHarness,
  id: string,
  update: (loaded: S | null, deferred: unknown[], persistNew: (s: S) => void) => S,
  progress?: StateProgress,
  hook = progress?.hook ?? 'shipper',
): Promise<S> {
  const path = mappingStatePath(state, harness, id);
  try {
    mkdirs(path.slice(0, path.lastIndexOf('/')), 0o700);
    mkdirs(spoolDir(state), 0o700);
  } catch (err) {
    throw new HookFailure('state_unwritable', `cannot create the state directory: ${codeOf(err)}`);
  }
  let release: () => Promise<void>;
  try {
    release = await lock(path, {
      lockfilePath: `${path.slice(0, -'.json'.length)}.lock`,
      realpath: false,
      stale: SESSION_LOCK_STALE_MS,
      update: SESSION_LOCK_UPDATE_MS,
      // Parallel tool calls queue here; the caller's deadline, not a retry count, bounds the wait.
      retries: { retries: 1_000, factor: 1, minTimeout: 5, maxTimeout: 15, randomize: true },
      onCompromised: () => {},
    });
  } catch (err) {
    throw new HookFailure('state_unwritable', `cannot take the session lock: ${codeOf(err)}`);
  }
  try {
    const read = readMappingState(path);
    let loaded = read.value as S | null;
    let unreadable: { why: string; sid: string | null } | null = null;
    if (read.problem !== null) {
      const found = findSpoolSession(state, harness, id);
      unreadable = { why: read.problem, sid: found };
      loaded = found === null ? null : (continuation(harness, found) as unknown as S);
    }
    const taken: InboxProgress = {
      ...(loaded?.inboxOffset !== undefined ? { inboxOffset: loaded.inboxOffset } : {}),
      ...(loaded?.inboxOldSize !== undefined ? { inboxOldSize: loaded.inboxOldSize } : {}),
    };
    const before = { ...taken };
    let deferred = takeInbox(inboxPath(path), taken);
    const sid = (loaded as { sid?: unknown } | null)?.sid;
    // Without its state, where the inbox was taken to is unknown: every deferral the session holds is done.
    if (typeof sid === 'string' && (loaded?.spoolBytes || unreadable)) {
      const done = uncommittedDeferrals(
        join(spoolDir(state), sid),
        unreadable ? {} : (loaded?.spoolBytes ?? {}),
      );
      if (done.size > 0)
        deferred = deferred.filter((p) => !done.has((p as { hook_deferred?: string }).hook_deferred ?? ''));
    }
    // A new session's identity is saved before its first event: a hook killed after writing leaves the
    // next one the same session (and the inbox where it was), not a second session.
    const persistNew = (s: S) => writeJsonAtomic(path, { ...s, ...before, spoolBytes: {} });
    if (progress) progress.writing = true;
    const st = update(loaded, deferred, persistNew);
    Object.assign(st, taken);
    st.spoolBytes = segmentSizes(join(spoolDir(state), (st as { sid?: string }).sid ?? '-'));
    writeJsonAtomic(path, st);
    if (progress) progress.committed = true;
    if (unreadable) recordUnreadable(state, hook, path, unreadable, (st as { sid?: string }).sid);
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

/** A state that goes on with session `sid` in a new writer (its first event opens it). */
function continuation(harness: CaptureHarness, sid: string): ClaudeState | CodexState {
  return harness === 'claude-code' ? { ...newClaudeState(null), sid } : { ...newCodexState(null), sid };
}

/** Records that a mapping state could not be read, and what the hook did instead. */
function recordUnreadable(
  state: string,
  hook: string,
  path: string,
  u: { why: string; sid: string | null },
  now: string | undefined,
): void {
  const name = path.slice(state.length + 1).slice(-80);
  recordHookFailure(state, {
    hook,
    reason: 'state_unreadable',
    message: `the mapping state ${name} could not be read (${u.why}): ${
      u.sid !== null
        ? `went on with session ${u.sid}, found in the spool, in a new writer`
        : `no session of it was found in the spool, so a new hansard session ${now ?? ''} began`
    }`,
    ms: Math.round(performance.now()),
  });
}

/** What a failure thrown by the hook's work records: its own reason, or `internal`. */
export function asFailure(err: unknown): HookFailure {
  return err instanceof HookFailure
    ? err
    : new HookFailure('internal', `${(err as Error)?.name ?? 'error'}: ${codeOf(err)}`);
}

/** An error's code (EACCES…) or its message's first line: never payload content. */
export function codeOf(err: unknown): string {
  const e = err as NodeJS.ErrnoException;
  return (
    e?.code ??
    String(e?.message ?? err)
      .split('\n')[0]!
      .slice(0, 200)
  );
}
