import type { z } from 'zod';

/**
 * One error type for every refusal a verb can make (STYLE §6). Its `code` decides the HTTP status in
 * `lib/http` and the exit code in the CLI; its message is a sentence a person can act on (DESIGN §4).
 */

/** Error codes and the HTTP status each one maps to. */
export const ERROR_STATUS = {
  bad_request: 400,
  invalid_id: 400,
  invalid_body: 400,
  empty_body: 400,
  incomplete_line: 400,
  missing_writer_start: 400,
  misrouted_line: 400,
  invalid_cursor: 400,
  // A search query that does not parse: the message says what and where (issue 30, docs/search.md).
  bad_query: 400,
  // An alert target URL that is not one, carries credentials or resolves to a private address (issue 28).
  invalid_target: 400,
  unauthorized: 401,
  forbidden: 403,
  not_owner: 403,
  not_found: 404,
  offset_mismatch: 409,
  conflict: 409,
  too_many_tokens: 409,
  too_many_targets: 409,
  work_stopped: 409,
  // The item's own token naming another session, system or actor than it was started with (docs/work.md).
  work_mismatch: 409,
  idempotency_mismatch: 409,
  payload_too_large: 413,
  too_many_lines: 413,
  quota_exceeded: 413,
  unprocessable: 422,
  content_rule: 422,
  rate_limited: 429,
  too_many_replays: 429,
  too_many_streams: 429,
  internal: 500,
  // Storage faults (issue 8; docs/operations.md says what each means for an operator).
  data_loss: 500,
  storage_permission_denied: 500,
  storage_layout: 500,
  storage_read_only: 503,
  summary_not_updated: 503,
  // Signed digests (issue 15.2): no digest store or signer configured; the signing key refused or is unreachable.
  digests_unavailable: 503,
  signing_unavailable: 503,
  // An export up to a digest that is not stored; a deployment that writes no digest, for a session with none.
  digest_not_found: 404,
  no_digest: 409,
  insufficient_storage: 507,
  // A stored replay of a large session that could not be merged (issue 17.2): ask again in a minute.
  replay_build_failed: 503,
  // A deployment started without an alert sealer (an app built for a test): alerts cannot be set up.
  alerts_unavailable: 503,
  // A deployment started without a sign-in sealer (issue 29): OIDC cannot be set up or used; tokens still work.
  sign_in_unavailable: 503,
  // A deployment with no search index (an app built for a test), or a query the engine did not finish in time.
  search_unavailable: 503,
  search_timeout: 503,
  // The tenant's OIDC provider could not be reached or answered wrongly (its discovery, keys or token endpoint).
  provider_unavailable: 502,
} as const;

export type ErrorCode = keyof typeof ERROR_STATUS;

/** A refusal with a stable code, a message for a person, and details for a program. */
export class AppError extends Error {
  override name = 'AppError';
  /** @param options.cause what failed underneath (a storage fault): the server's log shows it for a 5xx */
  constructor(
    readonly code: ErrorCode,
    message: string,
    readonly details: Record<string, unknown> = {},
    options: { cause?: unknown } = {},
  ) {
    super(message, options);
  }

  get status(): (typeof ERROR_STATUS)[ErrorCode] {
    return ERROR_STATUS[this.code];
  }
}

/** The 404 for anything missing or another tenant's: the same body either way (DESIGN §4). */
export function notFound(what: string): AppError {
  return new AppError('not_found', `${what} not found`);
}

/**
 * `input` through a verb's zod schema: the parsed value, or `invalid_body` (400) whose `details.issues`
 * name each problem as `{path: "events.0.evidence.0.ref", message}` (one shape for every verb).
 * @param what the request, for the message ("the status report")
 */
export function parseInput<T>(schema: z.ZodType<T>, input: unknown, what: string): T {
  const parsed = schema.safeParse(input);
  if (parsed.success) return parsed.data;
  throw new AppError('invalid_body', `${what} is not valid`, {
    issues: parsed.error.issues.map((i) => ({ path: i.path.map(String).join('.'), message: i.message })),
  });
}
