/**
 * Replay: a merged session as NDJSON or as readable text (seed 001 "replay", DESIGN §3), with corrections
 * applied; and the raw replay, the bytes as written.
 *
 * NDJSON gives each event's line exactly as its writer wrote it, in merged order, one per line, except an
 * event a correction changed: that one is `serializeEvent` of its effective view with its provenance as a
 * last key, `"corrected":[{"by","field","was","reason"},…]` (see `lib/log/corrections`), so no consumer
 * sees a modified value without knowing. Text gives one line per event: time, who, what, with the effective
 * values and a ` [corrected: <field> by <correction id>, …]` suffix on a corrected event. A text line is
 * always one line whatever the events hold (issue 8.4, `lib/log/escape`): ids and names (user ids, agents,
 * tools, types, ts) show a control character as `\n`, `\x1b`, `\u202e`; free text (a message, an output,
 * a tool's input and result) shows a newline as ` ⏎ `, a tab as a space, and the other controls escaped
 * the same way, so nothing a writer wrote can start a line of its own or reach a terminal raw. Both skip
 * quarantined lines (they are in the raw segments, and verify reports them). The same function serves the
 * CLI on a local directory and the server, so the two give the same bytes for the same segments.
 *
 * Corrections usually come after their target in merged order, so replay reads a session twice with bounded
 * memory: pass 1 (`CorrectionIndex.scan`) collects the corrections from the segments' bytes without parsing
 * the other lines, pass 2 merges and applies them. Hence its input is `ReplaySegment`s, which can be opened
 * more than once.
 */
import { createReadStream, statSync } from 'node:fs';
import { type Attribution, Attributor } from './attribution.js';
import { decodeEvent, type RecordedEvent } from './codec.js';
import {
  CorrectionIndex,
  type CorrectionProblem,
  type EffectiveEvent,
  effectiveLine,
} from './corrections.js';
import { escapeControl } from './escape.js';
import {
  type MergedEvent,
  type MergeOptions,
  type MergeSource,
  mergeSegmentBatches,
  mergeSegmentBatchesKeepingProblems,
} from './merge.js';
import { type ReadOptions, readSegmentBatches } from './reader.js';
import { listSegments } from './session-dir.js';

export type ReplayFormat = 'ndjson' | 'text';

/** A segment replay can read from its first byte as often as it needs to (pass 1 and pass 2). */
export interface ReplaySegment {
  /** the writer id (the segment's name), the merge's tie-break */
  w: string;
  /**
   * A new stream of the segment's bytes from byte `start`; every call must give the same bytes.
   * `chunkBytes` is a hint for the size of the chunks (pass 1 asks for large ones), which a source may ignore.
   * `signal`, when aborted, ends the stream with an error and releases what it holds (a file, a request).
   * `start` (default 0, the first byte): a bounded reader (lib/log/segment-blocks.ts) that closed the
   * stream to free its descriptor reopens it where it stopped, so a source must honour it.
   */
  open: (
    chunkBytes?: number,
    signal?: AbortSignal,
    start?: number,
  ) => AsyncIterable<Uint8Array> | Iterable<Uint8Array>;
}

export interface ReplayOptions extends MergeOptions {
  /**
   * Called after the last line for each correction that changed nothing (target missing, forbidden field,
   * invalid value), in the merged order of the corrections.
   */
  onCorrectionProblem?: (problem: CorrectionProblem) => void;
  /**
   * Pass 1 already done: `CorrectionIndex.scan` of these same segments (a server runs it under its scan
   * gate, lib/service/scan-gate.ts). Used once: an index tracks what has passed.
   */
  corrections?: CorrectionIndex;
}

/**
 * Bytes each segment reads at a time in a merge of `writers` segments: `total` (1 MiB) in flight in all,
 * between 16 KiB and 256 KiB per segment. Memory then stays flat however many writers there are (measured
 * in docs/benchmarks.md: larger reads keep more parsed events alive and cost more than they save). A
 * server, which holds one merge per response, asks for less (lib/service/sources.ts).
 */
export function mergeChunkBytes(writers: number, total = 1024 * 1024): number {
  return Math.min(256 * 1024, Math.max(16 * 1024, Math.floor(total / Math.max(1, writers))));
}

/**
 * The segments of a session directory as `ReplaySegment`s. Each segment's length is taken now, so both
 * passes of a replay read the same bytes even while a writer is still appending. Throws the file system's
 * error (ENOENT) when `dir` cannot be read.
 */
export function sessionDirSegments(dir: string): ReplaySegment[] {
  const files = listSegments(dir);
  const defaultChunk = mergeChunkBytes(files.length);
  return files.map(({ w, path }) => {
    const size = statSync(path).size;
    return {
      w,
      open: (chunkBytes = defaultChunk, signal?: AbortSignal, start = 0) =>
        start >= size ? [] : readFileRange(path, start, size, chunkBytes, signal),
    };
  });
}

/**
 * Bytes `[start, size)` of a file, opened only when first read: a stream that is closed before it starts
 * (a merge that stops early) never holds a descriptor.
 */
async function* readFileRange(
  path: string,
  start: number,
  size: number,
  chunkBytes: number,
  signal: AbortSignal | undefined,
): AsyncGenerator<Uint8Array> {
  // Never with an aborted signal: Node 20 then leaks the descriptor (see FsSegmentStore.readSegment).
  signal?.throwIfAborted();
  yield* createReadStream(path, {
    start,
    end: size - 1,
    highWaterMark: chunkBytes,
    ...(signal ? { signal } : {}),
  });
}

/** Fresh merge sources for `segments` (each opened once more; `signal` is passed to every `open`). */
export function segmentSources(
  segments: readonly ReplaySegment[],
  options: ReadOptions & { signal?: AbortSignal | undefined } = {},
): MergeSource[] {
  return segments.map((s) => ({
    w: s.w,
    batches: readSegmentBatches(s.open(undefined, options.signal), options),
  }));
}

function isReopenable(x: readonly ReplaySegment[] | readonly MergeSource[]): x is readonly ReplaySegment[] {
  return x.every((s) => typeof (s as Partial<ReplaySegment>).open === 'function');
}

/**
 * The merged replay of a session as lines of text, each ending with `\n`, with corrections applied.
 *
 * @param segments the session's segments, which replay opens twice (streaming; memory grows with the
 *   number of writers and of corrections only). `MergeSource`s, which can be read only once, are accepted
 *   too, for callers that have nothing else: their merged events are then held in memory for the second
 *   pass, so memory grows with the session.
 * @param format `ndjson` (default) or `text`
 * @param options.signal stops the replay: it throws the signal's reason (an `AbortError`) instead of
 *   reading on. However it ends (done, failed, aborted, or closed early by its consumer), every segment
 *   stream it opened is closed.
 * Errors of the segments' streams propagate.
 */
export async function* replayLines(
  segments: readonly ReplaySegment[] | MergeSource[],
  format: ReplayFormat = 'ndjson',
  options: ReplayOptions = {},
): AsyncGenerator<string> {
  for await (const lines of replayBatches(segments, format, options)) yield* lines;
}

/**
 * `replayLines` as text chunks of many complete lines each (up to ~1,000): the form the CLI and the
 * server stream, one write per chunk instead of one per event. Same arguments and bytes as `replayLines`.
 */
export async function* replayChunks(
  segments: readonly ReplaySegment[] | MergeSource[],
  format: ReplayFormat = 'ndjson',
  options: ReplayOptions = {},
): AsyncGenerator<string> {
  for await (const lines of replayBatches(segments, format, options)) yield lines.join('');
}

async function* replayBatches(
  segments: readonly ReplaySegment[] | MergeSource[],
  format: ReplayFormat,
  options: ReplayOptions,
): AsyncGenerator<string[]> {
  let index: CorrectionIndex;
  let merged: AsyncIterable<MergedEvent[]> | Iterable<MergedEvent[]>;
  if (isReopenable(segments)) {
    index = options.corrections ?? (await CorrectionIndex.scan(segments, options.signal));
    // NDJSON needs only the envelope and the raw line: let the parsed trees die young.
    const sources = segmentSources(segments, { retainParsed: format !== 'ndjson', signal: options.signal });
    merged = mergeSegmentBatches(sources, options);
  } else {
    const all: MergedEvent[] = [];
    for await (const batch of mergeSegmentBatches(segments as MergeSource[], options)) all.push(...batch);
    index = CorrectionIndex.fromEvents(
      all.filter((m) => m.event.type === 'correction').map((m) => decodeEvent(m.event)),
    );
    merged = [all];
  }
  const agents = new Map<string, string>();
  const anyCorrections = index.size > 0;
  const attributor = format === 'text' ? new Attributor() : null;
  /** message id → the person who wrote it (text only; memory grows with the messages, not the events) */
  const authors = new Map<string, string>();
  for await (const batch of merged) {
    if (format === 'ndjson' && !anyCorrections) {
      // The common case: lines as written, one string per batch.
      let text = '';
      for (let i = 0; i < batch.length; i++) text += `${batch[i]!.event.raw}\n`;
      yield [text];
      continue;
    }
    const out: string[] = new Array(batch.length);
    for (let i = 0; i < batch.length; i++) {
      const event = batch[i]!.event;
      let corrected: { line: string; effective: EffectiveEvent } | null = null;
      if (anyCorrections) {
        if (event.type === 'correction') index.passed(event.id);
        corrected = index.targets(event.id) ? correctedLine(event, index, format, agents) : null;
      }
      if (format === 'ndjson') {
        out[i] = corrected?.line ?? `${event.raw}\n`;
        continue;
      }
      // Text shows who each action and output is attributed to (DESIGN §3, lib/log/attribution), from
      // the effective event: a corrected caused_by counts. People are named by their messages' user_id.
      if (event.type === 'message' && typeof event.obj.user_id === 'string')
        authors.set(event.id, event.obj.user_id);
      const a = attributor!.push(corrected?.effective ?? event);
      let text = corrected === null ? formatTextLine(event, agents) : corrected.line.slice(0, -1);
      // A correction whose target already passed and refused it is shown as such, not as if applied.
      const refused = event.type === 'correction' ? index.problemOf(event.id) : undefined;
      if (refused) text += ` [not applied: ${refused.code}]`;
      out[i] = a ? `${text} ${attributionMark(a, authors)}\n` : `${text}\n`;
    }
    yield out;
  }
  if (options.onCorrectionProblem) for (const p of index.problems()) options.onCorrectionProblem(p);
}

/**
 * How the text replay shows an attribution: `[← priya m_…: temporal 0.7]`, `[← nobody: recorded_no_cause]`,
 * `[← contested: priya m_… | sam m_…; 0.35 each]`. `authors` names the person of each message id it knows.
 */
export function attributionMark(a: Attribution, authors: ReadonlyMap<string, string> = new Map()): string {
  const conf = Number(a.confidence.toFixed(2));
  const ids = (m: readonly string[], sep: string) => m.map(escapeControl).join(sep);
  if (a.basis === 'contested' && a.candidates) {
    const who = a.candidates.map((c) => `${escapeControl(c.user_id)} ${ids(c.message_ids, ',')}`).join(' | ');
    return `[← contested: ${who}; ${conf} each]`;
  }
  if (a.message_ids.length === 0) return `[← nobody: ${a.basis}]`;
  const people = [
    ...new Set(a.message_ids.map((m) => authors.get(m)).filter((p): p is string => p !== undefined)),
  ];
  const who = people.length > 0 ? `${ids(people, ', ')} ` : '';
  return `[← ${who}${ids(a.message_ids, ', ')}: ${a.basis} ${conf}]`;
}

/**
 * The replay line of an event some correction names, with the effective event (for attribution), or
 * null when no correction changed it.
 */
function correctedLine(
  event: RecordedEvent,
  index: CorrectionIndex,
  format: ReplayFormat,
  agents: Map<string, string>,
): { line: string; effective: EffectiveEvent } | null {
  const eff = index.apply(decodeEvent(event));
  if (!eff.corrected) return null;
  const line = effectiveLine(eff);
  if (format === 'ndjson') return { line: `${line}\n`, effective: eff };
  const shown: RecordedEvent = { ...event, obj: JSON.parse(line) as Record<string, unknown> };
  const marks = eff.corrected
    .map(
      (c) =>
        `${escapeControl(c.field)} by ${escapeControl(c.by)}${c.reason ? ` (${oneLine(c.reason)})` : ''}`,
    )
    .join(', ');
  return { line: `${formatTextLine(shown, agents)} [corrected: ${marks}]\n`, effective: eff };
}

/**
 * The raw replay: every complete line as written, quarantined ones included (DESIGN §5), in merged order,
 * each followed by `\n`, corrections not applied. Bytes, because a quarantined line may not be valid UTF-8.
 */
export async function* replayRaw(
  segments: readonly ReplaySegment[] | MergeSource[],
  options: MergeOptions = {},
): AsyncGenerator<Uint8Array> {
  const NL = Buffer.from('\n');
  const sources = isReopenable(segments)
    ? segmentSources(segments, { signal: options.signal })
    : (segments as MergeSource[]);
  // One buffer per merged batch, not per line: a line each was most of a raw replay's garbage.
  for await (const batch of mergeSegmentBatchesKeepingProblems(sources, options)) {
    const parts: Uint8Array[] = [];
    let text = '';
    for (const item of batch) {
      if ('event' in item) {
        text += `${item.event.raw}\n`;
        continue;
      }
      if (text) parts.push(Buffer.from(text, 'utf8'));
      text = '';
      parts.push(item.problem.bytes, NL);
    }
    if (text) parts.push(Buffer.from(text, 'utf8'));
    yield parts.length === 1 ? parts[0]! : Buffer.concat(parts);
  }
}

const MAX_WHAT = 240;

/**
 * One readable line for an event: `ts  who  type  what`, with no newline or other control character in
 * it (see the module's doc). `agents` maps writer ids to the agent named in their `writer.start` (filled
 * as events pass), so an agent's events are shown under its name.
 */
export function formatTextLine(ev: RecordedEvent, agents: Map<string, string>): string {
  const o = ev.obj;
  if (ev.type === 'writer.start') {
    const meta = (o.meta ?? {}) as Record<string, unknown>;
    if (typeof meta.agent === 'string' && meta.agent) agents.set(ev.w, meta.agent);
  }
  const who = escapeControl(whoOf(ev, agents));
  const what = oneLine(whatOf(ev));
  return `${escapeControl(ev.ts)}  ${who.padEnd(14)}  ${escapeControl(ev.type).padEnd(19)}  ${what}`.trimEnd();
}

function whoOf(ev: RecordedEvent, agents: Map<string, string>): string {
  const o = ev.obj;
  switch (ev.type) {
    case 'message':
    case 'participant.join':
    case 'participant.leave':
      return str(o.user_id) || '?';
    case 'note':
      return str(o.author) || agents.get(ev.w) || ev.w;
    default:
      return agents.get(ev.w) ?? ev.w;
  }
}

/** What an event says. Ids and names go through `name` (one line, `\n`); free text is left to `oneLine`. */
function whatOf(ev: RecordedEvent): string {
  const o = ev.obj;
  switch (ev.type) {
    case 'writer.start': {
      const m = (o.meta ?? {}) as Record<string, unknown>;
      return `writer ${name(ev.w)} starts (agent ${show(m.agent)}, app ${show(m.app)}, host ${show(m.host)}, pid ${show(m.pid)})`;
    }
    case 'participant.join':
      return `joins${o.display_name ? ` as ${name(o.display_name)}` : ''}`;
    case 'participant.leave':
      return 'leaves';
    case 'message':
      return `${name(ev.id)}: ${str(o.text)}`;
    case 'turn.start': {
      const ctx = o.context_message_ids;
      const c = Array.isArray(ctx)
        ? ctx.length
          ? `context ${ctx.map(name).join(', ')}`
          : 'context: none (recorded)'
        : 'no context recorded';
      return `${name(o.turn_id) || name(ev.id)} begins; ${c}`;
    }
    case 'agent.action':
      return `${name(ev.id)} ${name(o.tool)} ${compactJson(o.input)}`;
    case 'agent.action_result': {
      const exit = o.exit_code === null || o.exit_code === undefined ? '' : ` exit ${show(o.exit_code)}`;
      const body = o.error ? str(o.error) : compactJson(o.output);
      return `${name(o.action_id)} ${name(o.status)}${exit}: ${body}`;
    }
    case 'agent.output':
      return `${str(o.text)}`;
    case 'turn.end':
      return `${name(o.turn_id)} ends: ${name(o.status)}`;
    case 'note':
      return str(o.text);
    case 'correction':
      return `${name(o.target_id)}.${name(o.field)} := ${compactJson(o.value)} (${str(o.reason)})`;
    case 'writer.end':
      return `writer ${name(ev.w)} ends${o.reason ? `: ${str(o.reason)}` : ''}`;
    default: {
      const rest: Record<string, unknown> = {};
      for (const [k, v] of Object.entries(o)) {
        if (!['v', 'sid', 'w', 'seq', 'id', 'ts', 'mono', 'type'].includes(k)) rest[k] = v;
      }
      return `(unknown type) ${compactJson(rest)}`;
    }
  }
}

function str(v: unknown): string {
  return typeof v === 'string' ? v : v === null || v === undefined ? '' : JSON.stringify(v);
}

/** An id or a name: always one line, a newline shown as `\n`. */
function name(v: unknown): string {
  return escapeControl(str(v));
}

function show(v: unknown): string {
  return v === null || v === undefined ? '-' : escapeControl(String(v));
}

function compactJson(v: unknown): string {
  if (v === null || v === undefined) return '';
  return typeof v === 'string' ? v : JSON.stringify(v);
}

/**
 * Free text on one line: newlines shown as ` ⏎ `, tabs as spaces, every other control, DEL, C1 and bidi
 * character escaped (`escapeControl`), cut to a screen line.
 */
function oneLine(s: string): string {
  const flat = escapeControl(s.replace(/\r?\n/g, ' ⏎ ').replace(/\t/g, ' '));
  return flat.length > MAX_WHAT ? `${flat.slice(0, MAX_WHAT - 1)}…` : flat;
}
