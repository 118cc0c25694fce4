/**
 * The capture state directory (issue 11): where the hooks keep their spool, their mapping state, the
 * shipper's progress and the record of hook failures. This layout is a contract shared with
 * `hansard doctor` and `hansard integrations sync`; docs/capture.md describes it.
 *
 * ```
 * <state>/config.json                        {"url","token"} (0600, optional; env wins)
 * <state>/spool/<sid>/w_<ULID>.jsonl          one ordinary session directory per captured session
 * <state>/shipped.json                       {"version":1,"sessions":{<sid>:{<w>:acked bytes}}}
 * <state>/claude-code/<session_id>.json      mapping state of one Claude Code session
 * <state>/codex/<thread id>.json             mapping state of one Codex thread
 * <state>/hook-failures.json                 {"version":1,"failures":[HookFailure…]} newest last, capped
 * <state>/last-ship.json                     {"version":1,"at"}: the last shipper run that left nothing to ship
 * ```
 *
 * Everything here is synchronous and dependency-light: it runs inside every hook invocation; it reads
 * regular files only and makes folders in bounded steps (`safe-fs.ts`), so no file put in its way blocks it.
 */
import { closeSync, existsSync, readdirSync, readSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { lockSync } from 'proper-lockfile';

import { readJson, writeJsonAtomic } from '../api/json-files.js';
import { mkdirs, openRegularForRead, readRegularFile } from '../api/safe-fs.js';
import { stateDir } from '../api/state-path.js';

export { stateDir };

/** `<state>/config.json`: where hooks find the server (written by `hansard integrations sync`, mode 0600). */
export function configPath(state: string): string {
  return join(state, 'config.json');
}
/** `<state>/spool`: one session directory per captured session. */
export function spoolDir(state: string): string {
  return join(state, 'spool');
}
/** `<state>/shipped.json`: bytes of each spool segment the server acknowledged. */
export function shippedPath(state: string): string {
  return join(state, 'shipped.json');
}
/** `<state>/last-ship.json`: `{"version":1,"at"}`, when a shipper run last left nothing to ship. */
export function lastShipPath(state: string): string {
  return join(state, 'last-ship.json');
}

/**
 * When a shipper run last shipped and left the spool empty (RFC 3339), or null when none is recorded.
 * `hansard doctor` counts a `server_unreachable` failure before it as over (docs/capture.md).
 */
export function readLastShip(state: string): string | null {
  const data = readJson(lastShipPath(state)) as { version?: unknown; at?: unknown } | null;
  return data?.version === 1 && typeof data.at === 'string' && Number.isFinite(Date.parse(data.at))
    ? data.at
    : null;
}

/** Records `at` as the last successful ship (the shipper, under its lock). Never throws. */
export function recordLastShip(state: string, at: Date): void {
  try {
    writeJsonAtomic(lastShipPath(state), { version: 1, at: at.toISOString() });
  } catch {
    // best effort: doctor then counts the failures as it did
  }
}

/** `<state>/hook-failures.json`. */
export function hookFailuresPath(state: string): string {
  return join(state, 'hook-failures.json');
}

/** The harnesses whose mapping state lives in the state directory. */
export type CaptureHarness = 'claude-code' | 'codex';

/**
 * `<state>/<harness>/<id>.json`: the mapping state of one harness session. The id is the harness's own
 * (Claude `session_id`, Codex thread id); characters outside `[A-Za-z0-9_-]` are %-encoded
 * (`encodeStateId`, undone by `decodeURIComponent`) so that no id can leave the folder.
 */
export function mappingStatePath(state: string, harness: CaptureHarness, id: string): string {
  return join(state, harness, `${encodeStateId(id)}.json`);
}

/** An id as a file name: `encodeURIComponent`, with `.!~*'()` %-encoded too (no `..`, decodable). */
export function encodeStateId(id: string): string {
  const safe = encodeURIComponent(id).replace(
    /[.!~*'()]/g,
    (c) => `%${c.charCodeAt(0).toString(16).toUpperCase()}`,
  );
  return safe || '%00';
}

/** Server settings for capture: env first, then `<state>/config.json`. */
export interface CaptureConfig {
  url?: string;
  token?: string;
  /** where each value came from, for `hansard doctor` */
  source: { url: 'env' | 'config' | null; token: 'env' | 'config' | null };
}

/**
 * The server the hooks ship to: `HANSARD_URL` / `HANSARD_TOKEN` when set, else `<state>/config.json`'s
 * `url` / `token`. A missing or unreadable config file gives nothing (never throws).
 */
export function readCaptureConfig(
  env: NodeJS.ProcessEnv = process.env,
  state = stateDir(env),
): CaptureConfig {
  let file: { url?: unknown; token?: unknown } = {};
  try {
    const parsed: unknown = JSON.parse(readRegularFile(configPath(state), 1024 * 1024).toString('utf8'));
    if (parsed && typeof parsed === 'object') file = parsed as typeof file;
  } catch {
    // absent or unreadable: env only
  }
  const pick = (e: string | undefined, f: unknown): [string | undefined, 'env' | 'config' | null] =>
    e ? [e, 'env'] : typeof f === 'string' && f ? [f, 'config'] : [undefined, null];
  const [url, urlSource] = pick(env.HANSARD_URL, file.url);
  const [token, tokenSource] = pick(env.HANSARD_TOKEN, file.token);
  return {
    ...(url ? { url } : {}),
    ...(token ? { token } : {}),
    source: { url: urlSource, token: tokenSource },
  };
}

export { readJson, writeJsonAtomic };

// ---- hook failures ----

/**
 * Why a hook invocation did not do its whole job. `server_refused`: a server answered, and refused
 * (SessionStart's session-token request answered 4xx, e.g. 404 from something that is not a hansard
 * server): not `server_unreachable`, which shipping later can make good (the trial of issues 24/25).
 * `state_unreadable`: a session's mapping state was there but could not be read (not a regular file, not
 * JSON; the message says which session the hook went on with). `work_refused`: the server refused a work
 * heartbeat the shipper sent (`not_owner`, `work_mismatch`; the message names the code).
 */
export type HookFailureReason =
  | 'timeout'
  | 'bad_input'
  | 'state_unwritable'
  | 'state_unreadable'
  | 'server_unreachable'
  | 'server_refused'
  | 'work_refused'
  | 'transcript_refused'
  | 'internal';

/**
 * SessionStart's failure message when the server at `url` answered its session-token request with
 * `status` (and the error `code` a hansard server gives, when there is one): the form `refusalOf` reads.
 */
export function tokenRefusalMessage(url: string, status: number, code: string | null): string {
  return `the server at ${url} refused a session token (${status}${code ? ` ${code}` : ''})`;
}

/** The server and status a `tokenRefusalMessage` names, or null for any other message. */
export function refusalOf(message: string): { url: string; status: number; code: string | null } | null {
  const m = /^the server at (\S+) refused a session token \((\d{3})(?: ([a-z_]+))? ?\)$/.exec(message);
  return m ? { url: m[1]!, status: Number(m[2]), code: m[3] ?? null } : null;
}

/**
 * The reason a failure is recorded and read under: a refusal of SessionStart's session-token request is
 * `server_refused` whatever its caller called it (the hook passes `server_unreachable` for every failed
 * request; failures recorded before this kind existed read the same way).
 */
export function failureReason(f: Pick<HookFailure, 'reason' | 'message'>): HookFailureReason {
  if (f.reason !== 'server_unreachable') return f.reason;
  const r = refusalOf(String(f.message ?? ''));
  // A 5xx is the server failing, not refusing: shipping later can still make it good.
  return r && r.status < 500 ? 'server_refused' : f.reason;
}

/** One failure: never any payload content (no prompt text, no tool input). */
export interface HookFailure {
  /** RFC 3339 */
  at: string;
  /** `claude-code:<hook_event_name>`, `codex:<type>`, `shipper` */
  hook: string;
  reason: HookFailureReason;
  message: string;
  /** wall time of the invocation so far, ms */
  ms: number;
}

/** Failures kept in `hook-failures.json` (the oldest are dropped). */
export const MAX_HOOK_FAILURES = 500;

/** The recorded failures, oldest first; empty when the file is absent or unreadable. */
export function readHookFailures(state: string): HookFailure[] {
  const data = readJson(hookFailuresPath(state)) as { failures?: unknown } | null;
  return Array.isArray(data?.failures) ? (data.failures as HookFailure[]) : [];
}

/**
 * Appends a failure to `<state>/hook-failures.json` (read, append, cap, write through a rename) under a
 * lock (`hook-failures.lock`, proper-lockfile), so that parallel hooks failing together keep every
 * record. The lock is waited for at most ~250 ms; past that, or when the lock cannot be made, the record
 * is written unlocked (best effort). A state dir that cannot be written records nothing. Never throws.
 */
export function recordHookFailure(
  state: string,
  failure: Omit<HookFailure, 'at'> & { at?: string },
): boolean {
  return updateHookFailures(state, (failures) => {
    // The message is ours, but it may quote an error that quotes a path: cap it.
    failures.push({
      ...failure,
      reason: failureReason(failure),
      at: failure.at ?? new Date().toISOString(),
      message: failure.message.slice(0, 300),
    });
    return failures.slice(-MAX_HOOK_FAILURES);
  });
}

/**
 * Empties `<state>/hook-failures.json` (`hansard doctor --clear-failures`, docs/capture.md), under the
 * lock `recordHookFailure` takes. Returns how many records were cleared, or null when the file could not
 * be written.
 */
export function clearHookFailures(state: string): number | null {
  let cleared = 0;
  const ok = updateHookFailures(state, (failures) => {
    cleared = failures.length;
    return [];
  });
  return ok ? cleared : null;
}

/**
 * Read, change and write `hook-failures.json` through a rename under its lock (waited for ~250 ms at
 * most; past that, or when the lock cannot be made, unlocked: best effort). Never throws: false when the
 * state dir cannot be written.
 */
function updateHookFailures(state: string, change: (failures: HookFailure[]) => HookFailure[]): boolean {
  let release: (() => void) | null = null;
  try {
    mkdirs(state, 0o700);
    for (let i = 0; i < 50 && release === null; i++) {
      try {
        release = lockSync(hookFailuresPath(state), {
          lockfilePath: join(state, 'hook-failures.lock'),
          realpath: false,
          stale: 2_000,
          onCompromised: () => {},
        });
      } catch (err) {
        if ((err as NodeJS.ErrnoException).code !== 'ELOCKED') break;
        Atomics.wait(SLEEPER, 0, 0, 5);
      }
    }
    writeJsonAtomic(hookFailuresPath(state), { version: 1, failures: change(readHookFailures(state)) });
    return true;
  } catch {
    return false;
  } finally {
    try {
      release?.();
    } catch {
      // already gone
    }
  }
}

/** A synchronous sleep for the lock wait above (`Atomics.wait` on a buffer nobody signals). */
const SLEEPER = new Int32Array(new SharedArrayBuffer(4));

// ---- shipping progress and backlog ----

/** `shipped.json`: per session id, per writer id, the segment bytes the server acknowledged. */
export interface ShippedState {
  version: 1;
  sessions: Record<string, Record<string, number>>;
}

/** The shipper's progress; empty when absent. */
export function readShipped(state: string): ShippedState {
  const data = readJson(shippedPath(state)) as ShippedState | null;
  return data && data.version === 1 && data.sessions && typeof data.sessions === 'object'
    ? data
    : { version: 1, sessions: {} };
}

/**
 * Records that the server holds `length` bytes of each named segment (only ever raises a figure). Called
 * by the shipper only, which holds the shipper lock, so read-modify-write is safe here.
 */
export function recordShipped(state: string, sid: string, segments: { w: string; length: number }[]): void {
  const shipped = readShipped(state);
  const s = shipped.sessions[sid] ?? {};
  for (const seg of segments) s[seg.w] = Math.max(s[seg.w] ?? 0, seg.length);
  shipped.sessions[sid] = s;
  writeJsonAtomic(shippedPath(state), shipped);
}

/** What one spool session still has to ship. */
export interface SessionBacklog {
  sid: string;
  /** the session directory, `<state>/spool/<sid>` */
  dir: string;
  /** bytes on disk not acknowledged by the server */
  bytes: number;
  /** complete lines (events) among those bytes */
  events: number;
}

/**
 * Per spool session, the bytes and events not yet acknowledged by the server (by `shipped.json`). Only
 * sessions with something left are listed. An absent spool gives [].
 */
export function spoolBacklog(state: string): SessionBacklog[] {
  const spool = spoolDir(state);
  if (!existsSync(spool)) return [];
  const shipped = readShipped(state);
  const out: SessionBacklog[] = [];
  for (const d of readdirSync(spool, { withFileTypes: true })) {
    if (!d.isDirectory() || !d.name.startsWith('s_')) continue;
    const dir = join(spool, d.name);
    let bytes = 0;
    let events = 0;
    for (const f of readdirSync(dir)) {
      if (!/^w_[0-9A-Z]{26}\.jsonl$/.test(f)) continue;
      const path = join(dir, f);
      const size = statSync(path).size;
      const acked = Math.min(shipped.sessions[d.name]?.[f.slice(0, -6)] ?? 0, size);
      if (size > acked) {
        bytes += size - acked;
        events += countNewlines(path, acked, size);
      }
    }
    if (bytes > 0) out.push({ sid: d.name, dir, bytes, events });
  }
  return out.sort((a, b) => (a.sid < b.sid ? -1 : 1));
}

function countNewlines(path: string, from: number, to: number): number {
  const fd = openRegularForRead(path);
  try {
    const buf = Buffer.alloc(64 * 1024);
    let n = 0;
    for (let pos = from; pos < to; ) {
      const got = readSync(fd, buf, 0, Math.min(buf.length, to - pos), pos);
      if (got <= 0) break;
      for (let i = 0; i < got; i++) if (buf[i] === 10) n++;
      pos += got;
    }
    return n;
  } finally {
    closeSync(fd);
  }
}
