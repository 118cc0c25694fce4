/**
 * `GET /v1/tokens/self` from the client side (issue 24 item 5): what the client's own token is, above
 * all which session it is bound to. `hansard mcp serve` asks it when a harness hands it a session token
 * and no session id (seed 000: "pass it through … `session_token` in MCP").
 */
import { z } from 'zod';
import { type ApiClient, ServerError } from './client.js';

/**
 * The answer as this client reads it: the fields it uses, any others ignored, scopes as plain strings (a
 * newer server may know scopes this version does not).
 */
export const TokenSelf = z.looseObject({
  id: z.string(),
  scopes: z.array(z.string()),
  session: z.string().nullable(),
  label: z.string().nullable(),
  expires_at: z.string().nullable(),
});
export type TokenSelf = z.infer<typeof TokenSelf>;

/**
 * The client's own token: id, scopes, bound session (null for an unbound token), label, expiry (RFC 3339
 * or null). One request.
 * @throws ServerError: the server's own (401 `unauthorized` for a token it does not accept; 404 from a
 *   server older than the route), or 502 `bad_answer` when the answer is not a token's description;
 *   NetworkError when the server cannot be reached
 */
export async function fetchTokenSelf(client: ApiClient): Promise<TokenSelf> {
  const res = await client.request('GET', '/v1/tokens/self');
  const parsed = TokenSelf.safeParse(res.body);
  if (!parsed.success) {
    const err = new ServerError(
      502,
      'bad_answer',
      `GET /v1/tokens/self answered something that does not describe a token: ${z.prettifyError(parsed.error).slice(0, 300)}`,
    );
    err.path = '/v1/tokens/self';
    throw err;
  }
  return parsed.data;
}
