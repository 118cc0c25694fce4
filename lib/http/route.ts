/**
 * One declaration per HTTP operation (DESIGN §2, STYLE §13, docs/adr/0005-one-declaration-per-route.md).
 * A route file calls `defineRoute` with `@hono/zod-openapi`'s route config (method, OpenAPI path,
 * operationId, tag, summary, path and query schemas, answers) plus what is ours: how it authenticates,
 * the scopes of which the caller needs one, the error codes it may answer, a body it reads itself, whether
 * its answer streams, and the handler. From that one object:
 * - `createApp` registers the route (`registerRoute`: `OpenAPIHono.openapi`, which validates the path and
 *   query with the declared zod schemas before the handler; a refusal is our `AppError`);
 * - the OpenAPI document is generated (./openapi.ts: `OpenAPIHono.getOpenAPI31Document`);
 * - test/http/isolation.test.ts calls each route with every scope and checks the verb refuses exactly the
 *   ones not declared, and functions/app.ts serves the streamed ones from the replay function.
 *
 * Request bodies are declared, not parsed here: the handler reads them (raw NDJSON bytes, or JSON within
 * `MAX_JSON_BYTES`) and the verb validates them with the very schema the document names.
 */
import type { OpenAPIHono, RouteConfig, RouteHandler } from '@hono/zod-openapi';
import type { Context } from 'hono';
import type { ZodError, z } from 'zod';
import type { Scope } from '../contract/scopes.js';
import { AppError, type ErrorCode } from '../service/shared/errors.js';
import type { AppEnv } from './auth.js';
import { type AuthKind, componentRef, errorResponses, type Json, security } from './openapi.js';

export type { AuthKind } from './openapi.js';

/** A body that is not JSON, described in words: its media type is the key it is declared under. */
export function raw(description: string): Json {
  return { type: 'string', description };
}

/** An answer of JSON `schema` (a zod schema named with `.meta({ id })`), for a route's `responses`. */
export function json<S extends z.ZodType>(description: string, schema: S) {
  return { description, content: { 'application/json': { schema } } };
}

/** An HTML page answer. */
export function page(description: string) {
  return { description, content: { 'text/html': { schema: raw('an HTML page') } } };
}

/** A redirect answer, its `Location` described by the place it goes to. */
export function redirect(description: string, location: string) {
  return {
    description,
    headers: { location: { description: location, schema: { type: 'string' as const } } },
  };
}

/** What any `/v1` route behind a token may answer (the rate limit is per token, after authentication). */
export const AUTHED: readonly ErrorCode[] = ['unauthorized', 'forbidden', 'rate_limited'];
/** ... and one with a session id in its path (`not_found` also for a session token of another session). */
export const SESSION: readonly ErrorCode[] = ['invalid_id', ...AUTHED, 'not_found'];
/** What a write may answer when the storage refuses it (docs/operations.md). */
export const WRITE_FAULTS: readonly ErrorCode[] = [
  'insufficient_storage',
  'storage_read_only',
  'storage_permission_denied',
];
/** What reading a JSON body may refuse (`jsonBody` in ./params.ts). */
export const JSON_BODY: readonly ErrorCode[] = ['empty_body', 'invalid_body', 'payload_too_large'];

/** A request body the handler reads itself: JSON its verb validates with `schema`, or raw bytes. */
export interface BodyDoc {
  contentType: string;
  /** a zod schema named with `.meta({ id })` (documented as a component), or `raw(…)` */
  schema: z.ZodType | Json;
  /** an empty body is accepted (every field has a default) */
  optional?: boolean;
}

/** The media types of every answer `R` declares. */
type AnswerTypes<R extends RouteConfig> = {
  [S in keyof R['responses']]: R['responses'][S] extends { content: infer C } ? keyof C : never;
}[keyof R['responses']];

/**
 * A route's handler. When every answer it declares is JSON, the library types it: each `c.json(body,
 * status)` must be a declared status with a body of that status's schema. A route that streams or renders
 * HTML answers a plain `Response`.
 */
export type Handler<R extends RouteConfig> = [Exclude<AnswerTypes<R>, 'application/json'>] extends [never]
  ? RouteHandler<R, AppEnv>
  : (c: Parameters<RouteHandler<R, AppEnv>>[0]) => Response | Promise<Response>;

/** What a route file declares. `R` is `@hono/zod-openapi`'s route config, which types the handler. */
export interface RouteSpec<R extends RouteConfig> {
  route: R;
  auth: AuthKind;
  /** the caller needs one of these; the verb checks them (`requireScope`), isolation.test.ts proves it */
  scopes?: readonly Scope[];
  /** every error code it may answer; `internal` (500) is added to every operation */
  errors?: readonly ErrorCode[];
  body?: BodyDoc;
  /** its answer is streamed as it is read: the replay function URL serves it too (functions/app.ts) */
  streamed?: boolean;
  /** how many requests' worth of the token's rate limit a call takes (default 1; ./ratelimit.ts) */
  cost?: number;
  handler: Handler<R>;
  /** the answer to a path or query the schemas refuse; default: the `AppError` as JSON (400) */
  onInvalid?: (err: AppError, c: Context<AppEnv>) => Response | Promise<Response>;
}

/** A declared operation, as `createApp` registers it and the document describes it. */
export interface Operation {
  method: RouteConfig['method'];
  /** the OpenAPI path template: `/v1/sessions/{sid}` */
  path: string;
  /** the same as Hono routes it: `/v1/sessions/:sid` */
  honoPath: string;
  operationId: string;
  auth: AuthKind;
  scopes: readonly Scope[];
  errors: readonly ErrorCode[];
  streamed: boolean;
  /** requests' worth of the rate limit a call takes */
  cost: number;
  /** the JSON body's schema, documented as a request (`io: 'input'`) component */
  bodySchema: z.ZodType | null;
  /** the route config `OpenAPIHono.openapi` takes: security, scopes, body and error answers filled in */
  config: RouteConfig;
  handler: (c: Context<AppEnv>) => Response | Promise<Response>;
  onInvalid: RouteSpec<RouteConfig>['onInvalid'];
}

function isZod(schema: unknown): schema is z.ZodType {
  return typeof schema === 'object' && schema !== null && '_zod' in schema;
}

/** A media type object with a `$ref` for a named zod schema, or the raw schema with its media type. */
function media(type: string, schema: unknown, where: string): Json {
  if (isZod(schema)) return { schema: { $ref: componentRef(schema, where) } };
  return { schema: { contentMediaType: type.split(';')[0], ...(schema as Json) } };
}

/**
 * The operation `spec` declares.
 * @throws when an answer's or the body's zod schema has no `.meta({ id })`, or an answer's status is also
 *   one of its errors'
 */
export function defineRoute<R extends RouteConfig>(spec: RouteSpec<R>): Operation {
  const { route } = spec;
  const id = route.operationId ?? `${route.method} ${route.path}`;
  const responses: Record<string, Json> = {};
  for (const [status, answer] of Object.entries(route.responses as Record<string, Json>)) {
    const { content, ...rest } = answer as { content?: Record<string, { schema?: unknown }> };
    responses[status] = {
      ...rest,
      ...(content
        ? {
            content: Object.fromEntries(
              Object.entries(content).map(([type, m]) => [type, media(type, m.schema, `${id} ${status}`)]),
            ),
          }
        : {}),
    };
  }
  for (const [status, answer] of Object.entries(errorResponses(spec.errors ?? [], id))) {
    if (status in responses) throw new Error(`${id}: ${status} is both an answer and an error`);
    responses[status] = answer;
  }
  const scopes = spec.scopes ?? [];
  const body = spec.body;
  const config = {
    ...route,
    ...(body
      ? {
          request: {
            ...route.request,
            body: {
              required: !body.optional,
              content: { [body.contentType]: media(body.contentType, body.schema, id) },
            },
          },
        }
      : {}),
    responses,
    security: security(spec.auth, scopes),
    ...(scopes.length ? { 'x-scopes': [...scopes] } : {}),
  } as RouteConfig;
  return {
    method: route.method,
    path: route.path,
    honoPath: route.path.replaceAll(/\{([^}]+)\}/g, ':$1'),
    operationId: id,
    auth: spec.auth,
    scopes,
    errors: spec.errors ?? [],
    streamed: spec.streamed ?? false,
    cost: spec.cost ?? 1,
    bodySchema: body && isZod(body.schema) ? body.schema : null,
    config,
    handler: spec.handler as unknown as Operation['handler'],
    onInvalid: spec.onInvalid,
  };
}

/**
 * The refusal of a path or query the declared schemas did not accept, worded as the routes always have:
 * `invalid_id` naming the path parameter (DESIGN §3: before any store), or `bad_request` naming the query
 * parameter (given twice, missing, or not valid).
 */
export function requestError(target: string, error: ZodError, c: Context): AppError {
  const issue = error.issues[0];
  const name = String(issue?.path[0] ?? '');
  const why = issue?.message ?? '';
  if (target === 'param') {
    return new AppError('invalid_id', `the ${name} in the path is not valid: ${why}`, { param: name });
  }
  if (target === 'query') {
    if ((c.req.queries(name)?.length ?? 0) > 1) {
      return new AppError(
        'bad_request',
        `the query parameter ${name} is given more than once: give it once`,
        {
          param: name,
        },
      );
    }
    if (c.req.query(name) === undefined) {
      return new AppError('bad_request', `the query parameter ${name} is required: ${why}`);
    }
    return new AppError('bad_request', `the query parameter ${name} is not valid: ${why}`, { param: name });
  }
  return new AppError('bad_request', `the request is not valid: ${why}`);
}

/** What a validator gives the hook. */
type HookResult = { target: string } & ({ success: true } | { success: false; error: ZodError });

/**
 * Registers `op` on `app`. Path parameters are judged before the query (the library validates the query
 * first), so a bad id is `invalid_id` whatever else is wrong.
 */
export function registerRoute(app: OpenAPIHono<AppEnv>, op: Operation): void {
  const params = op.config.request?.params;
  const hook = (result: HookResult, c: Context<AppEnv>) => {
    if (result.success) return;
    let err = requestError(result.target, result.error, c);
    if (result.target === 'query' && params) {
      const p = params.safeParse(c.req.param());
      if (!p.success) err = requestError('param', p.error, c);
    }
    if (op.onInvalid) return op.onInvalid(err, c);
    throw err;
  };
  app.openapi(op.config, op.handler as never, hook as never);
}
