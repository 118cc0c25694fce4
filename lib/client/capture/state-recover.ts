/**
 * A mapping state that cannot be read (issue 25 attack item 16): `<state>/<harness>/<id>.json` is there
 * but is not a regular file (a FIFO, a link to a device), cannot be opened, is too large or is not JSON.
 * Read as absent, the hook silently began a second hansard session for the same agent session, and
 * nothing was recorded. Told apart from absent here; the hook then goes on with the session the spool
 * already holds for that agent session (the `writer.start` of its main writer names it:
 * `meta.claude_session_id`, `meta.codex_thread_id`), in a new writer, and records a `state_unreadable`
 * failure that says which session it went on with, or that none was found and a new one began.
 *
 * Every read here is of regular files only and bounded (`safe-fs.ts`): this runs inside a hook.
 */
import { closeSync, readdirSync, readSync } from 'node:fs';
import { join } from 'node:path';
import { openRegularForRead, readRegularFile } from '../api/safe-fs.js';
import { type CaptureHarness, spoolDir } from './state-dir.js';

/** The largest mapping state read (a real one is a few KiB). */
const MAX_STATE_BYTES = 16 * 1024 * 1024;
/** The most spool sessions looked at for the agent session's hansard session, newest first. */
const MAX_SESSIONS_SCANNED = 5_000;
/** The most bytes of a segment read for its first line (`writer.start`, its meta at most 64 KiB). */
const FIRST_LINE_BYTES = 128 * 1024;

/**
 * A mapping state: `value` the parsed JSON (null when the file is absent), `problem` why a file that is
 * there cannot be used (`EFTYPE: not a regular file`, `EACCES`, `not JSON`…), else null. Never throws.
 */
export function readMappingState(path: string): { value: unknown; problem: string | null } {
  let bytes: Buffer;
  try {
    bytes = readRegularFile(path, MAX_STATE_BYTES);
  } catch (err) {
    const code = (err as NodeJS.ErrnoException).code ?? 'error';
    if (code === 'ENOENT') return { value: null, problem: null };
    return {
      value: null,
      problem:
        code === 'EFTYPE' ? 'EFTYPE: not a regular file' : code === 'EFBIG' ? 'EFBIG: too large' : code,
    };
  }
  try {
    const value: unknown = JSON.parse(bytes.toString('utf8'));
    if (value !== null && typeof value === 'object' && !Array.isArray(value)) return { value, problem: null };
  } catch {
    // below
  }
  return { value: null, problem: 'not a JSON object' };
}

/**
 * The hansard session the spool holds for agent session `id` of `harness`: the newest spool session one
 * of whose segments begins with a `writer.start` naming it (`claude_session_id` / `codex_thread_id`),
 * or null (none, or Codex's `unknown-thread`, which names no thread). Looks at the newest
 * `MAX_SESSIONS_SCANNED` sessions. Never throws.
 */
export function findSpoolSession(state: string, harness: CaptureHarness, id: string): string | null {
  if (harness === 'codex' && id === 'unknown-thread') return null;
  const key = harness === 'claude-code' ? 'claude_session_id' : 'codex_thread_id';
  let sessions: string[];
  try {
    sessions = readdirSync(spoolDir(state)).filter((n) => /^s_[0-9A-Z]{26}$/.test(n));
  } catch {
    return null;
  }
  // ULIDs sort by time: the newest session first.
  sessions.sort().reverse();
  for (const sid of sessions.slice(0, MAX_SESSIONS_SCANNED)) {
    const dir = join(spoolDir(state), sid);
    let names: string[];
    try {
      names = readdirSync(dir).filter((f) => /^w_[0-9A-Z]{26}\.jsonl$/.test(f));
    } catch {
      continue;
    }
    for (const f of names) {
      const start = firstLine(join(dir, f));
      if (start === null) continue;
      try {
        const ev = JSON.parse(start) as { type?: unknown; meta?: Record<string, unknown> };
        if (ev.type === 'writer.start' && ev.meta?.[key] === id) return sid;
      } catch {
        // not a writer.start we wrote
      }
    }
  }
  return null;
}

/** The first line of a regular file (at most `FIRST_LINE_BYTES`), or null. */
function firstLine(path: string): string | null {
  let fd: number;
  try {
    fd = openRegularForRead(path);
  } catch {
    return null;
  }
  try {
    const buf = Buffer.alloc(FIRST_LINE_BYTES);
    const n = readSync(fd, buf, 0, buf.length, 0);
    const end = buf.subarray(0, n).indexOf(0x0a);
    return end < 0 ? null : buf.subarray(0, end).toString('utf8');
  } catch {
    return null;
  } finally {
    closeSync(fd);
  }
}
