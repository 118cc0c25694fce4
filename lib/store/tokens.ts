/**
 * The tokens port (ADR 4): tokens as stored (never the secret, only its hash) with their child links, and
 * the server's own secrets (the dynamo adapter keeps both on token items, lib/store/dynamo/tokens.ts).
 * Part of the state store. `TokenRecord` is the one schema of a token: the API's `TokenView`
 * (lib/service/tokens/schemas.ts) is it without the hash.
 */
import { z } from 'zod';
import { Instant, SessionId, TokenId } from '../contract/ids.js';

/** A token as stored: never the secret, only its SHA-256 (hex). Times are ISO 8601 strings. */
export const TokenRecord = z.object({
  id: TokenId,
  tenant: z.string(),
  hash: z.string(),
  /**
   * what the token may do, as given when it was made: scope names (lib/contract/scopes.ts), which the
   * store keeps without giving them a meaning; the service decides what each grants
   */
  scopes: z.array(z.string()),
  /** bound to this session only, or null */
  session: SessionId.nullable().describe('the one session it is bound to, or null'),
  label: z.string().nullable(),
  created_at: Instant,
  expires_at: Instant.nullable(),
  revoked_at: Instant.nullable(),
  last_used_at: Instant.nullable().describe('coarse: updated at most once a minute'),
  /**
   * the token that minted this one (`POST /v1/sessions/{sid}/tokens`), or null for a token made by an
   * admin or the operator; a token is refused while any token up its chain is revoked or expired
   */
  parent: TokenId.nullable().describe(
    'the token that minted it (POST /v1/sessions/{sid}/tokens); it stops working with that token. Null for a token an admin or the operator made',
  ),
  /** the first token of its chain (its own id when `parent` is null): whose rate-limit allowance it uses */
  root: TokenId.describe(
    'the first token of its chain (itself when parent is null), whose rate limit it shares',
  ),
});
export type TokenRecord = z.infer<typeof TokenRecord>;

/** A tenant's tokens. */
export interface TokenStore {
  /** @throws StateConflictError when a token with this hash or id exists */
  putToken(token: TokenRecord): Promise<void>;
  getTokenByHash(hash: string): Promise<TokenRecord | null>;
  listTokens(tenant: string): Promise<TokenRecord[]>;
  /** Marks a token revoked; false when the tenant has no such token. */
  revokeToken(tenant: string, id: string, at: string): Promise<boolean>;
  /** Records a use (best effort, may be coarse). */
  touchToken(hash: string, at: string): Promise<void>;
  /** The tenant's token with this id (strongly consistent), or null: how a token's chain is checked. */
  getTokenById(tenant: string, id: string): Promise<TokenRecord | null>;
  /**
   * How many tokens of the tenant `parent` minted that are not revoked and expire after `at` (ISO) or
   * never: what the cap on a token's live children counts.
   */
  countLiveChildren(tenant: string, parent: string, at: string): Promise<number>;
}

/** Secrets of the server itself (e.g. the key cursors are signed with), made once and shared. */
export interface ServerSecrets {
  /**
   * The server secret called `name`, storing `candidate` first when there is none yet. The first write
   * wins: every caller, in every process, gets the same value back (e.g. the key cursors are signed with).
   */
  serverSecret(name: string, candidate: string): Promise<string>;
}
