/**
 * What verify, inspect and attribution answer over a stored session (`verifyStored`, `inspectStored`,
 * `attributionStored`; docs/verify.md, docs/attribution.md). Their types are the format library's
 * (`lib/log`: `VerifyReport`, `SessionSummary`, `Attribution`), which knows nothing of zod or HTTP;
 * test/http/openapi-types.test.ts checks at compile time that each schema here infers exactly that type.
 */

import { z } from 'zod';
import { Count, Counts, SessionId } from '../../contract/ids.js';
import { ContestedChange, RestsOn, VerdictCounts } from '../../contract/status.js';
import { VERIFY_CODES } from '../../log/analyse/verify.js';
import { PROVENANCE_KINDS } from '../../log/format/provenance.js';

type VerifyCode = keyof typeof VERIFY_CODES;

/** One verify finding. */
export const VerifyProblem = z
  .object({
    severity: z.enum(['error', 'warning', 'info']),
    code: z.enum(Object.keys(VERIFY_CODES) as [VerifyCode, ...VerifyCode[]]),
    w: z.string().describe('the writer whose segment it is in'),
    seq: z.int().nullable().describe('null for a line that is not an event'),
    line: z.int().nullable().describe('the 1-based line in its segment'),
    message: z.string(),
    range: z
      .object({ start: Count, end: Count })
      .optional()
      .describe(
        'data_loss: the bytes [start, end) of the segment its store no longer holds; chunk_digest_mismatch: the changed chunk',
      ),
  })
  .meta({ id: 'VerifyProblem' });

const VerifySummary = z.object({
  errors: Count,
  warnings: Count,
  infos: Count,
  events: Count,
  writers: Count,
});

/** `GET /v1/sessions/{sid}/verify`. */
export const VerifyReport = z
  .object({
    ok: z.boolean().describe('no problem has severity error'),
    problems: z.array(VerifyProblem),
    summary: VerifySummary.describe('counts by severity'),
  })
  .meta({
    id: 'VerifyReport',
    description: 'every rule of the log format checked over the session (docs/verify.md)',
  });

/** One writer in a session summary. */
export const WriterSummary = z
  .object({
    w: z.string(),
    agent: z.string().nullable(),
    app: z.string().nullable(),
    hansard_version: z.string().nullable(),
    host: z.string().nullable(),
    provenance: z
      .enum([...PROVENANCE_KINDS, 'unknown'])
      .describe(
        "who records its events (its writer.start's meta.provenance): hook, harness, transcript, library (observed), declared (the agent's own words), unknown",
      ),
    subagent_id: z
      .string()
      .nullable()
      .describe(
        "the agent tool's id of the subagent this writer records (meta.subagent_id); null for a main writer",
      ),
    parent_action_id: z
      .string()
      .nullable()
      .describe('the action that launched that subagent (meta.parent_action_id); null when none is recorded'),
    first_ts: z.string().nullable().describe('the ts of its first event, as recorded'),
    last_ts: z.string().nullable(),
    events: Count,
    ended: z.boolean(),
  })
  .meta({ id: 'WriterSummary' });

/** One turn in a session summary. */
export const TurnSummary = z
  .object({
    turn_id: z.string(),
    w: z.string(),
    started_at: z.string(),
    status: z.string().describe('the turn.end status, or open when the turn has not ended'),
    actions: Count,
  })
  .meta({ id: 'TurnSummary' });

/** Inspect's section of the agents' status reports (lib/service/status/declared.ts): declared, never observed. */
export const DeclaredSummary = z
  .object({
    state: z.string(),
    note: z.string(),
    reported_at: z.string(),
    reports: Count.describe('reports kept'),
    dropped_events: Count,
    dropped_reports: Count,
    evidence: VerdictCounts,
    unsupported: z
      .array(
        z.object({
          kind: z.string(),
          type: z.string(),
          ref: z.string(),
          result: z.string(),
          reason: z.string(),
        }),
      )
      .describe('every kept claim the transcript does not support, with why'),
    claims: z
      .array(
        z.object({
          kind: z.string(),
          type: z.string(),
          ref: z.string(),
          result: z.string(),
          verdict: z.enum(['supported', 'unsupported', 'unchecked']),
          reason: z.string(),
          rests_on: RestsOn.nullable(),
          contested: z.array(ContestedChange),
        }),
      )
      .describe(
        'every kept command and test claim: its verdict, why, the observed result it rests on and who recorded it, other writers\' corrections (docs/status.md "What a verdict rests on")',
      ),
  })
  .meta({ id: 'DeclaredSummary', description: "the agents' status reports: declarations, not proof" });

/** `GET /v1/sessions/{sid}/inspect`. */
export const SessionSummary = z
  .object({
    sid: z.string().nullable(),
    first_ts: z.string().nullable(),
    last_ts: z.string().nullable(),
    duration_seconds: z.number().nonnegative().describe('from the first to the last event'),
    events: Count,
    writers: z.array(WriterSummary),
    participants: z.array(
      z.object({ user_id: z.string(), display_name: z.string().nullable(), messages: Count }),
    ),
    counts: Counts.describe('events by type'),
    turns: z.object({ total: Count, by_status: Counts, list: z.array(TurnSummary) }),
    actions: z.object({
      total: Count,
      failed: Count,
      by_tool: z.record(z.string(), z.object({ calls: Count, failed: Count })),
    }),
    corrections: Count,
    unknown_events: Counts.describe('events of types this version does not know, by type'),
    attribution: z.object({
      total: Count,
      by_basis: Counts,
      mean_confidence: z.number().nullable(),
    }),
    verify: VerifySummary.extend({ ok: z.boolean() }).nullable().describe("verify's summary"),
    declared: DeclaredSummary.nullable()
      .optional()
      .describe(
        "the agents' status reports, their claims checked: null when none (absent for a local directory)",
      ),
  })
  .meta({
    id: 'SessionSummary',
    description: 'the summary of the events as recorded: corrections counted, not applied',
  });

/** How an attribution was reached, from recorded facts to inference (DESIGN §3). */
export const AttributionBasis = z.enum([
  'recorded',
  'recorded_no_cause',
  'recorded_context',
  'recorded_empty_context',
  'cascade',
  'temporal',
  'contested',
  'none',
]);

const Confidence = z.number().min(0).max(1);

/** The attribution of one agent action or output. */
export const Attribution = z
  .object({
    event_id: z.string(),
    type: z.enum(['agent.action', 'agent.output']),
    turn_id: z.string().nullable(),
    message_ids: z.array(z.string()).describe('the human message ids it is attributed to'),
    basis: AttributionBasis,
    confidence: Confidence,
    candidates: z
      .array(z.object({ user_id: z.string(), message_ids: z.array(z.string()), confidence: Confidence }))
      .optional()
      .describe('contested (and a cascade from one): each participant with a share of the confidence'),
    cascade_from: z.string().optional().describe('cascade: the earlier action whose attribution it inherits'),
  })
  .meta({ id: 'Attribution' });

/** `GET /v1/sessions/{sid}/attribution`. */
export const AttributionList = z.object({ sid: SessionId, attributions: z.array(Attribution) }).meta({
  id: 'AttributionList',
  description: 'every agent action and output, attributed (docs/attribution.md)',
});
export type AttributionList = z.infer<typeof AttributionList>;
