/**
 * What the token verbs and routes answer (DESIGN §4): a token as listed (`publicToken`, `listTokens`),
 * never its hash; a new token with its secret, shown once. The request bodies are in `./create.ts`.
 */
import { z } from 'zod';
import { Instant, SessionId, TokenId } from '../../contract/ids.js';
import { SCOPES } from '../../contract/scopes.js';
import { TOKEN_PATTERN } from '../../contract/tokens.js';
import { TokenRecord } from '../../store/index.js';

/** A token as listed (`TokenRecord` without its hash): never its secret or hash; only the scopes this version knows. */
export const TokenView = TokenRecord.omit({ hash: true })
  .extend({ scopes: z.array(z.enum(SCOPES)) })
  .meta({ id: 'TokenView' });
export type TokenView = z.infer<typeof TokenView>;

const Secret = z
  .string()
  .regex(TOKEN_PATTERN)
  .describe('the secret, shown this once: send it as Authorization: Bearer hns_…');

/** `POST /v1/tokens`: the new token's view and its secret. */
export const CreatedTokenView = z
  .object({ token: Secret, ...TokenView.shape })
  .meta({ id: 'CreatedToken', description: 'a new token with its secret' });
export type CreatedTokenView = z.infer<typeof CreatedTokenView>;

/** `POST /v1/sessions/{sid}/tokens`: a token bound to one session, for a harness. */
export const SessionTokenView = z
  .object({
    token: Secret,
    id: TokenId,
    scopes: z.array(z.enum(SCOPES)),
    session: SessionId.describe('the session it is bound to'),
    expires_at: Instant,
  })
  .meta({ id: 'SessionToken', description: 'a new session token with its secret' });
export type SessionTokenView = z.infer<typeof SessionTokenView>;

/**
 * `GET /v1/tokens/self`: what the caller's own token is (issue 24 item 5), for a client that holds only
 * a secret (a harness's session token) and must know which session it is bound to. No hash, no secret,
 * no other token's id (no `parent` or `root`), no tenant.
 */
export const TokenSelfView = TokenView.pick({
  id: true,
  scopes: true,
  session: true,
  label: true,
  created_at: true,
  expires_at: true,
}).meta({ id: 'TokenSelf', description: 'the token that made this request' });
export type TokenSelfView = z.infer<typeof TokenSelfView>;

/** `GET /v1/tokens`. */
export const TokenList = z.object({ tokens: z.array(TokenView) }).meta({ id: 'TokenList' });
export type TokenList = z.infer<typeof TokenList>;
