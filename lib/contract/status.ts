/**
 * The status report (seed 000 "Agent status and declared events", DESIGN §7 limits): a state, a one-line
 * note, and up to four declared events with up to four evidence items each.
 */
import { z } from 'zod';
import { PROVENANCE_KINDS } from '../log/format/provenance.js';
import { foldConfusables, LINE_BREAK, normalText, visibleText } from '../log/format/text-normal.js';
import { brokenRule, CONTENT_RULES, type ContentRule } from './content-rules.js';
import { Count, Instant, SessionId } from './ids.js';

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

export { LINE_BREAK };

/**
 * What only arguments or output put in a reference: an option, quotes, shell operators, expansions, a
 * `key=value` argument (`dd if=a of=b`, `CI=1 make`). Tested on `normalText(ref)` (issue 24 item 4), so
 * `‐‐flag` with U+2010 hyphens and `∣` (U+2223) are what they look like.
 */
const ARGUMENTS_OR_OUTPUT = /(?:^|\s)--?[A-Za-z0-9]|["'`|;&<>$]|(?:^|\s)[A-Za-z_][\w.-]*=/;

/**
 * What a ref or a note may not hold, as a work summary may not (lib/contract/content-rules.ts, issue 24
 * item 4): a credential, an absolute path, a prompt. Not the command rule: a ref names a command, and a
 * note may say which one passed. A note may ask politely (`please look`).
 */
const REF_RULES: readonly ContentRule[] = ['credential', 'prompt', 'absolute_path'];

/** A zod check that adds one issue naming the content rule `text` breaks, if any. */
function contentRules(what: string): (text: string, ctx: z.RefinementCtx) => void {
  return (text, ctx) => {
    const rule = brokenRule(text, REF_RULES, { requests: false });
    if (rule)
      ctx.addIssue({ code: 'custom', message: `${what} was refused: ${CONTENT_RULES[rule]} (rule ${rule})` });
  };
}

/**
 * Why `ref` does not read as what it is, or null: a character that renders as nothing, or a word that mixes
 * ASCII letters with a character Unicode's confusables read as ASCII (`nрm` with a Cyrillic р reads
 * `npm` but names another program: issue 24 attack). Words wholly in another script are as they read.
 */
function lookAlikeIn(ref: string): string | null {
  if (visibleText(ref) !== ref.normalize('NFKC')) return 'it holds a character that renders as nothing';
  for (const word of ref.split(/[\s/.:_-]+/)) {
    if (!/[A-Za-z]/.test(word)) continue;
    for (const ch of word) {
      if (ch.charCodeAt(0) < 0x80) continue;
      const folded = foldConfusables(ch);
      if (/^[\x21-\x7e]+$/.test(folded) && folded !== ch) {
        const cp = `U+${ch.codePointAt(0)!.toString(16).toUpperCase().padStart(4, '0')}`;
        return `${cp} in "${word}" looks like "${folded}"`;
      }
    }
  }
  return null;
}

/** One evidence item: a reference (no arguments, no output) and its result. */
export const Evidence = z.strictObject({
  type: z.enum(EVIDENCE_TYPES),
  ref: z
    .string()
    .min(1)
    .max(MAX_REF_CHARS, `a reference is at most ${MAX_REF_CHARS} characters`)
    .refine(
      (r) => !LINE_BREAK.test(r),
      'a reference is one line: a tool-call id, name, commit hash or relative path',
    )
    .refine((r) => {
      const n = normalText(r);
      return !n.startsWith('/') && !/^[A-Za-z]:[\\/]/.test(n) && !n.startsWith('~');
    }, 'a file reference is a relative path')
    .refine(
      (r) => !ARGUMENTS_OR_OUTPUT.test(normalText(r)),
      'a reference names a tool call, test, command, commit or file, with no arguments or output: no options (-x, --flag), key=value, quotes, pipes, redirections or ; & $ ` (seed 000)',
    )
    .superRefine(contentRules('a reference'))
    .superRefine((r, ctx) => {
      const odd = lookAlikeIn(r);
      if (odd)
        ctx.addIssue({
          code: 'custom',
          message: `a reference is written as it reads: ${odd} (a look-alike ref could name another command than the one it shows)`,
        });
    })
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
      .refine((n) => !LINE_BREAK.test(n), 'the note is one line')
      .superRefine(contentRules('the note'))
      .default('')
      .describe('one line for a person'),
    events: z.array(DeclaredEvent).max(4, 'a report has at most four events').default([]),
  })
  .meta({ id: 'StatusReport' });
export type StatusReport = z.infer<typeof StatusReport>;

/** A writer's provenance (lib/log/format/provenance.ts): observed kinds, `declared`, or `unknown`. */
const ProvenanceView = z
  .enum([...PROVENANCE_KINDS, 'unknown'])
  .describe(
    "who recorded the writer: hook, harness, transcript or library (observed), declared (the agent's own words) or unknown; only observed writers count",
  );

/** What a verdict rests on (issue 24.1, docs/status.md "What a verdict rests on"). */
export const RestsOn = z
  .object({
    w: z.string().describe('the writer of the result (of the action when it has no counted result)'),
    agent: z.string().nullable().describe("that writer's agent"),
    provenance: ProvenanceView,
    token_id: z
      .string()
      .nullable()
      .describe('the token that uploaded that writer (null for an older writer)'),
    token_label: z.string().nullable().describe("that token's label, as the server knew it"),
    action_id: z.string(),
    command: z
      .string()
      .nullable()
      .describe('the command the action ran, as its own writer recorded it; null when its input names none'),
    result_id: z.string().nullable().describe('the result event, or null when the action has none counted'),
    status: z.string().nullable(),
    exit_code: z.int().nullable(),
  })
  .meta({
    id: 'EvidenceRestsOn',
    description: 'the recorded result a verdict rests on, and who recorded it',
  });

/** A correction from another writer of the matched action or its result. */
export const ContestedChange = z
  .object({
    by: z.string().describe('the correction event'),
    w: z.string().describe('the writer that made the correction'),
    provenance: ProvenanceView,
    target_id: z.string().describe('the event it changed'),
    field: z.string(),
    was: z.unknown().describe('the value before it'),
    value: z.unknown().describe('the value it set'),
  })
  .meta({ id: 'EvidenceContested', description: "another writer's correction of a result a claim names" });

/** The verdict on one declared evidence item (lib/log/analyse/evidence.ts, docs/status.md). */
export const EvidenceCheckView = z
  .object({
    verdict: z
      .enum(['supported', 'unsupported', 'unchecked'])
      .describe(
        'supported: a recorded result agrees; unsupported: missing or conflicting; unchecked: file, commit',
      ),
    reason: z.string().describe('why, for a person'),
    action_id: z.string().nullable().describe('the recorded action the ref matched'),
    matched_by: z
      .enum(['id', 'call_id', 'command', 'command_prefix'])
      .nullable()
      .describe('how the ref matched it'),
    exit_code: z.int().nullable().describe("the matched result's exit code"),
    rests_on: RestsOn.nullable().describe(
      'the observed result (or the action, when it has none) the verdict rests on, and who recorded it; null when no observed action matched',
    ),
    contested: z
      .array(ContestedChange)
      .describe(
        'corrections from another writer of the matched action or its result: a contested result supports nothing',
      ),
  })
  .meta({ id: 'EvidenceCheck', description: 'a declared claim checked against the recorded transcript' });

/** A declared event as reported, each evidence item with its check (computed when read). */
export const CheckedEvent = z
  .object({
    kind: z.enum(EVENT_KINDS),
    evidence: z.array(Evidence.extend({ check: EvidenceCheckView })),
  })
  .meta({ id: 'CheckedEvent', description: 'a declared event, its evidence checked' });
export type CheckedEvent = z.infer<typeof CheckedEvent>;

/** Verdict counts over every kept declared evidence item. */
export const VerdictCounts = z
  .object({
    supported: Count,
    unsupported: Count,
    unchecked: Count,
    contested: Count.describe(
      'of the unsupported, those whose action or result another writer corrected (issue 24.1)',
    ),
  })
  .meta({ id: 'VerdictCounts', description: 'declared evidence items by verdict' });
export type VerdictCounts = z.infer<typeof VerdictCounts>;

/** One kept report of a session's history. */
export const StatusHistoryEntry = z
  .object({
    state: z.enum(STATES),
    note: z.string(),
    events: z.array(CheckedEvent).describe('its declared events still kept'),
    events_dropped: Count.describe('its events retention dropped (oldest first)'),
    reported_at: Instant,
  })
  .meta({ id: 'StatusHistoryEntry', description: 'one status report as kept' });

/** `POST` and `GET /v1/sessions/{sid}/status`: a session's status (`reportStatus`, `getStatus`). */
export const StatusView = z
  .object({
    sid: SessionId,
    state: z.enum(STATES).describe("the latest report's"),
    note: z.string().describe("the latest report's"),
    events: z.array(CheckedEvent).describe("the latest report's declared events (seed 000), checked"),
    reported_at: Instant.describe('when the latest report was made'),
    writers: z
      .number()
      .int()
      .nonnegative()
      .describe(
        'how many writers of the session have uploaded segments so far; 0 for a report that came first, or for a mistyped session id',
      ),
    history: z
      .array(StatusHistoryEntry)
      .describe('every kept report, oldest first; the last is the latest (seed 000 retention)'),
    dropped_events: Count.describe(
      'declared events retention dropped: past 128 events or 128 KiB, oldest first',
    ),
    dropped_reports: Count.describe('whole reports dropped to keep the record within 256 KiB, oldest first'),
    evidence: VerdictCounts.describe('verdicts over every kept evidence item'),
  })
  .meta({
    id: 'StatusView',
    description:
      "a session's status reports: an agent's declarations, not proof; evidence checked against the transcript when read",
  });
export type StatusView = z.infer<typeof StatusView>;
