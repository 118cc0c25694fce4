/**
 * The v3 event types: zod schemas of each type's fields, their serialization order, and the TypeScript
 * types the rest of hansard uses. Source: seed 001 (the log format) and DESIGN §3 (the type-field table).
 *
 * Reading is lenient: a missing field reads as its default (`null`, `""`, `[]` as below), and fields a type
 * does not know are kept in `extra`, in the order they were read. `null` and `[]` for `caused_by` and
 * `context_message_ids` are different facts and stay different everywhere.
 */
import { z } from 'zod';

/** The format version our writers emit. */
export const FORMAT_VERSION = 3;

/** Envelope fields, in serialization order. Never correctable. */
export const ENVELOPE_FIELDS = ['v', 'sid', 'w', 'seq', 'id', 'ts', 'mono'] as const;

const str = z.string().default('');
const strOrNull = z.string().nullable().default(null);
const idList = z.array(z.string()).nullable().default(null);
const json = z.unknown().transform((v) => (v === undefined ? null : v));
const redacted = z.array(z.string()).default([]);

/** Where a writer ran; `meta` may carry more keys than these, kept as written. */
export const WriterMeta = z
  .object({
    agent: z.string().nullable().default(null),
    app: z.string().nullable().default(null),
    hansard_version: z.string().nullable().default(null),
    host: z.string().nullable().default(null),
    pid: z.union([z.number(), z.string()]).nullable().default(null),
  })
  .catchall(z.unknown());
export type WriterMeta = z.infer<typeof WriterMeta>;

/**
 * Each known type's fields, in the order the seed's examples write them. `redacted` closes the list of the
 * types that carry free text (DESIGN §3 serialization rule).
 */
export const TYPE_FIELDS = {
  'writer.start': z.object({ writer_id: str, meta: WriterMeta.default(WriterMeta.parse({})), redacted }),
  'participant.join': z.object({ user_id: str, display_name: strOrNull }),
  'participant.leave': z.object({ user_id: str, display_name: strOrNull }),
  message: z.object({ user_id: str, text: str, client_ts: strOrNull, redacted }),
  'turn.start': z.object({ turn_id: str, context_message_ids: idList }),
  'agent.action': z.object({
    turn_id: str,
    tool: str,
    input: json,
    call_id: strOrNull,
    caused_by: idList,
    redacted,
  }),
  'agent.action_result': z.object({
    action_id: str,
    status: z.string().default('ok'),
    output: json,
    error: strOrNull,
    exit_code: z.number().int().nullable().default(null),
    redacted,
  }),
  'agent.output': z.object({ turn_id: str, text: str, caused_by: idList, redacted }),
  'turn.end': z.object({ turn_id: str, status: z.string().default('completed') }),
  note: z.object({ author: str, text: str, redacted }),
  correction: z.object({ target_id: str, field: str, value: json, reason: str, redacted }),
  'writer.end': z.object({ reason: strOrNull }),
} as const;

export type KnownType = keyof typeof TYPE_FIELDS;
export const KNOWN_TYPES = Object.keys(TYPE_FIELDS) as KnownType[];

/** Field names per known type, in serialization order (derived from the schemas above). */
export const FIELD_ORDER: Record<KnownType, readonly string[]> = Object.fromEntries(
  KNOWN_TYPES.map((t) => [t, Object.keys(TYPE_FIELDS[t].shape)]),
) as unknown as Record<KnownType, readonly string[]>;

/** Optional fields written only when present (DESIGN §7: what the writer cut to stay under 1 MiB). */
export const OPTIONAL_TRAILING_FIELDS = ['truncated'] as const;

export function isKnownType(type: string): type is KnownType {
  return Object.hasOwn(TYPE_FIELDS, type);
}

/** The envelope every event carries (seed 001). */
export interface Envelope {
  v: number;
  sid: string;
  w: string;
  seq: number;
  id: string;
  ts: string;
  mono: number;
}

interface Common extends Envelope {
  /** fields this type does not define, in the order they were read */
  extra: Record<string, unknown>;
  /** names of fields the writer cut because they were over 1 MiB (DESIGN §7); absent when nothing was cut */
  truncated?: string[];
}

type FieldsOf<T extends KnownType> = z.output<(typeof TYPE_FIELDS)[T]>;

/** A decoded event of a known type. */
export type KnownEvent = {
  [T in KnownType]: Common & { type: T } & FieldsOf<T>;
}[KnownType];

/** An event whose type this build does not know (or whose fields did not decode): every field is in `extra`. */
export interface UnknownEvent extends Common {
  type: string;
  unknown: true;
}

export type LogEvent = KnownEvent | UnknownEvent;

/** Narrows a decoded event to one known type. */
export function isType<T extends KnownType>(ev: LogEvent, type: T): ev is Extract<KnownEvent, { type: T }> {
  return ev.type === type && !('unknown' in ev);
}

/** Turn statuses (DESIGN §3). */
export const TURN_STATUSES = ['completed', 'failed', 'cancelled', 'interrupted', 'awaiting_input'] as const;
export type TurnStatus = (typeof TURN_STATUSES)[number];

/** Action result statuses (DESIGN §3). */
export const ACTION_STATUSES = ['ok', 'error', 'cancelled'] as const;
export type ActionStatus = (typeof ACTION_STATUSES)[number];
