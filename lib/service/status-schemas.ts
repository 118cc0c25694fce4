/**
 * The status report (seed 000 "Agent status and declared events", DESIGN §7 limits): a state, a one-line
 * note, and up to four declared events with up to four evidence items each.
 */
import { z } from 'zod';
import { Instant, SessionId } from './id-schemas.js';

export const STATES = ['working', 'blocked', 'needs_review', 'done'] as const;
export const EVENT_KINDS = ['plan', 'decision', 'assumption', 'evidence', 'blocked', 'lesson'] as const;
export const EVIDENCE_TYPES = ['command', 'test', 'commit', 'file'] as const;
const RESULTS = [
  'passed',
  'failed',
  'completed',
  'interrupted',
  'cancelled',
  'present',
  'created',
  'modified',
  'deleted',
] as const;

export const MAX_NOTE_CHARS = 240;
export const MAX_REF_CHARS = 160;

/** One evidence item: a reference (no arguments, no output) and its result. */
export const Evidence = z.strictObject({
  type: z.enum(EVIDENCE_TYPES),
  ref: z
    .string()
    .min(1)
    .max(MAX_REF_CHARS, `a reference is at most ${MAX_REF_CHARS} characters`)
    .refine(
      (r) => !/[\r\n]/.test(r),
      'a reference is one line: a tool-call id, name, commit hash or relative path',
    )
    .refine(
      (r) => !r.startsWith('/') && !/^[A-Za-z]:[\\/]/.test(r) && !r.startsWith('~'),
      'a file reference is a relative path',
    )
    .describe('a tool-call id, name, commit hash or relative path; one line, never arguments or output'),
  result: z
    .union([z.enum(RESULTS), z.string().regex(/^exit:-?\d{1,5}$/, 'exit:N')])
    .describe('what came of it; exit:N for an exit status'),
});
export type Evidence = z.infer<typeof Evidence>;

/** One declared event. */
export const DeclaredEvent = z.strictObject({
  kind: z.enum(EVENT_KINDS),
  evidence: z.array(Evidence).max(4, 'an event has at most four evidence items').default([]),
});
export type DeclaredEvent = z.infer<typeof DeclaredEvent>;

/** `POST /v1/sessions/{sid}/status` body and `hansard session report`. */
export const StatusReport = z
  .strictObject({
    state: z.enum(STATES),
    note: z
      .string()
      .max(MAX_NOTE_CHARS, `the note is at most ${MAX_NOTE_CHARS} characters`)
      .refine((n) => !/[\r\n]/.test(n), 'the note is one line')
      .default('')
      .describe('one line for a person'),
    events: z.array(DeclaredEvent).max(4, 'a report has at most four events').default([]),
  })
  .meta({ id: 'StatusReport' });
export type StatusReport = z.infer<typeof StatusReport>;

/** `POST` and `GET /v1/sessions/{sid}/status`: a session's latest report (`reportStatus`, `getStatus`). */
export const StatusView = z
  .object({
    sid: SessionId,
    state: z.enum(STATES),
    note: z.string(),
    events: z.array(DeclaredEvent).describe('the declared events as reported (seed 000)'),
    reported_at: Instant,
    writers: z
      .number()
      .int()
      .nonnegative()
      .describe(
        'how many writers of the session have uploaded segments so far; 0 for a report that came first, or for a mistyped session id',
      ),
  })
  .meta({
    id: 'StatusView',
    description: "a session's latest status report: an agent's declaration, not proof",
  });
export type StatusView = z.infer<typeof StatusView>;
