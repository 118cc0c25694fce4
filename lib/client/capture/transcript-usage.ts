/**
 * Token usage from Claude Code's own transcript (issue 27 item 1: "The hook may read usage from
 * `transcript_path` only when it is a regular file under the Claude Code projects folder, from the offset
 * it last read, within its budget"). Hook payloads carry no usage; each assistant record of the
 * transcript (`<projects>/<project>/<session>.jsonl`, a subagent's `…/subagents/agent-<id>.jsonl`) has
 * the message's `usage`, `model`, `id`, the request's `requestId` and sometimes `costUSD`.
 *
 * One read (`readTranscriptUsage`):
 * - refuses, reading nothing, a path that is not a regular file (`lstat`: a symbolic link, a FIFO, a
 *   folder, a device), whose real path is not under the real path of the projects folder
 *   (`$CLAUDE_CONFIG_DIR/projects`, else `~/.claude/projects`), or that shrank below the offset already
 *   read while it is still the same file (same device and inode; a new file is read from 0);
 * - opens the checked real path with `O_NOFOLLOW|O_NONBLOCK` and reads only when `fstat` of the open fd
 *   is the regular file `lstat` saw (same device and inode): no window between the check and the read;
 * - reads from the saved offset at most `maxBytes`, complete lines only (a partial last line waits for
 *   the next read); a single line longer than `maxBytes` is read whole up to `USAGE_LINE_MAX_BYTES`,
 *   past that skipped (its usage is lost, and said so in docs/capture.md);
 * - returns one record per message id with the last figures it read (a streamed message is written
 *   several times with the same id and a growing output count), skipping the `<synthetic>` model's and
 *   the repeat of the note last written (same id and output count).
 *
 * Node builtins only: the hook loads this on every event.
 */
import {
  closeSync,
  constants,
  fstatSync,
  lstatSync,
  openSync,
  readSync,
  realpathSync,
  type Stats,
} from 'node:fs';
import { homedir } from 'node:os';
import { join, sep } from 'node:path';

/** Bytes one hook invocation reads from transcripts at most (all files together); the rest next time. */
export const USAGE_READ_MAX_BYTES = 2 * 1024 * 1024;
/** A line longer than a read is read whole up to this; a longer one is skipped. */
export const USAGE_LINE_MAX_BYTES = 16 * 1024 * 1024;

const NOFOLLOW = constants.O_NOFOLLOW ?? 0;
const NONBLOCK = constants.O_NONBLOCK ?? 0;
const NOCTTY = constants.O_NOCTTY ?? 0;

/** How far one transcript file was read, kept in the session's mapping state between hook processes. */
export interface TranscriptCursor {
  /** bytes read (complete lines, or up to a line being skipped) */
  offset: number;
  /** the file read (a new file at the same path is read from 0) */
  dev: number;
  ino: number;
  /** the bytes before the next newline are the rest of a line not read (too long, or a start at the end) */
  midLine?: boolean;
  /** the message id and output count of the last note written from this file: not written twice */
  lastId?: string;
  lastOut?: number | null;
  /** a subagent's own transcript: the subagent (`agent_id`) its records belong to */
  agent?: string;
  /** a subagent's file read to its final message: not read again */
  done?: boolean;
  /** a subagent's file: a digest of the last message its SubagentStop named, not read yet */
  waitFor?: string;
}

/** The usage part of a Claude session's mapping state. */
export interface UsageState {
  /** read positions by transcript path (as the payload gave it), oldest first, at most `MAX_FILES` */
  files: Record<string, TranscriptCursor>;
  /**
   * the main transcript is read from its start: the state began with a SessionStart of a new session.
   * Otherwise (capture began mid-session, a state saved before this existed) it is read from where it
   * ended when first seen: what came before belongs to no turn this capture recorded.
   */
  fromStart: boolean;
  /** the last refusal recorded for `hansard doctor` (`<path>\0<reason>`): recorded once, not per hook */
  refused?: string;
}

/** Transcript files whose positions are kept; the oldest are forgotten first (done subagents' first). */
export const MAX_FILES = 16;

/** One assistant message's usage as the transcript recorded it (its last record in this read). */
export interface UsageRecord {
  messageId: string;
  model: string | null;
  /** the message's `usage` object as recorded */
  usage: Record<string, unknown>;
  requestId: string | null;
  /** the record's own `costUSD` */
  costUsd: number | null;
  /** `isSidechain: true`: a subagent's record */
  sidechain: boolean;
  /** the record's `agentId` (a subagent's id), null when none */
  agentId: string | null;
}

/** What one read found. */
export type UsageReadResult =
  | {
      kind: 'read';
      records: UsageRecord[];
      /** the text blocks of the assistant records read, each marked when a subagent's (for Stop's wait) */
      texts: { text: string; sidechain: boolean }[];
      cursor: TranscriptCursor;
      bytes: number;
      /** complete lines are left past this read (the byte limit stopped it) */
      more: boolean;
    }
  | { kind: 'absent' }
  | { kind: 'refused'; reason: string };

/** Claude Code's projects folder: `$CLAUDE_CONFIG_DIR/projects`, else `~/.claude/projects`. */
export function claudeProjectsDir(env: NodeJS.ProcessEnv): string {
  return join(env.CLAUDE_CONFIG_DIR || join(env.HOME || homedir(), '.claude'), 'projects');
}

/**
 * Reads the usage records of `path` past `cursor` (absent: from 0, or from the file's end when
 * `startAtEnd`), at most `maxBytes` (rules in the module comment). Never throws: a file that is not there
 * is `absent`, one that may not be read is `refused` with a short reason (no path, no content).
 */
export function readTranscriptUsage(
  path: string,
  cursor: TranscriptCursor | undefined,
  opts: { env: NodeJS.ProcessEnv; maxBytes?: number; startAtEnd?: boolean },
): UsageReadResult {
  const opened = openChecked(path, opts.env);
  if ('kind' in opened) return opened;
  const { fd, dev, ino, size } = opened;
  try {
    const same = cursor !== undefined && cursor.dev === dev && cursor.ino === ino;
    let c: TranscriptCursor;
    if (cursor === undefined || !same) {
      // A file first seen, or a new file at the known path (its inode changed): from 0, or its end.
      c = {
        offset: 0,
        dev,
        ino,
        ...(cursor?.agent ? { agent: cursor.agent } : {}),
        ...(cursor?.waitFor ? { waitFor: cursor.waitFor } : {}),
      };
      if (cursor === undefined && opts.startAtEnd && size > 0) {
        c.offset = size;
        c.midLine = lastByte(fd, size) !== 0x0a;
        return { kind: 'read', records: [], texts: [], cursor: c, bytes: 0, more: false };
      }
    } else if (size < cursor.offset) {
      // The same file, shorter than what was read: rewritten in place. Nothing read there is trusted.
      return { kind: 'refused', reason: 'it shrank below the offset already read (the same file)' };
    } else c = { ...cursor };
    return readFrom(fd, size, c, opts.maxBytes ?? USAGE_READ_MAX_BYTES);
  } catch (err) {
    return {
      kind: 'refused',
      reason: `it could not be read (${(err as NodeJS.ErrnoException).code ?? 'error'})`,
    };
  } finally {
    closeSync(fd);
  }
}

/** The file opened after every check (module comment), or why not. */
function openChecked(
  path: string,
  env: NodeJS.ProcessEnv,
):
  | { fd: number; dev: number; ino: number; size: number }
  | { kind: 'absent' }
  | { kind: 'refused'; reason: string } {
  let l: Stats;
  try {
    l = lstatSync(path);
  } catch (err) {
    const code = (err as NodeJS.ErrnoException).code;
    if (code === 'ENOENT' || code === 'ENOTDIR') return { kind: 'absent' };
    return { kind: 'refused', reason: `it could not be examined (${code ?? 'error'})` };
  }
  if (!l.isFile()) return { kind: 'refused', reason: `it is ${kindOf(l)}, not a regular file` };
  let real: string;
  let root: string;
  try {
    real = realpathSync.native(path);
  } catch (err) {
    return {
      kind: 'refused',
      reason: `its real path could not be read (${(err as NodeJS.ErrnoException).code})`,
    };
  }
  try {
    root = realpathSync.native(claudeProjectsDir(env));
  } catch {
    return { kind: 'refused', reason: 'there is no Claude Code projects folder to read it under' };
  }
  if (!real.startsWith(root.endsWith(sep) ? root : root + sep))
    return { kind: 'refused', reason: 'it is outside the Claude Code projects folder' };
  let fd: number;
  try {
    fd = openSync(real, constants.O_RDONLY | NOFOLLOW | NONBLOCK | NOCTTY);
  } catch (err) {
    return { kind: 'refused', reason: `it could not be opened (${(err as NodeJS.ErrnoException).code})` };
  }
  try {
    const st = fstatSync(fd);
    if (!st.isFile() || st.dev !== l.dev || st.ino !== l.ino) {
      closeSync(fd);
      return { kind: 'refused', reason: 'it was replaced while it was checked' };
    }
    return { fd, dev: st.dev, ino: st.ino, size: st.size };
  } catch (err) {
    closeSync(fd);
    return { kind: 'refused', reason: `it could not be examined (${(err as NodeJS.ErrnoException).code})` };
  }
}

function kindOf(l: Stats): string {
  if (l.isSymbolicLink()) return 'a symbolic link';
  if (l.isDirectory()) return 'a folder';
  if (l.isFIFO()) return 'a FIFO';
  if (l.isSocket()) return 'a socket';
  if (l.isCharacterDevice() || l.isBlockDevice()) return 'a device';
  return 'not a regular file';
}

function lastByte(fd: number, size: number): number {
  const b = Buffer.alloc(1);
  return readSync(fd, b, 0, 1, size - 1) === 1 ? b[0]! : -1;
}

/** Reads complete lines past `c.offset` (at most `maxBytes`, one long line up to the line limit). */
function readFrom(fd: number, size: number, c: TranscriptCursor, maxBytes: number): UsageReadResult {
  const avail = size - c.offset;
  const empty = (bytes: number, more: boolean): UsageReadResult => ({
    kind: 'read',
    records: [],
    texts: [],
    cursor: c,
    bytes,
    more,
  });
  if (avail <= 0 || maxBytes <= 0) return empty(0, avail > 0);
  let buf = readAt(fd, c.offset, Math.min(avail, maxBytes));
  let start = 0;
  if (c.midLine) {
    // The rest of a line not read (skipped, or begun before the read started at the file's end).
    const nl = buf.indexOf(0x0a);
    if (nl < 0) {
      c.offset += buf.length;
      return empty(buf.length, c.offset < size);
    }
    start = nl + 1;
    c.midLine = false;
  }
  let end = buf.lastIndexOf(0x0a);
  if (end < start && buf.length < avail) {
    // One line longer than a read: read it whole, up to the line limit.
    buf = readAt(fd, c.offset, Math.min(avail, start + USAGE_LINE_MAX_BYTES));
    end = buf.indexOf(0x0a, start);
    if (end < 0 && buf.length - start >= USAGE_LINE_MAX_BYTES) {
      c.offset += buf.length;
      c.midLine = true;
      return empty(buf.length, c.offset < size);
    }
  }
  if (end < start) {
    // Only a partial last line (Claude Code is writing it): left for the next read.
    c.offset += start;
    return empty(buf.length, false);
  }
  const { records, texts } = usageOf(buf.toString('utf8', start, end + 1), c);
  c.offset += end + 1;
  return { kind: 'read', records, texts, cursor: c, bytes: buf.length, more: c.offset < size };
}

function readAt(fd: number, position: number, length: number): Buffer {
  const buf = Buffer.alloc(length);
  let got = 0;
  while (got < length) {
    const n = readSync(fd, buf, got, length - got, position + got);
    if (n <= 0) break;
    got += n;
  }
  return got === length ? buf : buf.subarray(0, got);
}

/**
 * The usage records of complete transcript lines: one per message id with its last figures, in the
 * order the ids first appear; the repeat of the cursor's last note is dropped and the cursor updated.
 */
function usageOf(
  text: string,
  c: TranscriptCursor,
): { records: UsageRecord[]; texts: { text: string; sidechain: boolean }[] } {
  const byId = new Map<string, UsageRecord>();
  const texts: { text: string; sidechain: boolean }[] = [];
  for (const line of text.split('\n')) {
    // Most lines (tool results, prompts, snapshots) are not assistant records: skip them unparsed.
    if (!line.includes('"assistant"') || !line.includes('"usage"')) continue;
    let r: Record<string, unknown>;
    try {
      r = JSON.parse(line) as Record<string, unknown>;
    } catch {
      continue; // not a record (a line torn by a crash of Claude Code)
    }
    if (r?.type !== 'assistant') continue;
    const m = obj(r.message);
    const usage = obj(m.usage);
    if (typeof m.id !== 'string' || m.id === '' || Object.keys(usage).length === 0) continue;
    if (m.model === '<synthetic>') continue; // Claude Code's own stand-in message, no request made
    const sidechain = r.isSidechain === true;
    if (Array.isArray(m.content)) {
      for (const b of m.content) {
        const block = obj(b);
        if (block.type === 'text' && typeof block.text === 'string')
          texts.push({ text: block.text, sidechain });
      }
    }
    // A later record of the id replaces the figures and keeps the first one's place.
    byId.set(m.id, {
      messageId: m.id,
      model: typeof m.model === 'string' ? m.model : null,
      usage,
      requestId: typeof r.requestId === 'string' ? r.requestId : null,
      costUsd: typeof r.costUSD === 'number' && Number.isFinite(r.costUSD) ? r.costUSD : null,
      sidechain,
      agentId: typeof r.agentId === 'string' && r.agentId !== '' ? r.agentId : null,
    });
  }
  const records = [...byId.values()].filter(
    (x) => !(x.messageId === c.lastId && outputOf(x) === (c.lastOut ?? null)),
  );
  const last = records.at(-1);
  if (last) {
    c.lastId = last.messageId;
    c.lastOut = outputOf(last);
  }
  return { records, texts };
}

/** The record's output token count, null when it has none. */
export function outputOf(r: UsageRecord): number | null {
  return typeof r.usage.output_tokens === 'number' ? r.usage.output_tokens : null;
}

function obj(v: unknown): Record<string, unknown> {
  return v !== null && typeof v === 'object' && !Array.isArray(v) ? (v as Record<string, unknown>) : {};
}
