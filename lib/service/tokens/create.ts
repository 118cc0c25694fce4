/**
 * API tokens (DESIGN §4): `hns_` + 43 base62 characters (≈256 random bits); only the SHA-256 is stored.
 * Admins create any token of their tenant (`createToken`); a harness gets a token bound to its one session
 * from whoever may already do what it asks (`createSessionToken`).
 */
import { createHash, randomBytes } from 'node:crypto';
import { z } from 'zod';
import { isScope, SCOPES, type Scope } from '../../contract/scopes.js';
import { TOKEN_PATTERN } from '../../contract/tokens.js';
import { idPattern, newId } from '../../log/format/ids.js';
import type { TokenRecord, TokenStore } from '../../store/index.js';
import { type AuditVia, recordAudit } from '../audit-log/index.js';
import { isoNow, requireScope, requireSessionAccess, type ServiceContext } from '../shared/context.js';
import { AppError, parseInput } from '../shared/errors.js';
import type { TokenSelfView, TokenView } from './schemas.js';

const BASE62 = '0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz';

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
 * How many links up its chain `authenticate` follows from a token. Chains are one link long today (a
 * session token cannot mint), so a longer one is refused rather than walked: the bound keeps a request
 * at a known number of reads.
 */
const MAX_CHAIN_LINKS = 4;

/**
 * The token record for a secret presented by a client, or throws `unauthorized`: one message for no
 * token, another for any refused one (unknown, malformed, revoked or expired alike, so a client learns
 * nothing about which). A token minted by another token (`parent`) is refused as soon as any token up its
 * chain is revoked, expired or gone: one more read of the state store per link, so that revoking a token
 * stops everything minted from it at once, however it raced with the minting.
 */
export async function authenticate(
  state: TokenStore,
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
  let link = rec;
  for (let links = 0; link.parent !== null; links++) {
    const parent = links < MAX_CHAIN_LINKS ? await state.getTokenById(rec.tenant, link.parent) : null;
    if (!parent || parent.revoked_at !== null) throw refuse();
    if (parent.expires_at !== null && Date.parse(parent.expires_at) <= now.getTime()) throw refuse();
    link = parent;
  }
  return rec;
}

export const CreateTokenInput = z
  .strictObject({
    scopes: z.array(z.enum(SCOPES)).min(1).max(SCOPES.length),
    session: z.string().regex(idPattern('s')).nullable().default(null),
    label: z.string().max(120).nullable().default(null),
    /** lifetime in seconds; null = no expiry */
    ttl_seconds: z
      .number()
      .int()
      .min(60)
      .max(10 * 365 * 86400)
      .nullable()
      .default(null),
  })
  .meta({ id: 'CreateTokenInput' });
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
  state: TokenStore,
  tenant: string,
  input: CreateTokenInput,
  now: Date,
  secret?: string,
): Promise<CreatedToken> {
  const parsed = CreateTokenInput.parse(input);
  const expiresAt =
    parsed.ttl_seconds === null ? null : new Date(now.getTime() + parsed.ttl_seconds * 1000).toISOString();
  return storeToken(state, tenant, { ...parsed, expires_at: expiresAt }, null, now, secret);
}

/**
 * Makes and stores a token record with these fields, minted by `parent` (null: a root token, its own
 * chain). @throws AppError `bad_request` for a bad `secret`
 */
async function storeToken(
  state: TokenStore,
  tenant: string,
  fields: Pick<TokenRecord, 'scopes' | 'session' | 'label' | 'expires_at'>,
  parent: TokenRecord | null,
  now: Date,
  secret?: string,
): Promise<CreatedToken> {
  const token = secret ?? generateTokenSecret();
  if (!TOKEN_PATTERN.test(token)) {
    throw new AppError('bad_request', 'a token must be hns_ followed by 43 letters and digits');
  }
  const id = `tok_${newId('e').slice(2)}`;
  const record: TokenRecord = {
    id,
    tenant,
    hash: hashToken(token),
    scopes: [...new Set(fields.scopes)],
    session: fields.session,
    label: fields.label,
    created_at: now.toISOString(),
    expires_at: fields.expires_at,
    revoked_at: null,
    last_used_at: null,
    parent: parent?.id ?? null,
    root: parent?.root ?? id,
  };
  await state.putToken(record);
  return { token, record };
}

/**
 * The token administration routes need the `admin` scope on a token bound to no session: a session-bound
 * token sees nothing outside its session, and the tenant's tokens (their sessions among them) are outside.
 * @throws AppError `forbidden`
 */
function requireTenantAdmin(ctx: ServiceContext): void {
  requireScope(ctx, 'admin');
  if (ctx.caller.session !== null) {
    throw new AppError(
      'forbidden',
      'a session-bound token cannot administer tokens: use an unbound admin token',
      {
        required: ['admin'],
      },
    );
  }
}

/**
 * `POST /v1/tokens` (scope `admin`, not session-bound): a token in the caller's own tenant. With
 * `session`, the rules of `createSessionToken` apply (ingest/report/read only, at most 30 days, 24 h by default).
 * Records `token.create` in the audit list (issue 29 item 4; `via`: where it was asked, default `api`).
 */
export async function createToken({
  ctx,
  input,
  via = 'api',
}: {
  ctx: ServiceContext;
  input: unknown;
  via?: AuditVia;
}): Promise<CreatedToken> {
  requireTenantAdmin(ctx);
  const request = parseInput(CreateTokenInput, input, 'the token request');
  // A session-bound token follows the same rules however it is asked for (no admin or board scope,
  // always an expiry): see createSessionToken.
  const created =
    request.session !== null
      ? await createSessionToken({
          ctx,
          sid: request.session,
          input: {
            scopes: request.scopes,
            label: request.label,
            ...(request.ttl_seconds !== null ? { ttl_seconds: request.ttl_seconds } : {}),
          },
        })
      : await mintToken(ctx.state, ctx.tenant, request, ctx.now());
  const r = created.record;
  await recordAudit(ctx, {
    action: 'token.create',
    target: r.id,
    detail: [
      `scopes ${r.scopes.join(',')}`,
      ...(r.session ? [`session ${r.session}`] : []),
      ...(r.label ? [`label ${JSON.stringify(r.label)}`] : []),
      `expires ${r.expires_at ?? 'never'}`,
    ].join('; '),
    via,
  });
  return created;
}

/** The scopes a session-bound token may carry: never `admin` or `board`. */
export const SESSION_SCOPES = ['ingest', 'report', 'read'] as const satisfies readonly Scope[];
/**
 * How many unexpired, unrevoked session tokens one token may have minted at a time: each costs a stored
 * record, and a flood of them is what the cap stops (they share their root's rate limit anyway).
 */
export const MAX_LIVE_CHILD_TOKENS = 100;
/** A session token's lifetime: 24 hours unless asked, at most 30 days. */
export const SESSION_TOKEN_DEFAULT_TTL_SECONDS = 86_400;
export const SESSION_TOKEN_MAX_TTL_SECONDS = 30 * 86_400;

export const CreateSessionTokenInput = z
  .strictObject({
    /** checked against `SESSION_SCOPES` after parsing, so that `admin` is refused by name */
    scopes: z.array(z.enum(SCOPES)).min(1).max(SCOPES.length).default(['ingest', 'report']),
    ttl_seconds: z
      .number()
      .int()
      .min(60)
      .max(SESSION_TOKEN_MAX_TTL_SECONDS)
      .default(SESSION_TOKEN_DEFAULT_TTL_SECONDS),
    label: z.string().max(120).nullable().default(null),
  })
  .meta({ id: 'CreateSessionTokenInput' });
export type CreateSessionTokenInput = z.input<typeof CreateSessionTokenInput>;

/**
 * `POST /v1/sessions/{sid}/tokens`: a token bound to session `sid` for a harness, e.g. an agent that
 * should ship its own segment and post its status and nothing else. Body
 * `{scopes?: ('ingest'|'report'|'read')[] = ['ingest','report'], ttl_seconds?: 60…2592000 = 86400, label?}`.
 *
 * Who may mint one: an `admin`, or the holder of a token not bound to any session whose scopes include
 * each requested scope (a token can hand on what it has, never more). The new token's `parent` is the
 * caller: it expires no later than the caller, stops working when the caller is revoked or expires
 * (`authenticate`), and shares the caller's root's rate limit. A caller may have at most
 * `MAX_LIVE_CHILD_TOKENS` live ones. The session need not exist yet: the harness creates it.
 * @throws AppError `invalid_body` (400) for a malformed body or a scope other than ingest/report/read
 *   (`details.refused`); `forbidden` (403) for a scope the caller lacks (`details.required`) or a
 *   session-bound caller that is not an admin; `not_found` (404) for a session-bound caller and another
 *   session; `too_many_tokens` (409) when the caller already has `MAX_LIVE_CHILD_TOKENS` live ones
 */
export async function createSessionToken({
  ctx,
  sid,
  input,
}: {
  ctx: ServiceContext;
  sid: string;
  input: unknown;
}): Promise<CreatedToken> {
  requireSessionAccess(ctx, sid);
  const request = parseInput(CreateSessionTokenInput, input, 'the session token request');
  const scopes = [...new Set(request.scopes)];
  const refused = scopes.filter((s) => !(SESSION_SCOPES as readonly Scope[]).includes(s));
  if (refused.length > 0) {
    throw new AppError(
      'invalid_body',
      `a session token may carry only the ${SESSION_SCOPES.join(', ')} scopes, not ${refused.join(', ')}`,
      { refused, allowed: [...SESSION_SCOPES] },
    );
  }
  const now = ctx.now();
  let expires = now.getTime() + request.ttl_seconds * 1000;
  if (!ctx.caller.scopes.includes('admin')) {
    if (ctx.caller.session !== null) {
      throw new AppError('forbidden', 'a session-bound token cannot mint tokens: ask with an unbound token', {
        required: ['admin'],
      });
    }
    const missing = scopes.filter((s) => !ctx.caller.scopes.includes(s));
    if (missing.length > 0) {
      throw new AppError(
        'forbidden',
        `this token lacks the ${missing.join(', ')} scope, so it cannot hand it on: ask an admin`,
        { required: missing },
      );
    }
  }
  // A token never outlives the one that minted it, an admin's included.
  if (ctx.caller.expires_at !== null) expires = Math.min(expires, Date.parse(ctx.caller.expires_at));
  const live = await ctx.state.countLiveChildren(ctx.tenant, ctx.caller.id, now.toISOString());
  if (live >= MAX_LIVE_CHILD_TOKENS) {
    throw new AppError(
      'too_many_tokens',
      `this token already has ${live} unexpired session tokens minted from it, the most it may have: ` +
        'wait until some expire, have an admin revoke some (DELETE /v1/tokens/{id}), or mint with another token',
      { max_live_tokens: MAX_LIVE_CHILD_TOKENS, live_tokens: live },
    );
  }
  return storeToken(
    ctx.state,
    ctx.tenant,
    { scopes, session: sid, label: request.label, expires_at: new Date(expires).toISOString() },
    ctx.caller,
    now,
  );
}

/**
 * The public view of a token record (no hash). A stored scope name this version does not know grants
 * nothing (`requireScope` asks for known names only), so it is not shown as granted either.
 */
export function publicToken(t: TokenRecord): TokenView {
  const { hash: _hash, scopes, ...rest } = t;
  return { ...rest, scopes: scopes.filter(isScope) };
}

/**
 * `GET /v1/tokens/self` (any scope, session-bound or not; issue 24 item 5): the caller's own token as
 * `TokenSelfView` (id, scopes, bound session or null, label, created and expiry times). It names nothing
 * the caller does not already hold: the MCP server asks it which session a harness's token is bound to.
 */
export function tokenSelf({ ctx }: { ctx: ServiceContext }): TokenSelfView {
  const { id, scopes, session, label, created_at, expires_at } = publicToken(ctx.caller);
  return { id, scopes, session, label, created_at, expires_at };
}

/** `GET /v1/tokens` (scope `admin`, not session-bound). */
export async function listTokens({ ctx }: { ctx: ServiceContext }): Promise<TokenView[]> {
  requireTenantAdmin(ctx);
  return (await ctx.state.listTokens(ctx.tenant)).map(publicToken);
}

/**
 * `DELETE /v1/tokens/{id}` (scope `admin`, not session-bound). The session tokens minted from it stop
 * working too: `authenticate` refuses a token whose parent is revoked. Records `token.revoke` in the audit
 * list (issue 29 item 4; `via` default `api`). @throws AppError `not_found`
 */
export async function revokeToken({
  ctx,
  id,
  via = 'api',
}: {
  ctx: ServiceContext;
  id: string;
  via?: AuditVia;
}): Promise<void> {
  requireTenantAdmin(ctx);
  if (!(await ctx.state.revokeToken(ctx.tenant, id, isoNow(ctx))))
    throw new AppError('not_found', 'token not found');
  await recordAudit(ctx, { action: 'token.revoke', target: id, detail: null, via });
}
