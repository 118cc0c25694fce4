/**
 * Deferred payloads (issue 11): a hook that cannot write its events within its budget (the session lock
 * held by a queue of parallel hooks, a machine too busy to start it in time) still answers at once, but
 * first appends its payload, one line with one `O_APPEND` write, to `<state>/<harness>/<id>.inbox`. The
 * next hook of that session (or the shipper) takes the lock and writes the deferred payloads' events
 * before its own, in the order they were deferred, so a hook that exited 0 never loses its event.
 *
 * The state records how far the inbox was taken (`inboxOffset`). An inbox taken to its end and grown past
 * `ROTATE_BYTES` is renamed to `.inbox.old` (appends are not locked, so it cannot be truncated); a line
 * that landed in the old file after its last reading (an append racing the rename) is taken at the next
 * rotation, before the old file is removed.
 */
import {
  closeSync,
  existsSync,
  readdirSync,
  readSync,
  renameSync,
  statSync,
  unlinkSync,
  writeSync,
} from 'node:fs';
import { join } from 'node:path';
import { readJson } from '../api/json-files.js';
import { openRegularForAppend, openRegularForRead } from '../api/safe-fs.js';

/** An inbox taken to its end is rotated once it is this large. */
export const ROTATE_BYTES = 64 * 1024;

/** `<state>/<harness>/<id>.inbox` beside the mapping state `<id>.json`. */
export function inboxPath(statePath: string): string {
  return `${statePath.slice(0, -'.json'.length)}.inbox`;
}

/**
 * Appends one payload (compact JSON, no newline inside) with one write, to a regular file only (a FIFO
 * put there is refused, never waited on). @throws the file system's error, EFTYPE
 */
export function appendInbox(path: string, payload: unknown): void {
  const fd = openRegularForAppend(path, 0o600);
  try {
    const line = Buffer.from(`${JSON.stringify(payload)}\n`);
    // One write on a local disk; a short one (disk full, a signal) finishes the line rather than tear it.
    for (let done = 0, n = 1; done < line.length && n > 0; done += n) n = writeSync(fd, line, done);
  } finally {
    closeSync(fd);
  }
}

/** What the inbox holds past `offset`: complete lines only, and the offset after them. */
export function readInbox(path: string, offset: number): { lines: string[]; end: number } {
  let size: number;
  try {
    size = statSync(path).size;
  } catch {
    return { lines: [], end: offset };
  }
  if (size <= offset) return { lines: [], end: Math.min(offset, size) };
  const buf = Buffer.alloc(size - offset);
  const fd = openRegularForRead(path);
  try {
    let got = 0;
    while (got < buf.length) {
      const n = readSync(fd, buf, got, buf.length - got, offset + got);
      if (n <= 0) break;
      got += n;
    }
    const text = buf.subarray(0, got).toString('utf8');
    const last = text.lastIndexOf('\n');
    if (last < 0) return { lines: [], end: offset };
    return {
      lines: text.slice(0, last).split('\n').filter(Boolean),
      end: offset + Buffer.byteLength(text.slice(0, last + 1)),
    };
  } finally {
    closeSync(fd);
  }
}

/** The inbox part of a mapping state. */
export interface InboxProgress {
  /** bytes of `<id>.inbox` already written as events */
  inboxOffset?: number;
  /** bytes of `<id>.inbox.old` read when it was rotated */
  inboxOldSize?: number;
  /** each spool segment's size when the state was last saved (writer id → bytes) */
  spoolBytes?: Record<string, number>;
}

/**
 * Every deferred payload not taken yet (the old file's stragglers first), parsed; advances `progress`.
 * Call under the session lock; lines that do not parse are skipped (they were written by this code).
 */
export function takeInbox(path: string, progress: InboxProgress): unknown[] {
  const out: unknown[] = [];
  const parse = (lines: string[]) => {
    for (const l of lines) {
      try {
        out.push(JSON.parse(l));
      } catch {
        // not ours, or torn by a kill mid-append: nothing to recover
      }
    }
  };
  const cur = readInbox(path, progress.inboxOffset ?? 0);
  parse(cur.lines);
  progress.inboxOffset = cur.end;
  if (cur.end >= ROTATE_BYTES) {
    const old = `${path}.old`;
    parse(readInbox(old, progress.inboxOldSize ?? 0).lines);
    try {
      unlinkSync(old);
    } catch {
      // none yet
    }
    renameSync(path, old);
    progress.inboxOldSize = cur.end;
    progress.inboxOffset = 0;
    // Appends that raced the rename went to the old file; a later rotation reads them.
  }
  return out;
}

/** The size of each segment of a spool session directory (writer id → bytes); {} when there is none. */
export function segmentSizes(dir: string): Record<string, number> {
  const out: Record<string, number> = {};
  let names: string[];
  try {
    names = readdirSync(dir);
  } catch {
    return out;
  }
  for (const f of names) if (f.endsWith('.jsonl')) out[f.slice(0, -6)] = statSync(join(dir, f)).size;
  return out;
}

/**
 * The deferral ids (`hook_deferred`) of events past the sizes the state recorded: a hook killed after it
 * wrote a deferred payload's events but before it saved the state left them there, and its inbox offset
 * behind; the next hook must not write them again. Only reads when a segment grew past its record.
 */
export function uncommittedDeferrals(dir: string, recorded: Record<string, number>): Set<string> {
  const ids = new Set<string>();
  for (const [w, size] of Object.entries(segmentSizes(dir))) {
    const from = recorded[w] ?? 0;
    if (size <= from) continue;
    for (const line of readInbox(join(dir, `${w}.jsonl`), from).lines) {
      try {
        const ev = JSON.parse(line) as { hook_deferred?: unknown };
        if (typeof ev.hook_deferred === 'string') ids.add(ev.hook_deferred);
      } catch {
        // a torn line: not an event
      }
    }
  }
  return ids;
}

/**
 * How many sessions have deferred payloads not yet written as events (complete lines of an inbox, or of
 * its rotated `.inbox.old`, past what its mapping state `<id>.json` says was taken): events a hook
 * acknowledged that are not in the spool yet, so not in `spoolBacklog` either. The next hook of the
 * session or the shipper (`drainInboxes`) writes them. A line torn by a kill mid-append does not count.
 */
export function deferredSessions(state: string): number {
  let n = 0;
  for (const harness of ['claude-code', 'codex']) {
    const dir = join(state, harness);
    if (!existsSync(dir)) continue;
    for (const f of readdirSync(dir)) {
      if (!f.endsWith('.inbox')) continue;
      const p = (readJson(join(dir, `${f.slice(0, -'.inbox'.length)}.json`)) ?? {}) as InboxProgress;
      const inbox = join(dir, f);
      if (
        readInbox(inbox, p.inboxOffset ?? 0).lines.length > 0 ||
        (existsSync(`${inbox}.old`) && readInbox(`${inbox}.old`, p.inboxOldSize ?? 0).lines.length > 0)
      )
        n += 1;
    }
  }
  return n;
}
