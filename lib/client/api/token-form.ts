/**
 * Whether a token can be a hansard API token, checked before any request (the trial of issue 24, item 12):
 * a token with a line break in it (a `session_token` an agent was handed, an environment variable) made
 * undici throw `Headers.append: "Bearer hns_…\r\n…" is an invalid header value`, which the client retried
 * as a network failure and the MCP server then quoted, the whole token in it, into the agent's
 * transcript as "cannot reach the server". The client (`ApiClient`) refuses a token that cannot be sent
 * as a header at all; the MCP server refuses a session token that is not of the form the server mints
 * (lib/contract/tokens.ts: `hns_` + 43 base62), each without quoting it.
 */
import { TOKEN_PATTERN as TOKEN_FORM, TOKEN_LENGTH } from '../../contract/tokens.js';
import { UsageError } from './errors.js';

/**
 * What keeps `token` from being sent in an `Authorization` header, in words that do not quote it; null
 * when it can be sent. A header value is visible ASCII here (a token has no spaces, controls or other
 * characters).
 */
export function headerProblem(token: string): string | null {
  if (token.length === 0) return 'is empty';
  if (/[\r\n]/.test(token)) return 'holds a line break';
  // biome-ignore lint/suspicious/noControlCharactersInRegex: control characters are what is looked for
  if (/[\0-\x1f\x7f]/.test(token)) return 'holds a control character';
  if (/\s/.test(token)) return 'holds a space';
  if (/[^\x21-\x7e]/.test(token)) return 'holds a character outside ASCII';
  return null;
}

/**
 * What keeps `token` from being a hansard API token (`hns_` + 43 letters and digits), in words that do
 * not quote it (its length and which rule it breaks); null when it has the form.
 * @example tokenFormProblem('hns_abc\r\nX: 1') // 'holds a line break'
 */
export function tokenFormProblem(token: string): string | null {
  if (TOKEN_FORM.test(token)) return null;
  const header = headerProblem(token);
  if (header) return header;
  if (!token.startsWith('hns_')) return 'does not start with hns_';
  if (token.length !== TOKEN_LENGTH) return `is ${token.length} characters long, not ${TOKEN_LENGTH}`;
  return 'holds a character other than letters and digits after hns_';
}

/** The sentence about a token's form: `what` names it (`the session_token given`, `HANSARD_TOKEN`). */
export function malformedTokenMessage(what: string, problem: string): string {
  return `${what} is not a hansard token: it ${problem} (a token is hns_ followed by 43 letters and digits, one line; it is not repeated here)`;
}

/** A token that cannot be sent or cannot be a hansard token: nothing was sent. Exit code 2 in the CLI. */
export class MalformedToken extends UsageError {
  override name = 'MalformedToken';
  constructor(what: string, problem: string) {
    super(malformedTokenMessage(what, problem), 'malformed_token');
  }
}
