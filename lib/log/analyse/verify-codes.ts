/**
 * The codes verify reports, each with its severity and what it means (docs/verify.md prints the same
 * table; a test keeps the two equal). `hansard verify --codes` lists them.
 */
/** How bad a finding is: an `error` makes the session not ok (and `hansard verify` exit 1). */
export type Severity = 'error' | 'warning' | 'info';

export const VERIFY_CODE_INFO = {
  missing_writer_start: {
    severity: 'error',
    meaning: 'the first event of a segment is not a `writer.start`',
  },
  writer_id_mismatch: {
    severity: 'error',
    meaning: "an event's `w`, or `writer.start`'s `id`/`writer_id`, is not the segment's writer",
  },
  sid_mismatch: { severity: 'error', meaning: "an event's `sid` is not the session's" },
  seq_gap: {
    severity: 'error',
    meaning: "a writer's seq does not start at 1 or skips numbers: events are missing",
  },
  seq_duplicate: { severity: 'error', meaning: 'a seq repeats or goes back' },
  mono_backwards: {
    severity: 'warning',
    meaning: "a writer's monotonic clock went back (a writer reopened in a new process restarts it)",
  },
  ts_backwards: {
    severity: 'warning',
    meaning: "a writer's wall clock went back; its events keep their order in the merge",
  },
  ts_no_timezone: { severity: 'warning', meaning: 'a ts without an offset, read as UTC' },
  ts_invalid: { severity: 'error', meaning: 'a ts that is not an RFC 3339 timestamp' },
  event_after_writer_end: { severity: 'error', meaning: "an event follows its writer's `writer.end`" },
  segment_open: {
    severity: 'info',
    meaning: 'a segment has no `writer.end` yet (its writer may still be running)',
  },
  truncated_line: {
    severity: 'error',
    meaning:
      'a torn line in the middle of a segment (a crash mid-write); only a warning for a last line with no newline yet',
  },
  malformed_line: {
    severity: 'error',
    meaning: 'a line that is not a JSON object with a complete envelope, or not valid UTF-8',
  },
  duplicate_id: { severity: 'error', meaning: 'two events share an id' },
  dangling_reference: {
    severity: 'warning',
    meaning:
      'a `caused_by`, `context_message_ids`, `action_id`, `turn_id` or correction target names no event',
  },
  empty_reference: {
    severity: 'warning',
    meaning: 'an `action_id` or `turn_id` that is empty: the event names nothing it answers or belongs to',
  },
  correction_target_missing: {
    severity: 'warning',
    meaning: "a correction's target is not in the session: it changes nothing",
  },
  correction_forbidden_field: {
    severity: 'warning',
    meaning: 'a correction of an envelope field, `type`, `truncated` or an extra field: it changes nothing',
  },
  correction_invalid_value: {
    severity: 'warning',
    meaning: 'a correction whose value the field cannot hold (a number for a status): it changes nothing',
  },
  unknown_version: { severity: 'warning', meaning: 'an event of a format version this reader does not know' },
  causality_skew: {
    severity: 'warning',
    meaning: "an event is caused by (or its turn's context names) an event stamped later",
  },
  invalid_fields: {
    severity: 'warning',
    meaning: 'a known type whose fields have the wrong types: kept whole as an unknown event',
  },
  data_loss: {
    severity: 'error',
    meaning:
      "(`GET \u2026/verify` only) the server's store holds less of the segment than it acknowledged, or its last byte is not the newline every acknowledged chunk ends with (a torn tail): `range` is `{start, end}`, the bytes gone; the segment is checked up to `start` ([operations](operations.md#data_loss))",
  },
  chunk_digest_mismatch: {
    severity: 'error',
    meaning:
      "(`GET \u2026/verify` only) a stored chunk's bytes changed on disk: their SHA-256 differs from the one the server acknowledged them with; `range` is the chunk's `{start, end}` ([operations](operations.md#data_loss))",
  },
  control_characters: {
    severity: 'warning',
    meaning:
      "an id or a name (`sid`, `w`, `id`, `ts`, `type`, a `user_id`, `display_name`, `author`, `meta.agent`/`app`/`host`, a `tool`, a turn, action or message id, a correction's `field`) holds a control character (a newline, an escape), DEL, a C1 control or a bidi override/mark (U+202A\u2013U+202E, U+2066\u2013U+2069, U+200E, U+200F, U+061C, U+2028, U+2029) or another invisible character (zero-width U+200B\u2013U+200D, U+2060, U+FEFF, the soft hyphen U+00AD, other format characters, Hangul fillers, variation selectors, tag characters: whatever renders as nothing); the text replay, inspect and the board show it escaped (`\\n`, `\\x1b`, `\\u202e`)",
  },
} as const satisfies Record<string, { severity: Severity; meaning: string }>;
