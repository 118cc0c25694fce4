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
import {
  Attribution,
  AttributionList,
  SessionSummary,
  TurnSummary,
  VerifyProblem,
  VerifyReport,
  WriterSummary,
} from '../service/analysis-schemas.js';
import { Board, BoardSession } from '../service/board-schemas.js';
import { ERROR_STATUS, type ErrorCode } from '../service/errors.js';
import {
  IngestAnswer,
  SessionDetail,
  SessionList,
  SessionView,
  WriterView,
} from '../service/session-schemas.js';
import { StatusReport, StatusView } from '../service/status-schemas.js';
import {
  CreatedTokenView as CreatedToken,
  SessionTokenView as SessionToken,
  TokenList,
  TokenView,
} from '../service/token-schemas.js';
import { CreateSessionTokenInput, CreateTokenInput } from '../service/tokens.js';

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

for (const [id, schema] of Object.entries({
  IngestAnswer,
  WriterView,
  SessionView,
  SessionList,
  SessionDetail,
  StatusView,
  BoardSession,
  Board,
  TokenView,
  CreatedToken,
  SessionToken,
  TokenList,
  VerifyProblem,
  VerifyReport,
  WriterSummary,
  TurnSummary,
  SessionSummary,
  Attribution,
  AttributionList,
})) {
  named(responseSchemas, id, schema);
}

export {
  Attribution,
  AttributionList,
  Board,
  BoardSession,
  CreatedToken,
  IngestAnswer,
  SessionDetail,
  SessionList,
  SessionSummary,
  SessionToken,
  SessionView,
  StatusView,
  TokenList,
  TokenView,
  TurnSummary,
  VerifyProblem,
  VerifyReport,
  WriterSummary,
  WriterView,
};

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
