/**
 * The route table the OpenAPI document is built from (`./openapi.ts`): every route `createApp` serves,
 * with the schemas its handler validates with and answers in. test/http/openapi.test.ts fails when a route
 * of the app is missing here or a route here is not served.
 */
import { z } from 'zod';
import type { ErrorCode } from '../service/errors.js';
import { MAX_CHUNK_BYTES } from '../service/ingest.js';
import { StatusReport } from '../service/status-schemas.js';
import { CreateSessionTokenInput, CreateTokenInput } from '../service/tokens.js';
import { type Operation, raw } from './openapi.js';
import { BoardLimit, Cursor, Format, Limit, Offset, Raw, SessionId, TokenId, WriterId } from './params.js';
import {
  AttributionList,
  Board,
  CreatedToken,
  Health,
  IngestAnswer,
  OpenApiDocument,
  SessionDetail,
  SessionList,
  SessionSummary,
  SessionToken,
  StatusView,
  TokenList,
  VerifyReport,
  WriterView,
} from './schemas.js';

/** What any `/v1` route behind a token may answer (the rate limit is per token, after authentication). */
const AUTHED: ErrorCode[] = ['unauthorized', 'forbidden', 'rate_limited'];
/** ... and one with a session id in its path (`not_found` also for a session token of another session). */
const SESSION: ErrorCode[] = ['invalid_id', ...AUTHED, 'not_found'];
/** What a write may answer when the storage refuses it (docs/operations.md). */
const WRITE_FAULTS: ErrorCode[] = ['insufficient_storage', 'storage_read_only', 'storage_permission_denied'];
/** What reading a JSON body may refuse (`jsonBody` in ./params.ts). */
const JSON_BODY: ErrorCode[] = ['empty_body', 'invalid_body', 'payload_too_large'];

const sid = { sid: SessionId };
const sidW = { sid: SessionId, w: WriterId };
const ndjson = 'application/x-ndjson';
const json = 'application/json';
const html = 'text/html';

const PAGE = raw('an HTML page');
const TO_LOGIN = { description: 'not signed in: to the sign-in page', headers: { location: '/login' } };

export const OPERATIONS: readonly Operation[] = [
  {
    method: 'get',
    path: '/healthz',
    operationId: 'health',
    tag: 'meta',
    summary: 'Liveness',
    auth: 'none',
    responses: { 200: { description: 'the server is up', content: { [json]: Health } } },
  },
  {
    method: 'get',
    path: '/v1/openapi.json',
    operationId: 'openapi',
    tag: 'meta',
    summary: 'This OpenAPI document',
    description: 'Generated from the zod schemas the routes validate with.',
    auth: 'none',
    responses: { 200: { description: 'the OpenAPI 3.1 document', content: { [json]: OpenApiDocument } } },
  },
  {
    method: 'get',
    path: '/v1/docs',
    operationId: 'docs',
    tag: 'meta',
    summary: 'The API reference',
    description: 'This document rendered as an HTML page.',
    auth: 'none',
    responses: { 200: { description: 'the API reference', content: { [html]: PAGE } } },
  },
  {
    method: 'post',
    path: '/v1/sessions/{sid}/writers/{w}/chunks',
    operationId: 'postChunk',
    tag: 'ingest',
    summary: "Append the next complete lines of a writer's segment",
    description: [
      'The body starts at byte `offset` of the segment. `offset` equal to the stored length appends (201);',
      'a body equal to the stored bytes at an earlier `offset` is a retry and gets the same answer (200);',
      'anything else is `offset_mismatch` (409) with `details.expected_offset`.',
      'Line 1 of a new segment must be the `writer.start` of this session and writer; a line naming another',
      'session or writer is refused. Anything else is stored as written: a torn or malformed line in the',
      'middle is kept, the merged replay skips it. A refused chunk stores nothing: 413 for a body over the',
      "size limit, of more lines than the deployment's limit (`too_many_lines`), or past the tenant's",
      'storage quota (`quota_exceeded`).',
    ].join(' '),
    auth: 'bearer',
    scopes: ['ingest'],
    pathParams: sidW,
    query: { offset: Offset },
    body: {
      contentType: ndjson,
      schema: raw(
        `complete lines of the v3 log format, each ending with a newline; at most ${MAX_CHUNK_BYTES} bytes`,
      ),
    },
    responses: {
      200: {
        description: 'a retry of a chunk already accepted: the same answer',
        content: { [json]: IngestAnswer },
      },
      201: { description: 'appended', content: { [json]: IngestAnswer } },
    },
    errors: [
      'bad_request',
      'empty_body',
      'incomplete_line',
      'missing_writer_start',
      'misrouted_line',
      ...SESSION,
      'offset_mismatch',
      'payload_too_large',
      'too_many_lines',
      'quota_exceeded',
      ...WRITE_FAULTS,
      'data_loss',
    ],
  },
  {
    method: 'get',
    path: '/v1/sessions/{sid}/writers/{w}',
    operationId: 'getWriter',
    tag: 'ingest',
    summary: 'What is stored of a writer',
    description: 'Where a client resumes an upload: `length` is the offset of the next chunk.',
    auth: 'bearer',
    scopes: ['ingest', 'read'],
    pathParams: sidW,
    responses: { 200: { description: "the writer's index entry", content: { [json]: WriterView } } },
    errors: [...SESSION, 'data_loss'],
  },
  {
    method: 'get',
    path: '/v1/sessions/{sid}/writers/{w}/segment',
    operationId: 'getSegment',
    tag: 'sessions',
    summary: "A writer's raw segment, as stored",
    auth: 'bearer',
    scopes: ['read'],
    pathParams: sidW,
    responses: {
      200: {
        description: 'the segment up to its indexed length, streamed',
        headers: { 'content-length': 'the indexed length' },
        content: { [ndjson]: raw('the segment bytes as stored, torn lines included') },
      },
    },
    errors: [...SESSION, 'data_loss', 'too_many_replays'],
  },
  {
    method: 'get',
    path: '/v1/sessions',
    operationId: 'listSessions',
    tag: 'sessions',
    summary: "The tenant's sessions",
    description: [
      'Most recent activity first, a page at a time. `next` is a signed cursor: only a cursor this server',
      'gave, for this tenant, is accepted. A session token sees only its own session, on one page.',
    ].join(' '),
    auth: 'bearer',
    scopes: ['read'],
    query: { limit: Limit, cursor: Cursor },
    responses: { 200: { description: 'a page of sessions', content: { [json]: SessionList } } },
    errors: ['bad_request', 'invalid_cursor', ...AUTHED],
  },
  {
    method: 'get',
    path: '/v1/sessions/{sid}',
    operationId: 'getSession',
    tag: 'sessions',
    summary: 'A session and its writers',
    auth: 'bearer',
    scopes: ['read', 'board'],
    pathParams: sid,
    responses: { 200: { description: 'the session', content: { [json]: SessionDetail } } },
    errors: SESSION,
  },
  {
    method: 'get',
    path: '/v1/sessions/{sid}/replay',
    operationId: 'replay',
    tag: 'sessions',
    summary: 'The merged transcript, streamed',
    description: [
      "Every writer's segment merged into one order, corrections applied (each corrected event carries",
      'its `corrected` provenance); the same bytes the CLI gives for the same session directory.',
      '`raw=1` needs the read scope. A token runs at most a few replays, segment downloads, verifies,',
      'inspects and attributions at once (`too_many_replays`, 429 with `Retry-After`); a replay stops and',
      'frees its place when its client goes away.',
    ].join(' '),
    auth: 'bearer',
    scopes: ['read', 'board'],
    pathParams: sid,
    query: { format: Format, raw: Raw },
    responses: {
      200: {
        description: 'the transcript',
        content: {
          [ndjson]: raw('format=ndjson (the default) or raw=1: one JSON event per line'),
          'text/plain; charset=utf-8': raw('format=text: one readable line per event'),
        },
      },
    },
    errors: ['bad_request', ...SESSION, 'data_loss', 'too_many_replays'],
  },
  {
    method: 'get',
    path: '/v1/sessions/{sid}/verify',
    operationId: 'verify',
    tag: 'analysis',
    summary: 'Check the stored session against the log format',
    auth: 'bearer',
    scopes: ['read'],
    pathParams: sid,
    responses: { 200: { description: 'the findings', content: { [json]: VerifyReport } } },
    errors: [...SESSION, 'too_many_replays'],
  },
  {
    method: 'get',
    path: '/v1/sessions/{sid}/inspect',
    operationId: 'inspect',
    tag: 'analysis',
    summary: "The session's summary",
    description:
      'Writers, participants, counts, turns, actions, corrections, attribution and verify summaries.',
    auth: 'bearer',
    scopes: ['read'],
    pathParams: sid,
    responses: { 200: { description: 'the summary', content: { [json]: SessionSummary } } },
    errors: [...SESSION, 'data_loss', 'too_many_replays'],
  },
  {
    method: 'get',
    path: '/v1/sessions/{sid}/attribution',
    operationId: 'attribution',
    tag: 'analysis',
    summary: 'Who each agent action and output answers to',
    description:
      'Every agent action and output with the human messages it is attributed to, the basis and the ' +
      'confidence.',
    auth: 'bearer',
    scopes: ['read'],
    pathParams: sid,
    responses: { 200: { description: 'the attributions', content: { [json]: AttributionList } } },
    errors: [...SESSION, 'data_loss', 'too_many_replays'],
  },
  {
    method: 'post',
    path: '/v1/sessions/{sid}/status',
    operationId: 'reportStatus',
    tag: 'status',
    summary: "Report an agent's status",
    description: [
      'A state, a one-line note and up to four declared events with up to four evidence items each',
      '(seed 000). The session need not have segments yet. An invalid report names each problem in',
      '`details.issues` and stores nothing.',
    ].join(' '),
    auth: 'bearer',
    scopes: ['report'],
    pathParams: sid,
    body: { contentType: json, schema: StatusReport },
    responses: { 201: { description: 'stored: the latest status now', content: { [json]: StatusView } } },
    errors: [...JSON_BODY, ...SESSION, ...WRITE_FAULTS],
  },
  {
    method: 'get',
    path: '/v1/sessions/{sid}/status',
    operationId: 'getStatus',
    tag: 'status',
    summary: "A session's latest status report",
    auth: 'bearer',
    scopes: ['read', 'report', 'board'],
    pathParams: sid,
    responses: { 200: { description: 'the latest report', content: { [json]: StatusView } } },
    errors: SESSION,
  },
  {
    method: 'get',
    path: '/v1/board',
    operationId: 'getBoard',
    tag: 'status',
    summary: 'Everything the board shows',
    description:
      'Sessions with their latest state and note, last activity and agents, most recent first, a page at ' +
      'a time (signed cursors, as `GET /v1/sessions`), with how many there are in all.',
    auth: 'bearer_or_cookie',
    scopes: ['board', 'read'],
    query: { limit: BoardLimit, cursor: Cursor },
    responses: { 200: { description: 'a page of the board', content: { [json]: Board } } },
    errors: ['bad_request', 'invalid_cursor', ...AUTHED],
  },
  {
    method: 'post',
    path: '/v1/tokens',
    operationId: 'createToken',
    tag: 'tokens',
    summary: 'Create a token in the caller’s tenant',
    description: 'The secret is in this answer only; the server keeps its SHA-256.',
    auth: 'bearer',
    scopes: ['admin'],
    body: { contentType: json, schema: CreateTokenInput },
    responses: { 201: { description: 'created', content: { [json]: CreatedToken } } },
    errors: [...JSON_BODY, ...AUTHED, ...WRITE_FAULTS],
  },
  {
    method: 'post',
    path: '/v1/sessions/{sid}/tokens',
    operationId: 'createSessionToken',
    tag: 'tokens',
    summary: 'Create a token bound to one session, for a harness',
    description: [
      'For an agent that should ship its own segment and post its status and nothing else. Scopes among',
      '`ingest`, `report`, `read` (default ingest and report), 24 hours unless `ttl_seconds` says otherwise.',
      'An admin may ask for any of them; any other token not bound to a session may hand on the scopes it',
      'has, never more. The new token expires no later than the caller, stops working when the caller is',
      'revoked or expires, and shares its rate limit; minting counts as 10 requests, and a token may have at',
      'most 100 unexpired session tokens minted from it (409 `too_many_tokens`).',
      'The session need not exist yet. An empty body takes every default.',
    ].join(' '),
    auth: 'bearer',
    pathParams: sid,
    body: { contentType: json, schema: CreateSessionTokenInput, optional: true },
    responses: { 201: { description: 'created', content: { [json]: SessionToken } } },
    errors: ['invalid_body', 'payload_too_large', ...SESSION, ...WRITE_FAULTS, 'too_many_tokens'],
  },
  {
    method: 'get',
    path: '/v1/tokens',
    operationId: 'listTokens',
    tag: 'tokens',
    summary: "The tenant's tokens",
    auth: 'bearer',
    scopes: ['admin'],
    responses: { 200: { description: 'every token, revoked ones too', content: { [json]: TokenList } } },
    errors: AUTHED,
  },
  {
    method: 'delete',
    path: '/v1/tokens/{id}',
    operationId: 'revokeToken',
    tag: 'tokens',
    summary: 'Revoke a token',
    auth: 'bearer',
    scopes: ['admin'],
    pathParams: { id: TokenId },
    responses: { 204: { description: 'revoked' } },
    errors: ['invalid_id', ...AUTHED, 'not_found', ...WRITE_FAULTS],
  },
  {
    method: 'get',
    path: '/',
    operationId: 'boardPage',
    tag: 'board pages',
    summary: 'The status board',
    description:
      'With `?token=`: signs the browser in (a token with the board scope), sets the cookie and redirects ' +
      'here without the token, when the browser says the user opened the link (`Sec-Fetch-Site: none` or ' +
      '`same-origin`, a top-level navigation). From another site, or from a client that does not say, it ' +
      'answers a page that asks to confirm with a button posting to `/login` (no login CSRF). Without it: ' +
      'a page of the board, with how many sessions there are and a link to the next page.',
    auth: 'cookie',
    scopes: ['board'],
    query: {
      token: z
        .string()
        .optional()
        .describe('sign in with this token: it moves into an HttpOnly cookie and leaves the address bar'),
      limit: BoardLimit,
      cursor: Cursor,
    },
    responses: {
      200: {
        description: 'the board; with a `?token=` not opened by the user: the page asking to confirm',
        content: { [html]: PAGE },
      },
      302: TO_LOGIN,
      303: { description: 'signed in (`?token=`): to the board', headers: { location: '/' } },
      400: {
        description: 'a `?cursor=` this server did not give, or a bad `?limit=`: a page linking to the first',
        content: { [html]: PAGE },
      },
      401: { description: 'the `?token=` was refused: the sign-in page with why', content: { [html]: PAGE } },
    },
  },
  {
    method: 'get',
    path: '/sessions/{sid}',
    operationId: 'sessionPage',
    tag: 'board pages',
    summary: "A session's timeline",
    auth: 'cookie',
    scopes: ['board'],
    pathParams: sid,
    responses: {
      200: { description: 'its status and the merged replay as text', content: { [html]: PAGE } },
      302: TO_LOGIN,
      404: { description: 'no such session (or another tenant’s)', content: { [html]: PAGE } },
    },
    errors: ['invalid_id'],
  },
  {
    method: 'get',
    path: '/login',
    operationId: 'loginPage',
    tag: 'board pages',
    summary: 'The sign-in page',
    auth: 'none',
    responses: { 200: { description: 'a form to paste a token', content: { [html]: PAGE } } },
  },
  {
    method: 'post',
    path: '/login',
    operationId: 'login',
    tag: 'board pages',
    summary: 'Sign a browser in',
    description: 'Only from the board’s own form: a cross-site form is refused (403).',
    auth: 'none',
    body: {
      contentType: 'application/x-www-form-urlencoded',
      schema: raw('token=hns_…: a token with the board scope'),
    },
    responses: {
      303: { description: 'signed in: the cookie is set, to the board', headers: { location: '/' } },
      401: { description: 'the token was refused: the sign-in page with why', content: { [html]: PAGE } },
    },
    errors: ['forbidden'],
  },
  {
    method: 'post',
    path: '/logout',
    operationId: 'logout',
    tag: 'board pages',
    summary: 'Sign a browser out',
    auth: 'none',
    responses: {
      303: { description: 'the cookie is cleared: to the sign-in page', headers: { location: '/login' } },
    },
    errors: ['forbidden'],
  },
];
