/**
 * Work leases (seed 004 "Reporting current work", issue 13, docs/work.md): what the work routes take and
 * answer. A work item says what an actor reports it is doing; its freshness says how much of that is
 * observed now. Expiry or absence is `unknown`, never idle, finished or abandoned.
 */
import { z } from 'zod';
import { ULID_SOURCE as ulid } from '../log/format/ids.js';
import { Count, Instant, SessionId } from './ids.js';

/** `wk_` + a ULID. */
export const WorkId = z
  .string()
  .regex(new RegExp(`^wk_${ulid}$`), 'a work id is wk_ followed by a ULID')
  .describe('a work id: wk_ followed by a ULID');

/** Lease TTL bounds and default, in seconds (issue 13: 15 min by default, 1 min to 24 h). */
export const WORK_TTL = { min: 60, max: 86_400, default: 900 } as const;
/** Summaries and wait reasons (seed 004: "short, plain data for collaborators"). */
export const MAX_WORK_TEXT = 240;

const Name = (what: string) =>
  z
    .string()
    .min(1)
    .max(64, `${what} is at most 64 characters`)
    .regex(/^[A-Za-z0-9][A-Za-z0-9._:@/-]*$/, `${what} is a name: letters, digits and . _ : @ / -`);

/** Who owns a work item: the system (the harness), the actor and the session (seed 004 ownership). */
export const Owner = z.strictObject({
  session: SessionId.describe('the session the work belongs to; a session-bound token must name its own'),
  system: Name('system').describe('the harness or system reporting, e.g. claude-code, codex, ci'),
  actor: Name('actor').describe('the actor reporting, e.g. the agent or person name'),
});
export type Owner = z.infer<typeof Owner>;

/** What the work is about: a session, a thread, or a free subject. */
export const Subject = z.strictObject({
  kind: z.enum(['session', 'thread', 'free']),
  ref: z.string().min(1).max(160, 'a subject is at most 160 characters'),
});
export type Subject = z.infer<typeof Subject>;

const Mode = z
  .string()
  .min(1)
  .max(40, 'a mode is at most 40 characters')
  .regex(/^[a-z][a-z_-]*$/, 'a mode is one lowercase word, e.g. implementing, testing, reviewing');
const Text = z.string().min(1).max(MAX_WORK_TEXT, `at most ${MAX_WORK_TEXT} characters`);
const Ttl = z
  .int()
  .min(WORK_TTL.min, `a TTL is at least ${WORK_TTL.min} seconds`)
  .max(WORK_TTL.max, `a TTL is at most ${WORK_TTL.max} seconds (24 h)`);

/** `POST /v1/work`. */
export const WorkStart = Owner.extend({
  subject: Subject,
  mode: Mode,
  summary: Text.describe('one line: what is being done (no command, prompt, credential or absolute path)'),
  ttl_seconds: Ttl.default(WORK_TTL.default).describe('the lease: 60 to 86400 seconds, default 900'),
}).meta({ id: 'WorkStart' });
export type WorkStart = z.infer<typeof WorkStart>;

/** `POST /v1/work/{id}/heartbeat`: renews the lease only. */
export const WorkHeartbeat = Owner.extend({
  ttl_seconds: Ttl.optional().describe("the lease from now; default the item's TTL"),
}).meta({ id: 'WorkHeartbeat' });

/** `POST /v1/work/{id}/checkpoint`: a change of mode, subject or summary. */
export const WorkCheckpoint = Owner.extend({
  mode: Mode.optional(),
  subject: Subject.optional(),
  summary: Text.optional(),
})
  .refine((c) => c.mode !== undefined || c.subject !== undefined || c.summary !== undefined, {
    message: 'a checkpoint changes at least one of mode, subject or summary',
  })
  .meta({ id: 'WorkCheckpoint' });

export const DEPENDENCY_KINDS = ['review', 'ci', 'human', 'work', 'external'] as const;
/** `POST /v1/work/{id}/wait`: a typed dependency and a plain reason. */
export const WorkWait = Owner.extend({
  dependency: z.strictObject({
    kind: z.enum(DEPENDENCY_KINDS),
    ref: z.string().min(1).max(160).optional().describe('e.g. the work id (wk_…) or PR it waits on'),
  }),
  reason: Text.describe('one line: what exactly is missing'),
}).meta({ id: 'WorkWait' });

/** `POST /v1/work/{id}/stop`. */
export const WorkStop = Owner.extend({
  outcome: z.enum(['completed', 'paused']),
  summary: Text.optional(),
}).meta({ id: 'WorkStop' });

/** The semantic operations: each is history, each may be resumed. */
export const SEMANTIC_OPS = ['start', 'checkpoint', 'wait', 'stop'] as const;
export type SemanticOp = (typeof SEMANTIC_OPS)[number];

/**
 * An idempotency key, as the `Idempotency-Key` header or resume's `idempotency_key`: 8 to 128 printable
 * ASCII characters without spaces (it is echoed in error messages: no control, bidi or other invisible
 * characters). One rule for both, so that a key one accepts the other does too.
 */
export const IDEMPOTENCY_KEY_RULE = /^[\x21-\x7e]{8,128}$/;
export const IDEMPOTENCY_KEY_MESSAGE =
  'an idempotency key is 8 to 128 printable ASCII characters without spaces';
export const IdempotencyKey = z.string().regex(IDEMPOTENCY_KEY_RULE, IDEMPOTENCY_KEY_MESSAGE);

/** `POST /v1/work/{id}/resume`: a pending operation repeated exactly (same key, same content). */
export const WorkResume = Owner.extend({
  op: z.enum(SEMANTIC_OPS),
  idempotency_key: IdempotencyKey,
  body: z.record(z.string(), z.unknown()).describe('the operation body exactly as first sent'),
}).meta({ id: 'WorkResume' });

/** One entry of a work item's history (semantic operations only; heartbeats are not history). */
export const WorkHistoryEntry = z
  .object({
    op: z.enum(SEMANTIC_OPS),
    at: Instant,
    mode: z.string().optional(),
    subject: Subject.optional(),
    summary: z.string().optional(),
    dependency: z.object({ kind: z.string(), ref: z.string().optional() }).optional(),
    reason: z.string().optional(),
    outcome: z.string().optional(),
  })
  .meta({ id: 'WorkHistoryEntry' });
export type WorkHistoryEntry = z.infer<typeof WorkHistoryEntry>;

/**
 * How fresh what a work item says is, at the time of the answer (seed 004 "two observations"):
 * `observed` while its lease is unexpired; `unknown` once it expired (never idle, finished or abandoned);
 * `stopped` after a stop (its outcome says completed or paused).
 */
export const Freshness = z
  .object({
    shown: z.enum(['observed', 'unknown', 'stopped']),
    lease_expires_at: Instant,
    last_heartbeat_at: Instant,
    last_reported: z.object({ op: z.enum(SEMANTIC_OPS), at: Instant }),
    as_of: Instant.describe('the server time this was decided at'),
  })
  .meta({ id: 'Freshness' });
export type Freshness = z.infer<typeof Freshness>;

/** A work item as answered. */
export const WorkView = z
  .object({
    id: WorkId,
    session: SessionId,
    system: z.string(),
    actor: z.string(),
    subject: Subject,
    mode: z.string(),
    summary: z.string(),
    ttl_seconds: Count,
    state: z.enum(['active', 'waiting', 'stopped']),
    outcome: z.enum(['completed', 'paused']).nullable(),
    waiting_on: z
      .object({
        dependency: z.object({ kind: z.string(), ref: z.string().optional() }),
        reason: z.string(),
        since: Instant,
      })
      .nullable(),
    freshness: Freshness,
    started_at: Instant,
    history: z.array(WorkHistoryEntry).describe('semantic operations, oldest first (at most 100 kept)'),
  })
  .meta({
    id: 'WorkView',
    description: 'a work item: what an actor reports it is doing, and how fresh that is',
  });
export type WorkView = z.infer<typeof WorkView>;

/** A work item as `GET /v1/work` lists it: without its history (that is `GET /v1/work/{id}`'s). */
export const WorkSummary = WorkView.omit({ history: true }).meta({
  id: 'WorkSummary',
  description: 'a work item without its history: what it reports now, and how fresh that is',
});
export type WorkSummary = z.infer<typeof WorkSummary>;

/** `?limit=` of `GET /v1/work`: 1 to 500 items, 100 by default. */
export const WORK_LIST_LIMIT = { default: 100, max: 500 } as const;

/** `GET /v1/work`. */
export const WorkList = z.object({ items: z.array(WorkSummary), as_of: Instant }).meta({
  id: 'WorkList',
  description: 'work items without their history, newest started first (GET /v1/work/{id} has the history)',
});
export type WorkList = z.infer<typeof WorkList>;
