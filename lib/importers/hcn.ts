/**
 * Recording hcn streams (seed 002; issue 10 item 3; docs/import.md "hcn"): `hansard observe` (an
 * `hcn-observer/1` stream on stdin), `hansard run` (the `hcn run --json` NDJSON of a child) and
 * `hansard import hcn FILE` (a saved stream) all feed one `HcnRecorder`, a line at a time, so events are
 * written as they arrive: a run killed half way leaves what was seen, and a stream that ends without `done`
 * ends its turn `interrupted`.
 *
 * One run is one turn. It opens at the run's first record (`hansard run` opens it with the person's
 * prompt as a `message`, so `context_message_ids` names it); `done` ends it with the status its cause
 * gives (`turnStatusFor`), `extra.hcn_cause` and `extra.hcn_exit_code`. Actions and results pair by hcn's
 * `callId`; a call without one pairs with the first waiting call of the same tool name. What no v3 event
 * says (identity, usage, failure, limit, warning, error, question, a skipped record) is a `note` by `hcn`
 * marked `extra.import_kind`, its text the event exactly as hcn printed it; a record of a kind this build
 * does not know is an `unknown_record` note, and a line that is not JSON is kept the same way and
 * reported with its line number.
 */
import { nowMicros, parseTs } from '../log/format/time.js';
import { type EmitOptions, openSession, type SessionWriter } from '../log/write/writer.js';
import { IMPORT_NOTE_AUTHOR, type ImportProblem, type ImportProblemKind } from './claude-code-transcript.js';
import {
  DROPPED,
  detectFormat,
  firstIssue,
  HCN_NOTE_AUTHOR,
  type HcnEvent,
  HcnEvent as HcnEventSchema,
  type HcnFormat,
  HcnFormatError,
  type HcnRecorderOptions,
  type HcnRecordResult,
  hcnUsageExtra,
  KNOWN_KINDS,
  NATIVE,
  NOTE_KINDS,
  ObserverRecord,
  resultExitCode,
  type StartedRecord,
  turnStatusFor,
} from './hcn-records.js';
import { isObj, type Obj, parseObject } from './json-line.js';
import { WriterMapping } from './mapping.js';

export {
  HCN_NOTE_AUTHOR,
  type HcnFormat,
  HcnFormatError,
  type HcnRecorderOptions,
  type HcnRecordResult,
} from './hcn-records.js';

/**
 * Records one hcn stream as one writer's segment, fed a line at a time (`line`, or bytes through `push`),
 * then `finish()`. The writer opens at the first non-blank line (an observer's `started` record gives its
 * `meta`); methods write synchronously and throw only `WriterError` and the file system's errors, plus
 * `HcnFormatError` when the first record shows the stream is a harness's own output (nothing written).
 */
export class HcnRecorder {
  readonly problems: ImportProblem[] = [];
  format: HcnFormat | null = null;
  private m: WriterMapping | null = null;
  private lineNo = 0;
  private readonly extra = {
    coverageGaps: 0,
    tokenUsage: 0,
    unknown: 0,
    skipped: {} as Record<string, number>,
  };
  private done: HcnRecordResult['done'] = null;
  /** the open turn has its `done` (a session's next `turn` opens the next one) */
  private turnDone = false;
  /** actions whose call carried no `callId`, waiting for a result: action id and tool name */
  private uncalled: Array<{ id: string; name: string }> = [];
  private firstAt: number | null = null;
  private lastAt: number | null = null;
  private mono = 0;
  /** the bytes of the line not complete yet */
  private rest: Buffer[] = [];
  private readonly decoder = new TextDecoder('utf-8');
  /** the harness hcn runs, for usage notes: the stream's (`started`, `session`), else the caller's */
  private harness: string | null;

  constructor(private readonly opts: HcnRecorderOptions) {
    this.harness = opts.harness ?? null;
  }

  /** The writer, once the first line opened it. */
  get writer(): SessionWriter | null {
    return this.m?.w ?? null;
  }

  /** Opens the writer now (`hansard run`: the prompt and its turn are written before hcn starts). */
  start(): void {
    if (this.m === null) this.open(null, this.stamp(undefined));
  }

  /** Feeds raw bytes: each complete line is recorded now, a partial one waits for its newline. */
  push(chunk: Buffer): void {
    let from = 0;
    for (let nl = chunk.indexOf(10); nl >= 0; nl = chunk.indexOf(10, from)) {
      // a long line's earlier chunks are joined once, when its newline arrives
      const bytes = this.rest.length
        ? Buffer.concat([...this.rest, chunk.subarray(from, nl)])
        : chunk.subarray(from, nl);
      this.rest = [];
      from = nl + 1;
      this.line(this.decoder.decode(bytes).replace(/\r$/, ''));
    }
    if (from < chunk.length) this.rest.push(Buffer.from(chunk.subarray(from)));
  }

  /** Records one line (without its newline). */
  line(text: string) {
    this.lineNo += 1;
    if (text.trim() === '') return;
    const obj = parseObject(text);
    if (this.format === null && isObj(obj)) {
      this.format = detectFormat(obj);
      const native = NATIVE[this.format];
      if (native && this.m === null)
        throw new HcnFormatError(
          this.format,
          `this is ${native}, not an hcn stream: import it with \`hansard import ${this.format === 'claude-stream-json' ? 'claude-code' : 'codex'} FILE\` (or record the run through hcn: \`hansard run\`, or hcn run --json > FILE)`,
        );
    }
    const o = this.stamp(isObj(obj) ? obj.at : undefined);
    const m = this.open(isObj(obj) && obj.record === 'started' ? obj : null, o);
    if (obj === undefined) return this.keep(text, o, 'line is not valid JSON');
    if (obj === null) return this.keep(text, o, 'line is not a JSON object');
    if (typeof obj.record === 'string') return this.observerRecord(m, obj, text, o);
    this.event(m, obj, text, o);
  }

  /**
   * The end of the stream: a partial last line is recorded, a turn still open ends `interrupted` (its
   * waiting calls get `cancelled` results), and `writer.end` closes the segment. Returns what was
   * written, or null when the stream held no line at all (nothing was written).
   */
  finish(): HcnRecordResult | null {
    if (this.rest.length) {
      const last = this.decoder.decode(Buffer.concat(this.rest));
      this.rest = [];
      this.line(last);
    }
    const m = this.m;
    if (m === null) return null;
    const o = this.stamp(undefined);
    // Every `done` (and `closed`) ends its turn: one still open never had one.
    const interrupted = m.turnId !== null;
    if (interrupted) this.interrupt(m, 'the hcn stream ended without done', o);
    m.w.end(
      {
        reason: interrupted
          ? 'interrupted: the hcn stream ended without done'
          : this.done
            ? `hcn ${this.done.cause} (exit ${this.done.exitCode})`
            : null,
      },
      o,
    );
    const { sid, w, dir, path } = m.w;
    return {
      sid,
      w,
      dir,
      path,
      format: this.format ?? 'unknown',
      counts: { ...m.counts, ...this.extra, subagentWriters: 0 },
      done: this.done,
      interrupted,
      problems: this.problems,
    };
  }

  /** Closes the segment without `writer.end` (an error stopped the recording). */
  abort(): void {
    this.m?.w.close();
  }

  /** Opens the writer (and, for `hansard run`, the prompt's turn) at the first line. */
  private open(started: Obj | null, o: EmitOptions): WriterMapping {
    if (this.m !== null) return this.m;
    const s = started ? ObserverRecord.safeParse(started) : null;
    const rec = s?.success ? (s.data as StartedRecord) : null;
    const w = openSession(
      this.opts.outDir,
      {
        agent: this.opts.agent ?? rec?.harness ?? 'hcn',
        app: this.opts.app,
        provenance: 'harness',
        extra: {
          ...this.opts.meta,
          ...(rec
            ? {
                hcn_invocation_id: rec.invocationId ?? null,
                hcn_version: rec.hcnVersion ?? null,
                hcn_harness: rec.harness ?? null,
                hcn_command: rec.command ?? null,
              }
            : {}),
        },
      },
      { clock: () => this.lastAt ?? nowMicros(), monoClock: () => this.mono },
    );
    this.m = new WriterMapping(w, this.opts.userId ?? 'user');
    if (rec?.harness) this.harness = rec.harness;
    if (this.opts.prompt != null) this.m.prompt(this.opts.prompt, o);
    return this.m;
  }

  /** This record's time: its `at` when it has one, else the previous record's, else now. */
  private stamp(at: unknown): EmitOptions {
    const parsed = typeof at === 'string' ? parseTs(at) : null;
    const micros = parsed?.micros ?? (this.format === 'observer' ? this.lastAt : null) ?? nowMicros();
    this.firstAt ??= micros;
    this.lastAt = micros;
    this.mono = Math.max(this.mono, (micros - this.firstAt) / 1e6);
    return { at: micros, mono: this.mono };
  }

  private observerRecord(m: WriterMapping, obj: Obj, text: string, o: EmitOptions) {
    const known = obj.record === 'started' || obj.record === 'event' || obj.record === 'skipped';
    if (!known) return this.unknown(text, o);
    const r = ObserverRecord.safeParse(obj);
    if (!r.success) return this.keep(text, o, `${String(obj.record)} record: ${firstIssue(r.error)}`);
    const rec = r.data;
    if (rec.record === 'started') {
      if (rec.schema != null && rec.schema !== 'hcn-observer/1')
        this.problem(
          `started record has schema ${JSON.stringify(rec.schema)}, not hcn-observer/1`,
          'read_in_part',
        );
      m.marked('meta', HCN_NOTE_AUTHOR, text, o, { hcn_record: 'started' });
      this.ensureTurn(m, o);
    } else if (rec.record === 'skipped') {
      // hcn replaced a record over 1 MiB by this marker: the session misses what it held.
      m.marked('coverage_gap', HCN_NOTE_AUTHOR, text, o, {
        hcn_record: 'skipped',
        hcn_reason: rec.reason ?? null,
      });
      this.extra.coverageGaps += 1;
    } else this.event(m, rec.event, JSON.stringify(rec.event), o);
  }

  /** One run event (an `hcn --json` line, or an observer `event` record's `event`). */
  private event(m: WriterMapping, obj: Obj, text: string, o: EmitOptions) {
    const kind = typeof obj.kind === 'string' ? obj.kind : null;
    if (kind === null || !KNOWN_KINDS.has(kind)) return this.unknown(text, o);
    if (DROPPED.has(kind)) {
      this.extra.skipped[kind] = (this.extra.skipped[kind] ?? 0) + 1;
      return;
    }
    const r = HcnEventSchema.safeParse(obj);
    if (!r.success) return this.keep(text, o, `${kind} event: ${firstIssue(r.error)}`);
    const ev: HcnEvent = r.data;
    if (ev.kind === 'turn') {
      // A session's next turn: the previous one ended with its `done` (or is cut off here).
      if (m.turnId !== null && !this.turnDone) this.interrupt(m, 'a new turn began without done', o);
      else m.endTurn('completed', o);
      m.openTurn(null, o);
      this.turnDone = false;
      return m.marked('meta', HCN_NOTE_AUTHOR, text, o, { hcn_kind: 'turn' });
    }
    if (ev.kind === 'closed') {
      this.done = { exitCode: ev.exitCode, cause: ev.cause };
      if (m.turnId !== null && !this.turnDone) this.interrupt(m, `the session closed (${ev.cause})`, o);
      return m.marked('meta', HCN_NOTE_AUTHOR, text, o, { hcn_kind: 'closed', hcn_cause: ev.cause });
    }
    if (ev.kind === 'session' && ev.harness) this.harness = ev.harness;
    if (ev.kind !== 'session') this.ensureTurn(m, o);
    switch (ev.kind) {
      case 'message':
        if (ev.role === 'assistant') return m.output(ev.text, o);
        return m.marked('meta', HCN_NOTE_AUTHOR, text, o, { hcn_kind: 'message', hcn_role: ev.role });
      case 'tool': {
        const id = m.action({ tool: ev.name, input: ev.input ?? null, callId: ev.callId ?? null }, o);
        if (ev.callId == null) this.uncalled.push({ id, name: ev.name });
        return;
      }
      case 'tool-result':
        return this.toolResult(m, ev, text, o);
      case 'compaction': {
        const extra = {
          hcn_kind: 'compaction',
          hcn_state: ev.state,
          ...(ev.trigger != null ? { hcn_trigger: ev.trigger } : {}),
        };
        // hcn: "count `compacted`, not `started`"; the other states say a compaction began or did not happen.
        if (ev.state === 'compacted') return m.compaction(HCN_NOTE_AUTHOR, text, o, extra);
        return m.marked('meta', HCN_NOTE_AUTHOR, text, o, extra);
      }
      case 'done':
        return this.doneEvent(m, ev, text, o);
      case 'usage':
        // hcn's figures as it reported them, for the counting rule (lib/log/analyse/usage/)
        this.extra.tokenUsage += 1;
        return m.marked('token_usage', HCN_NOTE_AUTHOR, text, o, hcnUsageExtra(ev, this.harness));
      default: {
        const extra: Record<string, unknown> = { hcn_kind: ev.kind };
        if (ev.kind === 'failure') extra.hcn_class = ev.class;
        if (ev.kind === 'limit') extra.hcn_code = ev.code;
        if (ev.kind === 'error' && isObj(ev.denial)) extra.hcn_denial = true;
        if (ev.kind === 'identity') extra.hcn_session_id = ev.sessionId;
        return m.marked(NOTE_KINDS[ev.kind] ?? 'meta', HCN_NOTE_AUTHOR, text, o, extra);
      }
    }
  }

  private toolResult(
    m: WriterMapping,
    ev: Extract<HcnEvent, { kind: 'tool-result' }>,
    text: string,
    o: EmitOptions,
  ) {
    const failed = ev.isError === true;
    const fields = {
      status: failed ? ('error' as const) : ('ok' as const),
      output: ev.result ?? null,
      error: failed ? (typeof ev.result === 'string' ? ev.result : 'the tool reported an error') : null,
      exitCode: resultExitCode(ev.result),
    };
    if (ev.callId != null) {
      const { orphan } = m.result({ callId: ev.callId, ...fields }, o);
      if (orphan)
        this.problem(
          `tool-result ${JSON.stringify(ev.callId)} answers no tool call before it`,
          'orphan_result',
        );
      return;
    }
    // No call id: the first waiting call of that tool (hcn: "names … can be absent").
    const i = this.uncalled.findIndex((u) => ev.name == null || u.name === ev.name);
    if (i < 0) {
      this.problem('tool-result without callId answers no waiting tool call');
      return this.keep(text, o, null);
    }
    const [u] = this.uncalled.splice(i, 1);
    this.writeResult(m, u!.id, fields, o);
  }

  private doneEvent(m: WriterMapping, ev: Extract<HcnEvent, { kind: 'done' }>, text: string, o: EmitOptions) {
    this.done = { exitCode: ev.exitCode, cause: ev.cause };
    const extra = { hcn_cause: ev.cause, hcn_exit_code: ev.exitCode };
    if (ev.completion != null || ev.denialCount != null || ev.failure !== undefined)
      m.marked('meta', HCN_NOTE_AUTHOR, text, o, { hcn_kind: 'done', ...extra });
    const status = turnStatusFor(ev.cause, ev.exitCode);
    if (status === 'interrupted') this.interrupt(m, `hcn: ${ev.cause}`, { ...o, extra });
    else m.endTurn(status, { ...o, extra });
    this.turnDone = true;
  }

  /** Opens the run's turn unless one is open (or the open one has had its `done`: a later run's). */
  private ensureTurn(m: WriterMapping, o: EmitOptions): void {
    if (m.turnId !== null && !this.turnDone) return;
    if (this.turnDone) this.turnDone = false;
    m.openTurn(null, o);
  }

  /** Cancels every waiting call (with or without a call id) and ends the turn `interrupted`. */
  private interrupt(m: WriterMapping, reason: string, o: EmitOptions): void {
    for (const u of this.uncalled.splice(0))
      this.writeResult(m, u.id, { status: 'cancelled', output: null, error: reason, exitCode: null }, o);
    m.interrupt(reason, o);
  }

  private writeResult(
    m: WriterMapping,
    actionId: string,
    f: {
      status: 'ok' | 'error' | 'cancelled';
      output: unknown;
      error: string | null;
      exitCode: number | null;
    },
    o: EmitOptions,
  ): void {
    m.w.actionResult(
      { action_id: actionId, status: f.status, output: f.output, error: f.error, exit_code: f.exitCode },
      o,
    );
    m.counts.results += 1;
  }

  private unknown(text: string, o: EmitOptions): void {
    this.extra.unknown += 1;
    this.m!.marked('unknown_record', IMPORT_NOTE_AUTHOR, text, o);
  }

  /** A line kept exactly as written (an `unknown_record` note), with why it could not be mapped. */
  private keep(text: string, o: EmitOptions, why: string | null): void {
    if (why !== null) this.problem(why);
    this.unknown(text, o);
  }

  private problem(message: string, kind: ImportProblemKind = 'kept_as_note'): void {
    this.problems.push({ line: this.lineNo, message, kind });
  }
}
