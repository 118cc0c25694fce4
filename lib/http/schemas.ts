/**
 * The zod schemas of the API's JSON answers, and the two registries the OpenAPI document
 * (`./openapi.ts`) names its components from: `requestSchemas` (request bodies, described as the client
 * sends them: fields with a default are optional) and `responseSchemas` (answers, as the server sends
 * them). Request bodies are the schemas the verbs validate with (`StatusReport`, `CreateTokenInput`);
 * path and query parameters are in `./params.ts`.
 *
 * The verbs keep their TypeScript types; test/http/openapi-types.test.ts checks at compile time that each
 * schema here infers exactly the type the verb or route answers with, so neither can drift alone.
 */
import { z } from 'zod';
import { VERIFY_CODES } from '../log/verify.js';
import { ERROR_STATUS, type ErrorCode } from '../service/errors.js';
import { SCOPES } from '../service/scopes.js';
import { DeclaredEvent, STATES, StatusReport } from '../service/status-schemas.js';
import { CreateSessionTokenInput, CreateTokenInput, TOKEN_PATTERN } from '../service/tokens.js';
import { SessionId, TokenId, WriterId } from './params.js';

/** What a schema in a registry is called in `components.schemas`. */
export interface ComponentMeta {
  id: string;
}

/** Request bodies, by component name (converted with `io: 'input'`). */
export const requestSchemas = z.registry<ComponentMeta>();
/** Answers, by component name (converted with `io: 'output'`). */
export const responseSchemas = z.registry<ComponentMeta>();

/** Registers `schema` under `id` and returns it. */
function named<T extends z.ZodType>(registry: z.core.$ZodRegistry<ComponentMeta>, id: string, schema: T): T {
  registry.add(schema, { id });
  return schema;
}

const Instant = z.iso.datetime().describe('an instant, ISO 8601 in UTC');
const Count = z.int().nonnegative();
const Counts = z.record(z.string(), Count);

named(requestSchemas, 'StatusReport', StatusReport);
named(requestSchemas, 'CreateTokenInput', CreateTokenInput);
named(requestSchemas, 'CreateSessionTokenInput', CreateSessionTokenInput);

/** `GET /healthz`. */
export const Health = named(
  responseSchemas,
  'Health',
  z.object({
    ok: z.literal(true),
    version: z.string().describe('the server version'),
    limits: z
      .object({
        max_chunk_bytes: z.number().int().describe('the largest chunk body this deployment takes'),
        max_chunk_lines: z.number().int().describe('the most lines one chunk may hold'),
      })
      .describe('what clients size their chunks to'),
  }),
);

/** The answer to an accepted chunk (201 appended, 200 a retry of an accepted chunk). */
export const IngestAnswer = named(
  responseSchemas,
  'IngestAnswer',
  z
    .object({
      writer: WriterId,
      length: Count.describe("bytes stored of the writer's segment: the offset of the next chunk"),
      lines: Count.describe('lines stored of the segment'),
      last_seq: z.int().nullable().describe('the seq of the last complete event stored, null before one'),
    })
    .describe("the writer's index after the chunk"),
);

/** `GET /v1/sessions/{sid}/writers/{w}`. */
export const WriterView = named(
  responseSchemas,
  'WriterView',
  z
    .object({
      writer: WriterId,
      length: Count.describe("bytes stored of the writer's segment"),
      lines: Count.describe('lines stored of the segment'),
      last_seq: z.int().nullable().describe('the seq of the last complete event stored'),
      ended: z.boolean().describe('a writer.end is stored'),
      agent: z.string().nullable().describe('meta.agent of its writer.start, when it had one'),
      updated_at: Instant.describe('when a chunk of it was last stored'),
    })
    .describe("what is stored of one writer's segment"),
);

/** One entry of `GET /v1/sessions`. */
export const SessionView = named(
  responseSchemas,
  'SessionView',
  z
    .object({
      sid: SessionId,
      created_at: Instant,
      updated_at: Instant.describe('the last time anything of it was ingested or reported'),
      writers: Count.describe('how many writers it has'),
      lines: Count.describe('lines stored, all writers'),
      bytes: Count.describe('bytes stored, all writers'),
    })
    .describe("a session's index entry"),
);

/** `GET /v1/sessions`. */
export const SessionList = named(
  responseSchemas,
  'SessionList',
  z.object({
    sessions: z.array(SessionView).describe('most recent activity first'),
    next: z.string().nullable().describe('the cursor of the next page, null on the last page'),
  }),
);

/** `GET /v1/sessions/{sid}`. */
export const SessionDetail = named(
  responseSchemas,
  'SessionDetail',
  SessionView.omit({ writers: true })
    .extend({ writers: z.array(WriterView) })
    .describe('the session index entry with its writers'),
);

/** `POST` and `GET /v1/sessions/{sid}/status`. */
export const StatusView = named(
  responseSchemas,
  'StatusView',
  z
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
    .describe("a session's latest status report: an agent's declaration, not proof"),
);

/** One row of the board. */
export const BoardSession = named(
  responseSchemas,
  'BoardSession',
  z.object({
    sid: SessionId,
    state: z.enum(STATES).nullable().describe('the latest reported state, null when no agent reported'),
    note: z.string().nullable(),
    reported_at: Instant.nullable(),
    last_activity: Instant,
    created_at: Instant,
    writers: Count,
    lines: Count,
    agents: z.array(z.string()).describe("the writers' agents"),
  }),
);

/** `GET /v1/board`. */
export const Board = named(
  responseSchemas,
  'Board',
  z
    .object({
      tenant: z.string(),
      generated_at: Instant,
      total: Count.describe('how many sessions the tenant has, on every page'),
      sessions: z.array(BoardSession).describe('this page: most recent activity first, `limit` at most'),
      next: z.string().nullable().describe('the cursor of the next page (`?cursor=`), null on the last page'),
    })
    .describe('everything the board shows'),
);

/** A token as listed: never its secret or hash. */
export const TokenView = named(
  responseSchemas,
  'TokenView',
  z.object({
    id: TokenId,
    tenant: z.string(),
    scopes: z.array(z.enum(SCOPES)),
    session: SessionId.nullable().describe('the one session it is bound to, or null'),
    label: z.string().nullable(),
    created_at: Instant,
    expires_at: Instant.nullable(),
    revoked_at: Instant.nullable(),
    last_used_at: Instant.nullable().describe('coarse: updated at most once a minute'),
    parent: TokenId.nullable().describe(
      'the token that minted it (POST /v1/sessions/{sid}/tokens); it stops working with that token. Null for a token an admin or the operator made',
    ),
    root: TokenId.describe(
      'the first token of its chain (itself when parent is null), whose rate limit it shares',
    ),
  }),
);

/** `POST /v1/tokens`: the new token's view and its secret. */
export const CreatedToken = named(
  responseSchemas,
  'CreatedToken',
  z
    .object({
      token: z
        .string()
        .regex(TOKEN_PATTERN)
        .describe('the secret, shown this once: send it as Authorization: Bearer hns_…'),
      ...TokenView.shape,
    })
    .describe('a new token with its secret'),
);

/** `POST /v1/sessions/{sid}/tokens`: a token bound to one session, for a harness. */
export const SessionToken = named(
  responseSchemas,
  'SessionToken',
  z
    .object({
      token: CreatedToken.shape.token,
      id: TokenId,
      scopes: z.array(z.enum(SCOPES)),
      session: SessionId.describe('the session it is bound to'),
      expires_at: Instant,
    })
    .describe('a new session token with its secret'),
);

/** `GET /v1/tokens`. */
export const TokenList = named(responseSchemas, 'TokenList', z.object({ tokens: z.array(TokenView) }));

/** One verify finding. */
export const VerifyProblem = named(
  responseSchemas,
  'VerifyProblem',
  z.object({
    severity: z.enum(['error', 'warning', 'info']),
    code: z.enum(Object.keys(VERIFY_CODES) as [keyof typeof VERIFY_CODES, ...(keyof typeof VERIFY_CODES)[]]),
    w: z.string().describe('the writer whose segment it is in'),
    seq: z.int().nullable().describe('null for a line that is not an event'),
    line: z.int().nullable().describe('the 1-based line in its segment'),
    message: z.string(),
    range: z
      .object({ start: Count, end: Count })
      .optional()
      .describe('data_loss only: the bytes [start, end) of the segment its store no longer holds'),
  }),
);

const VerifySummary = z.object({
  errors: Count,
  warnings: Count,
  infos: Count,
  events: Count,
  writers: Count,
});

/** `GET /v1/sessions/{sid}/verify`. */
export const VerifyReport = named(
  responseSchemas,
  'VerifyReport',
  z
    .object({
      ok: z.boolean().describe('no problem has severity error'),
      problems: z.array(VerifyProblem),
      summary: VerifySummary.describe('counts by severity'),
    })
    .describe('every rule of the log format checked over the session (docs/verify.md)'),
);

/** One writer in a session summary. */
export const WriterSummary = named(
  responseSchemas,
  'WriterSummary',
  z.object({
    w: z.string(),
    agent: z.string().nullable(),
    app: z.string().nullable(),
    hansard_version: z.string().nullable(),
    host: z.string().nullable(),
    first_ts: z.string().nullable().describe('the ts of its first event, as recorded'),
    last_ts: z.string().nullable(),
    events: Count,
    ended: z.boolean(),
  }),
);

/** One turn in a session summary. */
export const TurnSummary = named(
  responseSchemas,
  'TurnSummary',
  z.object({
    turn_id: z.string(),
    w: z.string(),
    started_at: z.string(),
    status: z.string().describe('the turn.end status, or open when the turn has not ended'),
    actions: Count,
  }),
);

/** `GET /v1/sessions/{sid}/inspect`. */
export const SessionSummary = named(
  responseSchemas,
  'SessionSummary',
  z
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
    })
    .describe('the summary of the events as recorded: corrections counted, not applied'),
);

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
export const Attribution = named(
  responseSchemas,
  'Attribution',
  z.object({
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
  }),
);

/** `GET /v1/sessions/{sid}/attribution`. */
export const AttributionList = named(
  responseSchemas,
  'AttributionList',
  z
    .object({ sid: SessionId, attributions: z.array(Attribution) })
    .describe('every agent action and output, attributed (docs/attribution.md)'),
);

/** Every error code, as `ERROR_STATUS` lists them. */
export const ErrorCodeSchema = z.enum(Object.keys(ERROR_STATUS) as [ErrorCode, ...ErrorCode[]]);

/** Every error answer (DESIGN §4). */
export const ErrorBody = named(
  responseSchemas,
  'ErrorBody',
  z
    .object({
      error: z.object({
        code: ErrorCodeSchema,
        message: z.string().min(1).describe('a sentence a person can act on'),
        details: z.record(z.string(), z.unknown()).describe('for a program; {} when there is nothing'),
      }),
    })
    .describe('an error: its code decides the status'),
);

/** `GET /v1/openapi.json`: the document itself, described loosely. */
export const OpenApiDocument = named(
  responseSchemas,
  'OpenApiDocument',
  z
    .looseObject({ openapi: z.string(), info: z.looseObject({ title: z.string(), version: z.string() }) })
    .describe('an OpenAPI 3.1 document: this one'),
);
