/**
 * The segment writer: the library API an integrator records a session with (seed 001, DESIGN §3 and §6).
 *
 * `openSession(dir, meta)` opens (or creates) a session directory and this writer's own `w_….jsonl`
 * segment in it. Every event is one `write(2)` of one complete line on a file opened `O_APPEND`, so
 * writers in separate processes never interleave bytes, and a line is never welded to the next: a writer
 * that reopens a segment whose last line has no newline (a process killed mid-write) ends that torn line
 * before it writes anything. `seq` starts at 1 and grows by 1, `ts` is RFC 3339 UTC with 6 fractional
 * digits, `mono` is seconds since the writer started on a monotonic clock.
 *
 * Redaction (`lib/log/redact/redact.ts`): each event's free-text fields are scanned for credentials before
 * anything else touches them (the 1 MiB cut included, so a cut never leaves half a secret), each match is
 * written as `[REDACTED:<pattern>]`, and the event's `redacted` lists the fields that changed. The event a
 * method returns is the one written, placeholders included. `WriterOptions.redact` adds patterns, turns
 * scanning off, or hides the host name and pid.
 *
 * @example
 * const s = openSession('./sessions', { agent: 'support-bot' });
 * const m = s.message({ user_id: 'priya', text: 'restart the payments worker' });
 * const t = s.turnStart({ context_message_ids: [m.id] });
 * s.end();
 */
import { closeSync, fstatSync, mkdirSync, openSync, readSync, writeSync } from 'node:fs';
import { hostname } from 'node:os';
import { basename, join } from 'node:path';
import { parseLine, serializeEvent } from '../format/codec.js';
import {
  type ActionStatus,
  FORMAT_VERSION,
  type KnownEvent,
  type KnownType,
  type TurnStatus,
  WriterMeta,
} from '../format/events.js';
import { type IdPrefix, isId, newId } from '../format/ids.js';
import type { ProvenanceKind } from '../format/provenance.js';
import { formatTs, nowMicros } from '../format/time.js';
import { HANSARD_VERSION } from '../format/version.js';
import {
  compilePatterns,
  HIDDEN_HOST,
  HIDDEN_PID,
  type RedactOptions,
  type RedactPattern,
  redactEventFields,
} from '../redact/redact.js';
import { cutExtra, cutLongFields } from './field-limits.js';

/** What `openSession` is told about the writer. */
export interface SessionMeta {
  /** the session id; default: the directory's name if it is one, else a new id */
  sid?: string;
  /** reopen this writer's existing segment and go on from its last seq */
  writerId?: string;
  /** the agent or tool writing (`meta.agent`) */
  agent?: string | null;
  /** the application around it (`meta.app`) */
  app?: string | null;
  /** override the host name recorded (e.g. a placeholder, as in the seed's example) */
  host?: string | null;
  /** override the pid recorded */
  pid?: number | string | null;
  /**
   * who records this writer's events (`meta.provenance`, lib/log/format/provenance.ts): `library` by default
   * (this process records what it does); capture hooks, importers and harness streams say theirs, and
   * whatever the model itself hands over is `declared` (it never counts as evidence, docs/status.md)
   */
  provenance?: ProvenanceKind;
  /** more keys for `writer.start`'s `meta` */
  extra?: Record<string, unknown>;
}

export interface WriterOptions {
  /** wall clock in µs since the epoch (tests inject a clock that steps back) */
  clock?: () => number;
  /** monotonic clock in seconds (any origin) */
  monoClock?: () => number;
  /**
   * Credential redaction of free-text fields (on by default, with `BUILTIN_PATTERNS`):
   * `{ patterns: [{ name, regex }] }` adds patterns, `{ disabled: true }` writes text as given,
   * `{ hideHost: true }` / `{ hidePid: true }` record `"redacted-host"` / `0` in `writer.start` `meta`.
   */
  redact?: RedactOptions;
}

/** Per-event options: imports record the source's own time. */
export interface EmitOptions {
  /** this event's ts in µs since the epoch, instead of the clock */
  at?: number;
  /** this event's mono in seconds, instead of the monotonic clock */
  mono?: number;
  /** the event's `extra` (DESIGN §3: fields outside the type's own, kept by every reader); default `{}` */
  extra?: Record<string, unknown>;
}

type Ev<T extends KnownType> = Extract<KnownEvent, { type: T }>;

/** An open writer of one segment. Methods write synchronously and return the event written. */
export interface SessionWriter {
  readonly sid: string;
  readonly w: string;
  /** the session directory */
  readonly dir: string;
  /** this writer's segment file */
  readonly path: string;
  /** who records its events (`meta.provenance` of its `writer.start`, lib/log/format/provenance.ts) */
  readonly provenance: ProvenanceKind;
  participantJoin(
    f: { user_id: string; display_name?: string | null },
    o?: EmitOptions,
  ): Ev<'participant.join'>;
  participantLeave(
    f: { user_id: string; display_name?: string | null },
    o?: EmitOptions,
  ): Ev<'participant.leave'>;
  message(f: { user_id: string; text: string; client_ts?: string | null }, o?: EmitOptions): Ev<'message'>;
  /** `context_message_ids`: `null` = nothing recorded, `[]` = the turn began having seen no message */
  turnStart(f?: { context_message_ids?: string[] | null }, o?: EmitOptions): Ev<'turn.start'>;
  action(
    f: {
      turn_id: string;
      tool: string;
      input?: unknown;
      call_id?: string | null;
      caused_by?: string[] | null;
    },
    o?: EmitOptions,
  ): Ev<'agent.action'>;
  actionResult(
    f: {
      action_id: string;
      status: ActionStatus;
      output?: unknown;
      error?: string | null;
      exit_code?: number | null;
    },
    o?: EmitOptions,
  ): Ev<'agent.action_result'>;
  output(
    f: { turn_id: string; text: string; caused_by?: string[] | null },
    o?: EmitOptions,
  ): Ev<'agent.output'>;
  turnEnd(f: { turn_id: string; status: TurnStatus }, o?: EmitOptions): Ev<'turn.end'>;
  note(f: { author: string; text: string }, o?: EmitOptions): Ev<'note'>;
  correct(
    f: { target_id: string; field: string; value: unknown; reason: string },
    o?: EmitOptions,
  ): Ev<'correction'>;
  /** writes `writer.end` and closes the file; nothing may follow */
  end(f?: { reason?: string | null }, o?: EmitOptions): Ev<'writer.end'>;
  /** closes the file without writing `writer.end` (the segment stays open: verify says `segment_open`) */
  close(): void;
}

/** Thrown for misuse of the writer API (bad ids, writing after close). */
export class WriterError extends Error {
  override name = 'WriterError';
}

/**
 * Opens a writer. `dir` is either a session directory (named by its `s_…` id) or a parent folder, in
 * which the session directory `<sid>/` is created. Throws `WriterError` for an invalid `sid`/`writerId`
 * or redaction pattern, and the file system's errors (EACCES, ENOSPC) as they are.
 */
export function openSession(dir: string, meta: SessionMeta = {}, options: WriterOptions = {}): SessionWriter {
  const base = basename(dir);
  let sid = meta.sid;
  if (sid !== undefined && !isId('s', sid))
    throw new WriterError(`invalid session id ${JSON.stringify(sid)}`);
  let sessionDir: string;
  if (isId('s', base) && (sid === undefined || sid === base)) {
    sid = base;
    sessionDir = dir;
  } else {
    sid ??= newId('s');
    sessionDir = join(dir, sid);
  }
  if (meta.writerId !== undefined && !isId('w', meta.writerId)) {
    throw new WriterError(`invalid writer id ${JSON.stringify(meta.writerId)}`);
  }
  const w = meta.writerId ?? newId('w');
  const redact = options.redact ?? {};
  let patterns: readonly RedactPattern[] | null = null;
  if (!redact.disabled) {
    try {
      patterns = compilePatterns(redact.patterns ?? []);
    } catch (err) {
      throw new WriterError((err as Error).message);
    }
  }
  mkdirSync(sessionDir, { recursive: true });
  const path = join(sessionDir, `${w}.jsonl`);
  const fd = openSync(path, 'a+');
  const clock = options.clock ?? nowMicros;
  const monoClock = options.monoClock ?? (() => performance.now() / 1000);
  const mono0 = monoClock();
  let closed = false;

  const st = fstatSync(fd);
  // A FIFO or a device where the segment goes would block the reads and writes below (issue 25 item 1).
  if (!st.isFile()) {
    closeSync(fd);
    throw new WriterError(`${path} is not a regular file`);
  }
  const existing = st.size;
  let seq = 0;
  if (existing > 0) seq = resumeSegment(fd, existing);

  const emit = <T extends KnownType>(
    type: T,
    prefix: IdPrefix,
    fields: Record<string, unknown>,
    o: EmitOptions = {},
    id?: string,
  ): Ev<T> => {
    if (closed) throw new WriterError(`writer ${w} is closed`);
    // Redact first: the cut below must never leave half a secret. Only types with `redacted` carry free text.
    let clean = fields;
    if (Object.hasOwn(fields, 'redacted')) {
      const r = patterns === null ? { fields, redacted: [] } : redactEventFields(type, fields, patterns);
      clean = { ...r.fields, redacted: r.redacted };
    }
    const { fields: cut, truncated } = cutLongFields(clean);
    // The event's extra keys too (issue 25 attack item 18): no line may be too long to upload.
    const ex = cutExtra(o.extra ?? {});
    truncated.push(...ex.truncated);
    const ev = {
      v: FORMAT_VERSION,
      sid: sid!,
      w,
      seq: seq + 1,
      id: id ?? newId(prefix, idTime(o)),
      ts: formatTs(o.at ?? clock()),
      mono: o.mono !== undefined ? roundMono(o.mono) : roundMono(monoClock() - mono0),
      type,
      ...cut,
      extra: ex.extra,
      ...(truncated.length > 0 ? { truncated } : {}),
    } as unknown as Ev<T>;
    const bytes = Buffer.from(`${serializeEvent(ev)}\n`, 'utf8');
    writeAll(fd, bytes);
    seq += 1;
    return ev;
  };

  if (existing === 0) {
    const m = WriterMeta.parse({
      agent: meta.agent ?? null,
      app: meta.app ?? null,
      hansard_version: HANSARD_VERSION,
      host: redact.hideHost ? HIDDEN_HOST : meta.host !== undefined ? meta.host : hostname(),
      pid: redact.hidePid ? HIDDEN_PID : meta.pid !== undefined ? meta.pid : process.pid,
      provenance: meta.provenance ?? 'library',
      ...meta.extra,
    });
    // An explicit field of the API wins over a same-named key of `meta.extra`.
    m.provenance = meta.provenance ?? 'library';
    // The placeholders win over everything, `meta.extra` included.
    if (redact.hideHost) m.host = HIDDEN_HOST;
    if (redact.hidePid) m.pid = HIDDEN_PID;
    emit('writer.start', 'w', { writer_id: w, meta: m, redacted: [] }, {}, w);
  }

  const withText = { redacted: [] as string[] };
  return {
    sid,
    w,
    dir: sessionDir,
    path,
    provenance: meta.provenance ?? 'library',
    participantJoin: (f, o) =>
      emit('participant.join', 'e', { user_id: f.user_id, display_name: f.display_name ?? null }, o),
    participantLeave: (f, o) =>
      emit('participant.leave', 'e', { user_id: f.user_id, display_name: f.display_name ?? null }, o),
    message: (f, o) =>
      emit(
        'message',
        'm',
        { user_id: f.user_id, text: f.text, client_ts: f.client_ts ?? null, ...withText },
        o,
      ),
    turnStart: (f = {}, o) => {
      const id = newId('t', idTime(o));
      return emit(
        'turn.start',
        't',
        { turn_id: id, context_message_ids: f.context_message_ids ?? null },
        o,
        id,
      );
    },
    action: (f, o) =>
      emit(
        'agent.action',
        'a',
        {
          turn_id: f.turn_id,
          tool: f.tool,
          input: f.input ?? null,
          call_id: f.call_id ?? null,
          caused_by: f.caused_by === undefined ? null : f.caused_by,
          ...withText,
        },
        o,
      ),
    actionResult: (f, o) =>
      emit(
        'agent.action_result',
        'e',
        {
          action_id: f.action_id,
          status: f.status,
          output: f.output ?? null,
          error: f.error ?? null,
          exit_code: f.exit_code ?? null,
          ...withText,
        },
        o,
      ),
    output: (f, o) =>
      emit(
        'agent.output',
        'e',
        {
          turn_id: f.turn_id,
          text: f.text,
          caused_by: f.caused_by === undefined ? null : f.caused_by,
          ...withText,
        },
        o,
      ),
    turnEnd: (f, o) => emit('turn.end', 'e', { turn_id: f.turn_id, status: f.status }, o),
    note: (f, o) => emit('note', 'e', { author: f.author, text: f.text, ...withText }, o),
    correct: (f, o) =>
      emit(
        'correction',
        'e',
        { target_id: f.target_id, field: f.field, value: f.value ?? null, reason: f.reason, ...withText },
        o,
      ),
    end: (f = {}, o) => {
      const ev = emit('writer.end', 'e', { reason: f.reason ?? null }, o);
      closed = true;
      closeSync(fd);
      return ev;
    },
    close: () => {
      if (!closed) {
        closed = true;
        closeSync(fd);
      }
    },
  };
}

/** The ms time a ULID should carry: the event's own time when an import gives it. */
function idTime(o: EmitOptions | undefined): number | undefined {
  return o?.at === undefined ? undefined : Math.floor(o.at / 1000);
}

function roundMono(seconds: number): number {
  return Math.round(seconds * 1e6) / 1e6;
}

/** One `write` of the whole line; a short write (disk full, signal) finishes the same line rather than tear it. */
function writeAll(fd: number, bytes: Buffer): void {
  let done = writeSync(fd, bytes);
  while (done < bytes.length) done += writeSync(fd, bytes, done);
}

/**
 * Prepares an existing segment for more lines: ends a torn last line with a newline (so the next event is
 * not welded to it) and returns the last seq found. Reads backwards from the end, a block at a time.
 */
function resumeSegment(fd: number, size: number): number {
  const last = Buffer.alloc(1);
  readSync(fd, last, 0, 1, size - 1);
  if (last[0] !== 0x0a) writeAll(fd, Buffer.from('\n'));
  const block = 64 * 1024;
  let end = size;
  let tail = Buffer.alloc(0);
  while (end > 0) {
    const start = Math.max(0, end - block);
    const buf = Buffer.alloc(end - start);
    readSync(fd, buf, 0, buf.length, start);
    tail = Buffer.concat([buf, tail]);
    end = start;
    // Every complete line in `tail` except possibly the first (which may begin before `start`).
    const lines = tail.toString('utf8').split('\n');
    for (let i = lines.length - 1; i >= (end === 0 ? 0 : 1); i--) {
      const text = lines[i]!;
      if (text === '') continue;
      const p = parseLine(Buffer.from(text), 0, 0, true);
      if (p.ok) return p.event.seq;
    }
  }
  return 0;
}
