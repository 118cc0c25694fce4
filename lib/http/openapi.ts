/**
 * The OpenAPI 3.1 document of the API (issue 5), built from the route table in `./operations.ts` and the
 * zod schemas the routes and verbs validate with (`./params.ts`, `./schemas.ts`), converted with zod's own
 * `z.toJSONSchema` (JSON Schema draft 2020-12, the dialect of OpenAPI 3.1). Nothing is written by hand
 * twice: a parameter is required when its schema refuses `undefined`; its description is the schema's;
 * the error answers of an operation are grouped by the status `ERROR_STATUS` gives each code.
 */
import { z } from 'zod';
import { ERROR_STATUS, type ErrorCode } from '../service/errors.js';
import type { Scope } from '../service/scopes.js';
import { HANSARD_VERSION } from '../version.js';
import { type ComponentMeta, ErrorBody, requestSchemas, responseSchemas } from './schemas.js';

/** A JSON Schema or OpenAPI object, as plain JSON. */
export type Json = { [key: string]: unknown };

/** A body that is not JSON: bytes or text of `contentType`, described in words. */
export interface RawBody {
  raw: string;
}

/** A non-JSON body described by `description`. */
export function raw(description: string): RawBody {
  return { raw: description };
}

/** One answer of an operation (errors are listed separately, by code). */
export interface ResponseDoc {
  description: string;
  /** by media type: a registered zod schema (JSON) or a raw body */
  content?: Record<string, z.ZodType | RawBody>;
  headers?: Record<string, string>;
}

/**
 * How an operation authenticates: `none`; `bearer` (`Authorization: Bearer hns_…`); `bearer_or_cookie`
 * (also the board's cookie); `cookie` (the board pages: the cookie, or a bearer token).
 */
export type AuthKind = 'none' | 'bearer' | 'bearer_or_cookie' | 'cookie';

/** One route of the app, as documented. */
export interface Operation {
  method: 'get' | 'post' | 'delete';
  /** OpenAPI path template: `/v1/sessions/{sid}` */
  path: string;
  operationId: string;
  tag: string;
  summary: string;
  description?: string;
  auth: AuthKind;
  /** the caller needs one of these */
  scopes?: Scope[];
  pathParams?: Record<string, z.ZodType>;
  query?: Record<string, z.ZodType>;
  body?: { contentType: string; schema: z.ZodType | RawBody; description?: string; optional?: boolean };
  /** answers other than errors, by status */
  responses: Record<number, ResponseDoc>;
  /** every error code it may answer; `internal` (500) is added to every operation */
  errors?: ErrorCode[];
}

/** The names of the security schemes. */
export const BEARER = 'bearer';
export const BOARD_COOKIE_SCHEME = 'boardCookie';

/** What an error status means, in a few words (its codes are in the answer's schema). */
const STATUS_TEXT: Record<number, string> = {
  400: 'the request is not valid',
  401: 'no token, or one that is not accepted',
  403: 'the token lacks the scope',
  404: "not found, or another tenant's, or outside a session token's session",
  409: 'conflicts with what is stored',
  413: 'too large',
  422: 'refused content',
  429: 'too many requests from this token',
  500: 'a server fault, logged on the server',
};

/** Headers an error answer carries besides its body. */
const ERROR_HEADERS: Partial<Record<ErrorCode, Record<string, string>>> = {
  rate_limited: { 'retry-after': 'whole seconds until this token may make a request again' },
  // The same header text: both may answer one operation's 429.
  too_many_replays: { 'retry-after': 'whole seconds until this token may make a request again' },
};

const COMPONENT_REF = (id: string) => `#/components/schemas/${id}`;

/**
 * Makes the converted schemas tidier: no bounds that every safe integer meets, no regex next to
 * `date-time`, no `propertyNames` that only says keys are strings (JSON keys always are).
 */
const override: z.core.JSONSchemaGeneratorParams['override'] = ({ jsonSchema }) => {
  const s = jsonSchema as Json;
  if (s.format === 'date-time') delete s.pattern;
  if (s.maximum === Number.MAX_SAFE_INTEGER) delete s.maximum;
  if (s.minimum === Number.MIN_SAFE_INTEGER) delete s.minimum;
  const names = s.propertyNames as Json | undefined;
  if (names && Object.keys(names).length === 1 && names.type === 'string') delete s.propertyNames;
};

/** Drops the keys a standalone JSON Schema has and an OpenAPI Schema Object inside a document needs not. */
function bare(schema: Json): Json {
  const { $schema: _s, $id: _i, ...rest } = schema;
  return rest;
}

/** The JSON Schema of a parameter's zod schema, as the client sends it. */
function inputSchema(schema: z.ZodType): Json {
  return bare(
    z.toJSONSchema(schema, {
      target: 'draft-2020-12',
      io: 'input',
      unrepresentable: 'any',
      override,
    }) as Json,
  );
}

/** `components.schemas` of both registries; the names must not collide. */
function componentSchemas(): Record<string, Json> {
  const out: Record<string, Json> = {};
  const convert = (registry: z.core.$ZodRegistry<ComponentMeta>, io: 'input' | 'output') => {
    const { schemas } = z.toJSONSchema(registry, {
      target: 'draft-2020-12',
      io,
      uri: COMPONENT_REF,
      unrepresentable: 'any',
      override,
    }) as { schemas: Record<string, Json> };
    for (const [id, schema] of Object.entries(schemas)) {
      if (id in out) throw new Error(`two components are called ${id}`);
      out[id] = bare(schema);
    }
  };
  convert(requestSchemas, 'input');
  convert(responseSchemas, 'output');
  return out;
}

/** A `$ref` to a registered schema. @throws when the schema is not registered in `registry` */
function ref(registry: z.core.$ZodRegistry<ComponentMeta>, schema: z.ZodType, where: string): Json {
  const id = registry.get(schema)?.id;
  if (!id) throw new Error(`${where}: its schema is not a named component of lib/http/schemas.ts`);
  return { $ref: COMPONENT_REF(id) };
}

/** The media type object of a body. */
function media(
  registry: z.core.$ZodRegistry<ComponentMeta>,
  type: string,
  body: z.ZodType | RawBody,
  where: string,
): Json {
  if ('raw' in body && typeof body.raw === 'string') {
    return { schema: { type: 'string', contentMediaType: type.split(';')[0], description: body.raw } };
  }
  return { schema: ref(registry, body as z.ZodType, where) };
}

/** The parameter objects of an operation. */
function parameters(op: Operation): Json[] {
  const out: Json[] = [];
  const add = (where: 'path' | 'query', params: Record<string, z.ZodType> | undefined) => {
    for (const [name, schema] of Object.entries(params ?? {})) {
      const { description, ...json } = inputSchema(schema);
      out.push({
        name,
        in: where,
        required: where === 'path' || !schema.safeParse(undefined).success,
        ...(typeof description === 'string' ? { description } : {}),
        schema: json,
      });
    }
  };
  add('path', op.pathParams);
  add('query', op.query);
  return out;
}

/** The security requirements of an operation: one alternative per scheme and scope (any one will do). */
function security(op: Operation): Json[] {
  if (op.auth === 'none') return [];
  const scopes = op.scopes ?? [];
  const schemes = op.auth === 'bearer' ? [BEARER] : [BEARER, BOARD_COOKIE_SCHEME];
  const alternatives: Json[] = [];
  for (const scheme of schemes) {
    if (scopes.length === 0) alternatives.push({ [scheme]: [] });
    for (const scope of scopes) {
      // The cookie is honoured only for the board scope.
      if (scheme === BOARD_COOKIE_SCHEME && scope !== 'board') continue;
      alternatives.push({ [scheme]: [scope] });
    }
  }
  return alternatives;
}

/** The error answers of an operation, one per status, each naming the codes it may carry. */
function errorResponses(op: Operation): Record<string, Json> {
  const byStatus = new Map<number, ErrorCode[]>();
  for (const code of [...(op.errors ?? []), 'internal' as const]) {
    const status = ERROR_STATUS[code];
    const codes = byStatus.get(status) ?? [];
    if (!codes.includes(code)) codes.push(code);
    byStatus.set(status, codes);
  }
  const out: Record<string, Json> = {};
  for (const [status, codes] of [...byStatus].sort((a, b) => a[0] - b[0])) {
    const headers = Object.assign({}, ...codes.map((c) => ERROR_HEADERS[c] ?? {})) as Record<string, string>;
    out[String(status)] = {
      description: STATUS_TEXT[status] ?? 'an error',
      ...headerObjects(headers),
      content: {
        'application/json': {
          schema: {
            allOf: [
              ref(responseSchemas, ErrorBody, op.operationId),
              {
                type: 'object',
                properties: {
                  error: { type: 'object', properties: { code: { type: 'string', enum: codes } } },
                },
              },
            ],
          },
        },
      },
    };
  }
  return out;
}

/** `{headers: …}` of a response, or nothing when it has none. */
function headerObjects(headers: Record<string, string>): Json {
  const entries = Object.entries(headers);
  if (entries.length === 0) return {};
  return {
    headers: Object.fromEntries(entries.map(([h, d]) => [h, { description: d, schema: { type: 'string' } }])),
  };
}

/** The operation object. */
function operation(op: Operation): Json {
  const responses: Record<string, Json> = {};
  for (const [status, r] of Object.entries(op.responses)) {
    responses[status] = {
      description: r.description,
      ...headerObjects(r.headers ?? {}),
      ...(r.content
        ? {
            content: Object.fromEntries(
              Object.entries(r.content).map(([type, body]) => [
                type,
                media(responseSchemas, type, body, `${op.operationId} ${status}`),
              ]),
            ),
          }
        : {}),
    };
  }
  for (const [status, r] of Object.entries(errorResponses(op))) {
    if (status in responses) throw new Error(`${op.operationId}: ${status} is both an answer and an error`);
    responses[status] = r;
  }
  const params = parameters(op);
  const scopes = op.scopes ?? [];
  return {
    operationId: op.operationId,
    tags: [op.tag],
    summary: op.summary,
    ...(op.description ? { description: op.description } : {}),
    ...(params.length ? { parameters: params } : {}),
    ...(op.body
      ? {
          requestBody: {
            required: !op.body.optional,
            ...(op.body.description ? { description: op.body.description } : {}),
            content: {
              [op.body.contentType]: media(
                requestSchemas,
                op.body.contentType,
                op.body.schema,
                op.operationId,
              ),
            },
          },
        }
      : {}),
    responses,
    security: security(op),
    ...(scopes.length ? { 'x-scopes': scopes } : {}),
  };
}

/** The tags, in the order the reference shows them. */
export const TAGS: Array<{ name: string; description: string }> = [
  { name: 'meta', description: 'liveness and this description' },
  { name: 'ingest', description: "recording: a writer's segment, chunk by chunk" },
  { name: 'sessions', description: 'reading sessions back' },
  { name: 'analysis', description: 'verify, inspect and attribution of a stored session' },
  { name: 'status', description: "agents' status reports and the board's data" },
  { name: 'tokens', description: 'token administration' },
  { name: 'board pages', description: 'the HTML board, for a browser' },
];

const INTRO = [
  'The HTTP API of hansard: the honest record of work done by people and AI coding agents.',
  '',
  'Authenticate with `Authorization: Bearer hns_…` (a token of one tenant with scopes; a session token',
  'only reaches its own session). An operation lists the scopes of which the token needs one.',
  'Every error is `{"error":{"code","message","details"}}` with the status its code decides; another',
  "tenant's things answer exactly like missing ones (404).",
].join('\n');

/**
 * The OpenAPI document of `operations`.
 * @throws when two operations share a path and method or an id, or a body schema is not a named component
 */
export function buildOpenApi(operations: readonly Operation[]): Json {
  const paths: Record<string, Record<string, Json>> = {};
  const ids = new Set<string>();
  for (const op of operations) {
    if (ids.has(op.operationId)) throw new Error(`two operations are called ${op.operationId}`);
    ids.add(op.operationId);
    paths[op.path] ??= {};
    const item = paths[op.path]!;
    if (item[op.method]) throw new Error(`${op.method.toUpperCase()} ${op.path} is documented twice`);
    item[op.method] = operation(op);
  }
  return {
    openapi: '3.1.0',
    info: {
      title: 'hansard',
      version: HANSARD_VERSION,
      description: INTRO,
      license: { name: 'MIT', identifier: 'MIT' },
    },
    tags: TAGS,
    paths,
    components: {
      schemas: componentSchemas(),
      securitySchemes: {
        [BEARER]: {
          type: 'http',
          scheme: 'bearer',
          bearerFormat: 'hns_ followed by 43 letters and digits',
          description:
            'A token of one tenant; `hansard token create` or `POST /v1/tokens` makes one. ' +
            'Only its SHA-256 is stored.',
        },
        [BOARD_COOKIE_SCHEME]: {
          type: 'apiKey',
          in: 'cookie',
          name: 'hansard_board',
          description:
            'The HttpOnly cookie the board sign-in sets (a token with the board scope); ' +
            'honoured by the board only.',
        },
      },
    },
  };
}
