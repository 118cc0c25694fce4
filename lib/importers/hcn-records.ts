/**
 * The records of an hcn stream (seed 002, docs/spec/002_*.txt "Event schema", "Session machine surface",
 * "Run lifecycle observer"; hcn's docs/observer.md), read at the boundary with zod: which format a stream
 * is (decided by its first JSON object), each known record's shape, and the options and result types of
 * lib/importers/hcn.ts's `HcnRecorder`. Pure; nothing here writes.
 *
 * - `hcn-json`: `hcn run --json` / `hcn session --json` NDJSON, one `{"kind": …}` event a line (a session
 *   adds `session`, `turn`, `disposition`, `closed` framing around the run events).
 * - `observer`: `hcn-observer/1`, one `{"record": "started" | "event" | "skipped", …}` a line; an `event`
 *   record wraps one run event exactly as `--json` prints it, the run's `done` included.
 * - `claude-stream-json`, `codex-exec-json`: the harnesses' own output that hcn normalizes (its test
 *   fixtures `hcn-harnesses-*`): recognized so the import can say what they are, not recorded.
 */
import { z } from 'zod';
import type { ImportProblem } from './claude-code-records.js';
import { isObj, type Obj } from './json-line.js';
import type { ImportKind, MappingCounts } from './mapping.js';

/** What a stream is, from its first JSON object (`detectFormat`). */
export type HcnFormat = 'hcn-json' | 'observer' | 'claude-stream-json' | 'codex-exec-json' | 'unknown';

/** The stream's format from its first JSON object (`obj`). */
export function detectFormat(obj: Obj): HcnFormat {
  if (typeof obj.record === 'string') return 'observer';
  if (typeof obj.kind === 'string') return 'hcn-json';
  const type = typeof obj.type === 'string' ? obj.type : '';
  if (['system', 'assistant', 'user', 'stream_event', 'result', 'rate_limit_event'].includes(type))
    return 'claude-stream-json';
  if (type.startsWith('thread.') || type.startsWith('turn.') || type.startsWith('item.'))
    return 'codex-exec-json';
  return 'unknown';
}

const optStr = z.string().nullish();
const optNum = z.number().nullish();

/** The run events hansard maps (seed 002 "Event schema"); other fields are kept as read. */
export const HcnEvent = z.discriminatedUnion('kind', [
  z.looseObject({ kind: z.literal('identity'), sessionId: z.string(), authority: optStr }),
  z.looseObject({ kind: z.literal('token'), text: z.string() }),
  z.looseObject({ kind: z.literal('progress'), label: optStr }),
  z.looseObject({ kind: z.literal('context'), usedPct: optNum }),
  z.looseObject({ kind: z.literal('message'), role: z.string(), text: z.string() }),
  z.looseObject({ kind: z.literal('tool'), name: z.string(), input: z.unknown(), callId: optStr }),
  z.looseObject({
    kind: z.literal('tool-result'),
    name: optStr,
    callId: optStr,
    result: z.unknown(),
    isError: z.boolean().nullish(),
  }),
  z.looseObject({ kind: z.literal('usage'), scope: z.string() }),
  z.looseObject({
    kind: z.literal('compaction'),
    state: z.string(),
    trigger: optStr,
    tokensBefore: optNum,
    tokensAfter: optNum,
    durationMs: optNum,
  }),
  z.looseObject({ kind: z.literal('limit'), code: z.string(), message: z.string() }),
  z.looseObject({ kind: z.literal('warning'), message: z.string() }),
  z.looseObject({ kind: z.literal('error'), message: z.string(), terminal: z.boolean().nullish() }),
  z.looseObject({
    kind: z.literal('failure'),
    class: z.string(),
    retryable: z.boolean().nullish(),
    message: optStr,
  }),
  z.looseObject({
    kind: z.literal('question'),
    question: z.string(),
    options: z.array(z.unknown()).nullish(),
  }),
  z.looseObject({
    kind: z.literal('done'),
    exitCode: z.number().int().nullable(),
    cause: z.string(),
    completion: optStr,
    denialCount: optNum,
  }),
  // `hcn session --json` framing (seed 002 "Session machine surface")
  z.looseObject({ kind: z.literal('session'), sessionId: optStr, harness: optStr }),
  z.looseObject({ kind: z.literal('turn'), turnId: optStr }),
  z.looseObject({ kind: z.literal('disposition'), disposition: z.string() }),
  z.looseObject({ kind: z.literal('closed'), exitCode: z.number().int().nullable(), cause: z.string() }),
]);
export type HcnEvent = z.infer<typeof HcnEvent>;

/** The `kind`s `HcnEvent` knows; any other kind is an unknown record (kept, never a crash). */
export const KNOWN_KINDS: ReadonlySet<string> = new Set(HcnEvent.options.map((o) => o.shape.kind.value));

/** The observer's records (hcn docs/observer.md). */
export const ObserverRecord = z.discriminatedUnion('record', [
  z.looseObject({
    record: z.literal('started'),
    schema: optStr,
    invocationId: optStr,
    at: optStr,
    command: optStr,
    harness: optStr,
    cwd: optStr,
    hcnVersion: optStr,
  }),
  z.looseObject({ record: z.literal('event'), at: optStr, event: z.record(z.string(), z.unknown()) }),
  z.looseObject({ record: z.literal('skipped'), at: optStr, reason: optStr }),
]);
export type ObserverRecord = z.infer<typeof ObserverRecord>;
export type StartedRecord = Extract<ObserverRecord, { record: 'started' }>;

/** The first zod issue as a sentence (`path: message`). */
export function firstIssue(err: z.ZodError): string {
  const i = err.issues[0];
  if (!i) return 'invalid';
  return `${i.path.length ? `${i.path.join('.')}: ` : ''}${i.message}`;
}

/** Done causes (seed 002 "Done causes") → the v3 turn status the turn ends with. */
export function turnStatusFor(
  cause: string,
  exitCode: number | null,
): 'completed' | 'failed' | 'interrupted' | 'awaiting_input' {
  switch (cause) {
    case 'clean':
      return 'completed';
    case 'awaiting-input':
      return 'awaiting_input';
    case 'killed':
      return 'interrupted';
    case 'limit':
    case 'crash':
    case 'stall':
    case 'failed':
      return 'failed';
    default:
      return exitCode === 0 ? 'completed' : 'failed';
  }
}

/** A tool result's exit code when the native result carries one (`exitCode` / `exit_code`), else null. */
export function resultExitCode(result: unknown): number | null {
  if (!isObj(result)) return null;
  const c = result.exitCode ?? result.exit_code;
  return Number.isInteger(c) ? (c as number) : null;
}

/** Author of the notes that hold what hcn reported (identity, usage, failures, skipped records). */
export const HCN_NOTE_AUTHOR = 'hcn';

/** What an `HcnRecorder` is told. */
export interface HcnRecorderOptions {
  /** where the session directory is created (`openSession`'s parent folder) */
  outDir: string;
  /** `writer.start` `meta.app`: `hansard observe`, `hansard run`, `hansard import hcn` */
  app: string;
  /** `meta.agent`; default: the observer's `started.harness`, else `hcn` */
  agent?: string;
  /** the person's prompt (`hansard run`): a `message` that opens the run's turn */
  prompt?: string | null;
  /** the prompt's `user_id`; default `user` */
  userId?: string;
  /** more `writer.start` `meta` keys (the hcn argv of `hansard run`) */
  meta?: Record<string, unknown>;
  /**
   * the harness hcn runs (`hansard run HARNESS`), named in each usage note's `extra.harness` until the
   * stream names one itself (an observer `started`, a session's `session` record)
   */
  harness?: string;
}

/**
 * The fields of an hcn `usage` event a `token_usage` note keeps (seed 002 "Tool results and usage"), each
 * only when the event has it: a figure hcn did not report is unknown, not 0.
 */
export const USAGE_FIELDS = [
  'scope',
  'model',
  'inputTokens',
  'outputTokens',
  'cacheReadTokens',
  'cacheWriteTokens',
  'reasoningTokens',
  'totalTokens',
  'costUsd',
  'inputIncludesCache',
  'callId',
] as const;

/**
 * The `extra` of an hcn `usage` event's note (issue 27; contract lib/log/format/usage-note.ts,
 * `usage_source: 'hcn'`): `hcn_kind`, `usage_source`, each of `USAGE_FIELDS` the event has (as it has
 * it, never summed or filled in), and `harness` when known.
 */
export function hcnUsageExtra(ev: Obj, harness: string | null): Record<string, unknown> {
  const extra: Record<string, unknown> = { hcn_kind: 'usage', usage_source: 'hcn' };
  for (const k of USAGE_FIELDS) if (ev[k] !== undefined) extra[k] = ev[k];
  if (harness !== null) extra.harness = harness;
  return extra;
}

/** What a stream was recorded as. */
export interface HcnRecordResult {
  sid: string;
  w: string;
  dir: string;
  path: string;
  format: HcnFormat;
  counts: MappingCounts & {
    /** `skipped` records of an observer stream, each a `coverage_gap` note */
    coverageGaps: number;
    /** records of a kind this build does not know and lines that are not JSON: `unknown_record` notes */
    unknown: number;
    /** `token_usage` notes: one per `usage` event (issue 27) */
    tokenUsage: number;
    /** subagent writers: hcn reports none (always 0; stated so the counts read like the others) */
    subagentWriters: number;
    /** records read and deliberately not written, by kind (`token` deltas repeat the `message`) */
    skipped: Record<string, number>;
  };
  /** the last `done` (or session `closed`): hcn's exit code and cause; null when the stream had none */
  done: { exitCode: number | null; cause: string } | null;
  /** the stream ended with a turn open (no `done`): that turn ended `interrupted` */
  interrupted: boolean;
  /** lines that could not be taken as they are (each still recorded, as a note), 1-based */
  problems: ImportProblem[];
}

/** Thrown by `line` for a stream that is the harness's own output, not hcn's (nothing is written). */
export class HcnFormatError extends Error {
  override name = 'HcnFormatError';
  constructor(
    readonly format: HcnFormat,
    message: string,
  ) {
    super(message);
  }
}

export const NATIVE: Partial<Record<HcnFormat, string>> = {
  'claude-stream-json': "Claude Code's own --output-format stream-json output",
  'codex-exec-json': "Codex's own `codex exec --json` output",
};

/** Kinds read and not written: `token` deltas (the whole `message` follows), progress, context pings. */
export const DROPPED = new Set(['token', 'progress', 'context']);

/** hcn event kinds kept as a marked note, and the `import_kind` each gets. */
export const NOTE_KINDS: Record<string, ImportKind> = {
  identity: 'meta',
  session: 'meta',
  disposition: 'meta',
  usage: 'token_usage',
  limit: 'limit',
  warning: 'warning',
  error: 'error',
  failure: 'failure',
  question: 'question',
};
