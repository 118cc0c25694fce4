/**
 * API tokens (DESIGN §4): `hns_` + 43 base62 characters (≈256 random bits); only the SHA-256 is stored.
 */
import { createHash, randomBytes } from 'node:crypto';
import { z } from 'zod';
import { newId } from '../log/ids.js';
import { SCOPES, type Scope, type StateStore, type TokenRecord } from '../store/index.js';
import { isoNow, requireScope, type ServiceContext } from './context.js';
import { AppError } from './errors.js';

const BASE62 = '0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz';
export const TOKEN_PATTERN = /^hns_[0-9A-Za-z]{43}$/;

/** A new token secret. Rejection sampling keeps every character uniform. */
export function generateTokenSecret(): string {
  let out = 'hns_';
  while (out.length < 4 + 43) {
    for (const b of randomBytes(64)) {
      if (b < 248 && out.length < 4 + 43) out += BASE62[b % 62];
    }
  }
  return out;
}

/** SHA-256 hex of a token secret: the only form in which a token is stored. */
export function hashToken(secret: string): string {
  return createHash('sha256').update(secret, 'utf8').digest('hex');
}

/**
 * The token record for a secret presented by a client, or throws `unauthorized`: one message for no
 * token, another for any refused one (unknown, malformed, revoked or expired alike, so a client learns
 * nothing about which).
 */
export async function authenticate(
  state: StateStore,
  secret: string | null | undefined,
  now: Date,
): Promise<TokenRecord> {
  if (!secret) {
    throw new AppError('unauthorized', 'a token is required: send the header Authorization: Bearer hns_…');
  }
  const refuse = () =>
    new AppError('unauthorized', 'the token was not accepted: it is unknown here, revoked or expired');
  if (!TOKEN_PATTERN.test(secret)) throw refuse();
  const rec = await state.getTokenByHash(hashToken(secret));
  if (!rec || rec.revoked_at !== null) throw refuse();
  if (rec.expires_at !== null && Date.parse(rec.expires_at) <= now.getTime()) throw refuse();
  return rec;
}

export const CreateTokenInput = z.strictObject({
  scopes: z.array(z.enum(SCOPES)).min(1).max(SCOPES.length),
  session: z
    .string()
    .regex(/^s_[0-9A-HJKMNP-TV-Z]{26}$/)
    .nullable()
    .default(null),
  label: z.string().max(120).nullable().default(null),
  /** lifetime in seconds; null = no expiry */
  ttl_seconds: z
    .number()
    .int()
    .min(60)
    .max(10 * 365 * 86400)
    .nullable()
    .default(null),
});
export type CreateTokenInput = z.input<typeof CreateTokenInput>;

/** A created token: the record and the secret, which is shown once and never stored. */
export interface CreatedToken {
  token: string;
  record: TokenRecord;
}

/**
 * Mints a token in a tenant without a caller (bootstrap, the operator's `serve`).
 * @param secret use this secret instead of a random one (`HANSARD_BOOTSTRAP_TOKEN`)
 * @throws AppError `bad_request` for a secret that is not `hns_` + 43 base62 characters
 */
export async function mintToken(
  state: StateStore,
  tenant: string,
  input: CreateTokenInput,
  now: Date,
  secret?: string,
): Promise<CreatedToken> {
  const parsed = CreateTokenInput.parse(input);
  const token = secret ?? generateTokenSecret();
  if (!TOKEN_PATTERN.test(token)) {
    throw new AppError('bad_request', 'a token must be hns_ followed by 43 letters and digits');
  }
  const record: TokenRecord = {
    id: `tok_${newId('e').slice(2)}`,
    tenant,
    hash: hashToken(token),
    scopes: [...new Set(parsed.scopes)] as Scope[],
    session: parsed.session,
    label: parsed.label,
    created_at: now.toISOString(),
    expires_at:
      parsed.ttl_seconds === null ? null : new Date(now.getTime() + parsed.ttl_seconds * 1000).toISOString(),
    revoked_at: null,
    last_used_at: null,
  };
  await state.putToken(record);
  return { token, record };
}

/** `POST /v1/tokens` (scope `admin`): a token in the caller's own tenant. */
export async function createToken({
  ctx,
  input,
}: {
  ctx: ServiceContext;
  input: unknown;
}): Promise<CreatedToken> {
  requireScope(ctx, 'admin');
  const parsed = CreateTokenInput.safeParse(input);
  if (!parsed.success) {
    throw new AppError('invalid_body', 'the token request is not valid', { issues: parsed.error.issues });
  }
  return mintToken(ctx.state, ctx.tenant, parsed.data, ctx.now());
}

/** The public view of a token record (no hash). */
export function publicToken(t: TokenRecord): Omit<TokenRecord, 'hash'> {
  const { hash: _hash, ...rest } = t;
  return rest;
}

/** `GET /v1/tokens` (scope `admin`). */
export async function listTokens({ ctx }: { ctx: ServiceContext }) {
  requireScope(ctx, 'admin');
  return (await ctx.state.listTokens(ctx.tenant)).map(publicToken);
}

/** `DELETE /v1/tokens/{id}` (scope `admin`). @throws AppError `not_found` */
export async function revokeToken({ ctx, id }: { ctx: ServiceContext; id: string }): Promise<void> {
  requireScope(ctx, 'admin');
  if (!(await ctx.state.revokeToken(ctx.tenant, id, isoNow(ctx))))
    throw new AppError('not_found', 'token not found');
}
