/**
 * Listing cursors as clients see them (DESIGN §4 `next`): the store's own cursor, signed with
 * HMAC-SHA256 under a key of this deployment, so that a client can only hand back a cursor this server
 * gave, to the same tenant, under the same session binding, for the same listing. A forged, altered or
 * borrowed cursor is refused with 400 `invalid_cursor` before any store reads it.
 *
 * The key is a server secret kept in the state store (`ServerSecrets.serverSecret`): created by whichever
 * process needs it first, with a conditional write, so every process of a deployment (one `hansard serve`,
 * or every Lambda instance on one table) signs alike, and a restart keeps cursors valid. It is read once
 * per store and process.
 */
import { createHmac, randomBytes, timingSafeEqual } from 'node:crypto';
import type { ServerSecrets } from '../../store/index.js';
import type { ServiceContext } from '../shared/context.js';
import { AppError } from '../shared/errors.js';

/** The name of the signing key among the server secrets; a new name would start a new key. */
export const CURSOR_KEY_NAME = 'cursor-hmac-sha256-v1';

/** A cursor as clients see it: base64url of the store's cursor (at most 1,024 characters), `.`, the MAC. */
export const SEALED_CURSOR = /^([A-Za-z0-9_-]{1,1024})\.([A-Za-z0-9_-]{43})$/;

/** The listings whose cursors are signed; the name is part of what is signed. */
export type CursorListing = 'sessions' | 'people' | 'audit';

const keys = new WeakMap<ServerSecrets, Promise<Buffer>>();

/** The signing key of this store's deployment (made on first use; a failed read is tried again next time). */
function cursorKey(state: ServerSecrets): Promise<Buffer> {
  let key = keys.get(state);
  if (!key) {
    key = state
      .serverSecret(CURSOR_KEY_NAME, randomBytes(32).toString('base64url'))
      .then((v) => Buffer.from(v, 'base64url'));
    keys.set(state, key);
    key.catch(() => keys.delete(state));
  }
  return key;
}

/** What the MAC covers: the listing, the tenant, the caller's binding and the store's cursor. */
async function mac(ctx: ServiceContext, listing: CursorListing, inner: string): Promise<Buffer> {
  const bound = ctx.caller.session ?? '';
  return createHmac('sha256', await cursorKey(ctx.state))
    .update(JSON.stringify(['hansard-cursor', listing, ctx.tenant, bound, inner]))
    .digest();
}

/**
 * The cursor to give a client for the store's cursor `inner`: `{base64url(inner)}.{base64url(mac)}`.
 * @param listing which listing it pages (a cursor of one listing is refused by another)
 */
export async function sealCursor(
  ctx: ServiceContext,
  listing: CursorListing,
  inner: string,
): Promise<string> {
  const tag = await mac(ctx, listing, inner);
  return `${Buffer.from(inner, 'utf8').toString('base64url')}.${tag.toString('base64url')}`;
}

/**
 * The store's cursor inside a cursor a client sent, once its signature checks out for this tenant,
 * binding and listing.
 * @throws AppError `invalid_cursor` (400) for anything else
 */
export async function openCursor(
  ctx: ServiceContext,
  listing: CursorListing,
  sealed: string,
): Promise<string> {
  const refuse = () =>
    new AppError(
      'invalid_cursor',
      'the cursor is not one this server gave for this listing: start from the first page',
    );
  const m = SEALED_CURSOR.exec(sealed);
  if (!m) throw refuse();
  const inner = Buffer.from(m[1]!, 'base64url').toString('utf8');
  // Only the one encoding this server writes: no second spelling of a cursor is accepted.
  if (Buffer.from(inner, 'utf8').toString('base64url') !== m[1]) throw refuse();
  const expected = Buffer.from((await mac(ctx, listing, inner)).toString('base64url'));
  if (!timingSafeEqual(Buffer.from(m[2]!), expected)) throw refuse();
  return inner;
}
