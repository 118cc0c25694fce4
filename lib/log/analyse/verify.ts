/**
 * verify: every rule of the v3 format checked over a whole session, each problem a named code, never an
 * exception (seed 001 "replay/verify/inspect", DESIGN §3, issue 3). Problems are
 * `{severity, code, w, seq, line, message}`; the session is `ok` when none has severity `error`.
 *
 * Codes and severities (docs/verify.md lists them with their meaning):
 * - error: missing_writer_start, writer_id_mismatch, sid_mismatch, seq_gap, seq_duplicate, ts_invalid,
 *   event_after_writer_end, truncated_line (in the middle of a segment), malformed_line, duplicate_id,
 *   data_loss (the API's verify only: the store lost acknowledged bytes or their tail is torn; found by
 *   `missingBytes` and `tornTail`), chunk_digest_mismatch (the API's verify only: a chunk's bytes differ
 *   from the SHA-256 acknowledged; lib/service/analysis/chunk-digests.ts)
 * - warning: mono_backwards, ts_backwards, ts_no_timezone, dangling_reference, empty_reference,
 *   unknown_version,
 *   causality_skew, invalid_fields, control_characters, truncated_line (a last line still being written)
 * - info: segment_open (no writer.end yet)
 * Correction problems (correction_target_missing, correction_forbidden_field, correction_invalid_value)
 * come from the session's `CorrectionIndex` when the caller passes one (see `verifySegments`).
 * Messages quote what the events hold through `escapeControl`, so a report printed to a terminal is as
 * safe as the text replay (issue 8.4).
 */
import { decodeEvent, type LineProblem, type RecordedEvent } from '../format/codec.js';
import { escapeControl, hasControl } from '../format/escape.js';
import { FORMAT_VERSION, isKnownType } from '../format/events.js';
import { cutText } from '../format/text-cut.js';
import { parseTs } from '../format/time.js';
import { type MergeSource, mergeSegments } from '../read/merge.js';
import { CorrectionIndex } from '../replay/corrections.js';
import { type ReplaySegment, segmentSources } from '../replay/replay.js';
import { type Severity, VERIFY_CODE_INFO } from './verify-codes.js';

export type { Severity };

/** Each code's severity (lib/log/analyse/verify-codes.ts has their meanings). */
export const VERIFY_CODES = Object.fromEntries(
  Object.entries(VERIFY_CODE_INFO).map(([code, info]) => [code, info.severity]),
) as { readonly [C in keyof typeof VERIFY_CODE_INFO]: (typeof VERIFY_CODE_INFO)[C]['severity'] };

export type VerifyCode = keyof typeof VERIFY_CODES;

/** One finding. `seq` is null for a line that is not an event; `line` is the 1-based line in its segment. */
export interface Problem {
  severity: Severity;
  code: VerifyCode;
  w: string;
  seq: number | null;
  line: number | null;
  message: string;
  /** `data_loss`: the byte range of the segment its store no longer holds; `chunk_digest_mismatch`: the chunk's */
  range?: { start: number; end: number };
}

export interface VerifyReport {
  ok: boolean;
  problems: Problem[];
  /** counts by severity */
  summary: { errors: number; warnings: number; infos: number; events: number; writers: number };
}

interface WriterState {
  w: string;
  started: boolean;
  ended: boolean;
  lastSeq: number | null;
  lastMono: number | null;
  lastTs: number | null;
}

/** Reference fields checked for dangling ids, per type. */
const REFERENCE_FIELDS: Record<string, string[]> = {
  'turn.start': ['context_message_ids'],
  'agent.action': ['caused_by', 'turn_id'],
  'agent.output': ['caused_by', 'turn_id'],
  'agent.action_result': ['action_id'],
  'turn.end': ['turn_id'],
  correction: ['target_id'],
};

/**
 * Ids and names, per type, that a person reads in the text replay, on the board and in inspect: a
 * control, DEL, C1, bidi or zero-width character in one is shown escaped there and reported as `control_characters`
 * (free text such as a message's text may hold newlines and terminal colours: it is only escaped).
 * `meta.agent` stands for the field `agent` of `meta`.
 */
const NAME_FIELDS: Record<string, string[]> = {
  'writer.start': ['writer_id', 'meta.agent', 'meta.app', 'meta.host', 'meta.hansard_version'],
  'participant.join': ['user_id', 'display_name'],
  'participant.leave': ['user_id'],
  message: ['user_id'],
  'turn.start': ['turn_id', 'context_message_ids'],
  'agent.action': ['turn_id', 'tool', 'caused_by'],
  'agent.action_result': ['action_id', 'status'],
  'agent.output': ['turn_id', 'caused_by'],
  'turn.end': ['turn_id', 'status'],
  note: ['author'],
  correction: ['target_id', 'field'],
};
const ENVELOPE_NAMES = ['sid', 'w', 'id', 'ts', 'type'] as const;

/** The fields of `ev` that are ids or names and hold a character `escapeControl` rewrites, with their value. */
function controlFields(ev: RecordedEvent): Array<{ field: string; value: string }> {
  const found: Array<{ field: string; value: string }> = [];
  const check = (field: string, v: unknown) => {
    if (typeof v === 'string' && hasControl(v)) found.push({ field, value: v });
    else if (Array.isArray(v)) {
      const bad = v.find((x): x is string => typeof x === 'string' && hasControl(x));
      if (bad !== undefined) found.push({ field, value: bad });
    }
  };
  for (const f of ENVELOPE_NAMES) check(f, ev[f]);
  for (const path of NAME_FIELDS[ev.type] ?? []) {
    const [a, b] = path.split('.') as [string, string | undefined];
    const v = ev.obj[a];
    check(
      path,
      b === undefined ? v : v && typeof v === 'object' ? (v as Record<string, unknown>)[b] : undefined,
    );
  }
  return found;
}

/**
 * Verifies a session's segments. `sid` is the expected session id (the directory's or the path's); when
 * absent, the first event's sid is taken. Never throws on content; I/O errors of a source propagate.
 */
export async function verifySession(
  sources: MergeSource[],
  options: { sid?: string; extraProblems?: Problem[]; corrections?: CorrectionIndex } = {},
): Promise<VerifyReport> {
  const corrections = options.corrections;
  const problems: Problem[] = [];
  const add = (code: VerifyCode, w: string, seq: number | null, line: number | null, message: string) =>
    problems.push({ severity: VERIFY_CODES[code], code, w, seq, line, message });
  const writers = new Map<string, WriterState>();
  const ids = new Map<string, number | null>(); // id → ts (µs)
  // Only what the reference checks need, not the events: memory stays small per event.
  const refs: Array<{ w: string; seq: number; line: number; ts: number | null; field: string; id: string }> =
    [];
  let sid = options.sid ?? null;
  let events = 0;

  const lastLines = new Map<string, number>();
  const lineProblems: Array<{ w: string; p: LineProblem }> = [];
  const onProblem = (w: string, p: LineProblem) => lineProblems.push({ w, p });

  for (const src of sources) {
    writers.set(src.w, {
      w: src.w,
      started: false,
      ended: false,
      lastSeq: null,
      lastMono: null,
      lastTs: null,
    });
  }

  for await (const { event: ev, source } of mergeSegments(sources, { onProblem })) {
    events += 1;
    const st = writers.get(source)!;
    lastLines.set(st.w, Math.max(lastLines.get(st.w) ?? 0, ev.line));
    sid ??= ev.sid;
    const at = (code: VerifyCode, message: string) => add(code, st.w, ev.seq, ev.line, message);

    if (!st.started) {
      st.started = true;
      if (ev.type !== 'writer.start')
        at('missing_writer_start', `the first event of ${st.w} is ${ev.type}, not writer.start`);
    }
    if (ev.type === 'writer.start') {
      const writerId = ev.obj.writer_id;
      if (ev.id !== st.w || (writerId !== undefined && writerId !== st.w)) {
        at(
          'writer_id_mismatch',
          `writer.start names writer ${String(writerId ?? ev.id)} in the segment of ${st.w}`,
        );
      }
    }
    if (ev.w !== st.w) at('writer_id_mismatch', `seq ${ev.seq} says w=${ev.w} in the segment of ${st.w}`);
    if (ev.sid !== sid) at('sid_mismatch', `seq ${ev.seq} says sid=${ev.sid}, the session is ${sid}`);
    if (ev.v !== FORMAT_VERSION)
      at('unknown_version', `seq ${ev.seq} has format version ${ev.v}; this reader knows ${FORMAT_VERSION}`);
    if (st.ended) at('event_after_writer_end', `seq ${ev.seq} (${ev.type}) follows writer.end`);
    if (ev.type === 'writer.end') st.ended = true;

    if (st.lastSeq !== null) {
      if (ev.seq <= st.lastSeq) at('seq_duplicate', `seq ${ev.seq} follows seq ${st.lastSeq}`);
      else if (ev.seq !== st.lastSeq + 1)
        at('seq_gap', `seq jumps from ${st.lastSeq} to ${ev.seq}: ${ev.seq - st.lastSeq - 1} missing`);
    } else if (ev.seq !== 1) {
      at('seq_gap', `the first seq of ${st.w} is ${ev.seq}, not 1`);
    }
    st.lastSeq = st.lastSeq === null ? ev.seq : Math.max(st.lastSeq, ev.seq);

    if (st.lastMono !== null && ev.mono < st.lastMono) {
      at('mono_backwards', `mono goes back from ${st.lastMono} to ${ev.mono}`);
    }
    st.lastMono = ev.mono;

    const parsed = parseTs(ev.ts);
    if (!parsed) at('ts_invalid', `ts ${JSON.stringify(ev.ts)} is not an RFC 3339 timestamp`);
    else {
      if (!parsed.hasZone) at('ts_no_timezone', `ts ${ev.ts} has no offset; read as UTC`);
      if (st.lastTs !== null && parsed.micros < st.lastTs) {
        at('ts_backwards', `ts goes back ${((st.lastTs - parsed.micros) / 1e6).toFixed(6)} s to ${ev.ts}`);
      }
      // Against the previous event, not the running maximum: one finding per step back, not one per event.
      st.lastTs = parsed.micros;
    }

    if (corrections && corrections.size > 0) {
      // Corrections are checked as their targets pass, exactly as the replay applies them.
      if (ev.type === 'correction') corrections.passed(ev.id);
      if (corrections.targets(ev.id)) corrections.apply(decodeEvent(ev));
    }
    if (ids.has(ev.id)) at('duplicate_id', `id ${ev.id} was already used`);
    else ids.set(ev.id, ev.tsMicros);

    if (isKnownType(ev.type)) {
      const decoded = decodeEvent(ev);
      if ('unknown' in decoded)
        at('invalid_fields', `the fields of this ${ev.type} do not have the types the format gives them`);
    }
    for (const { field, value } of controlFields(ev)) {
      const shown = escapeControl(value.length > 80 ? `${cutText(value, 79)}…` : value);
      at(
        'control_characters',
        `${field} "${shown}" holds control, bidi or zero-width characters; replay, inspect and the board show them escaped as here`,
      );
    }
    for (const field of REFERENCE_FIELDS[ev.type] ?? []) {
      const v = ev.obj[field];
      if (typeof v === 'string' && v !== '') refs.push({ ...refOf(ev, st.w), field, id: v });
      else if (v === '' && (field === 'action_id' || field === 'turn_id'))
        at('empty_reference', `${field} is empty: this event names nothing it answers or belongs to`);
      else if (Array.isArray(v))
        for (const id of v) if (typeof id === 'string') refs.push({ ...refOf(ev, st.w), field, id });
    }
  }

  for (const r of refs) {
    if (!ids.has(r.id)) {
      add(
        'dangling_reference',
        r.w,
        r.seq,
        r.line,
        `${r.field} names ${r.id}, which is no event of this session`,
      );
      continue;
    }
    const targetTs = ids.get(r.id);
    const causal = r.field === 'caused_by' || r.field === 'context_message_ids';
    if (causal && targetTs != null && r.ts !== null && targetTs > r.ts) {
      add('causality_skew', r.w, r.seq, r.line, `${r.field} names ${r.id}, stamped after this event`);
    }
  }

  for (const { w, p } of lineProblems) {
    const isTail = p.line >= (lastLines.get(w) ?? 0) && !p.complete;
    if (p.code === 'truncated_line' && isTail) {
      problems.push({
        severity: 'warning',
        code: 'truncated_line',
        w,
        seq: null,
        line: p.line,
        message: `line ${p.line} is incomplete: its writer may still be writing it`,
      });
    } else
      add(
        p.code,
        w,
        null,
        p.line,
        `${p.message}; it is quarantined (kept in raw replay, skipped by the merge)`,
      );
  }
  for (const st of writers.values()) {
    if (st.started && !st.ended) add('segment_open', st.w, null, null, `${st.w} has no writer.end yet`);
  }
  for (const p of corrections?.problems() ?? []) {
    problems.push({ severity: p.severity, code: p.code, w: p.w, seq: p.seq, line: null, message: p.message });
  }
  problems.push(...(options.extraProblems ?? []).map((p) => ({ ...p })));
  for (const p of problems) p.message = escapeControl(p.message);
  problems.sort((a, b) =>
    a.w < b.w
      ? -1
      : a.w > b.w
        ? 1
        : (a.line ?? Number.MAX_SAFE_INTEGER) - (b.line ?? Number.MAX_SAFE_INTEGER),
  );
  const count = (s: Severity) => problems.filter((p) => p.severity === s).length;
  return {
    ok: count('error') === 0,
    problems,
    summary: {
      errors: count('error'),
      warnings: count('warning'),
      infos: count('info'),
      events,
      writers: writers.size,
    },
  };
}

function refOf(ev: RecordedEvent, w: string) {
  return { w, seq: ev.seq, line: ev.line, ts: ev.tsMicros };
}

/**
 * Verifies a session with its corrections checked too (the CLI's `verify DIR`, the API's verify): reads
 * the segments twice, once for the corrections (cheap: only lines that name a correction are parsed)
 * and once for everything else. `extraProblems` join the report (the API's `data_loss`, found by the store).
 */
export async function verifySegments(
  segments: readonly ReplaySegment[],
  sid?: string,
  extraProblems: Problem[] = [],
  /** aborts the reads (an AbortError) when the client goes away */
  signal?: AbortSignal,
): Promise<VerifyReport> {
  const corrections = await CorrectionIndex.scan(segments, signal);
  return verifySession(segmentSources(segments, { signal }), {
    ...(sid ? { sid } : {}),
    corrections,
    extraProblems,
  });
}
