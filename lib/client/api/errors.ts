/**
 * CLI errors and exit codes (DESIGN §6): 0 success, 1 failure, 2 usage or refusal (bad input, or the
 * server refused the request with a 4xx).
 */

/**
 * A mistake the user can fix: bad arguments, a directory that is not a session. Exit code 2. `code` is
 * the `error.code` of `--json` output: `usage` unless a more specific one lets a script tell the case
 * apart (e.g. `segment_changed`: a file is not the segment the server holds).
 */
export class UsageError extends Error {
  override name = 'UsageError';
  constructor(
    message: string,
    readonly code: string = 'usage',
  ) {
    super(message);
  }
}

/** Exit with this code after printing nothing more (the message was already printed). */
export class ExitError extends Error {
  override name = 'ExitError';
  constructor(readonly exitCode: number) {
    super(`exit ${exitCode}`);
  }
}

/**
 * A failure the command explains in a sentence (a transfer the server broke off): printed as
 * `hansard: MESSAGE` with no stack trace, exit code 1.
 */
export class FailureError extends Error {
  override name = 'FailureError';
}
