/**
 * Who may renew, change or stop a work item (issue 24 item 3, docs/work.md "Ownership"): ownership is
 * proved by the request's token, never by what its body says. The body's session, system and actor are
 * still checked against the item (they catch a client naming the wrong item), but they prove nothing:
 * any caller can copy them from `GET /v1/work/{id}`.
 *
 * A token owns an item when it
 * - carries the `admin` scope (the tenant's administrator; work writes still need `report`);
 * - is of the same token chain as the token that started it (`TokenRecord.root`): the starting token
 *   itself, the session tokens minted from it, the token that minted it and the session tokens minted
 *   from that one. A chain is one admin-made token and the session tokens it minted (a session token
 *   cannot mint), i.e. one person's or one harness's credentials: the hook's shipper (the capture
 *   token) and the MCP server or `hansard work` inside the agent (a session token the hook minted from
 *   it) are one chain. A session-bound token is held to its own session before this (404 otherwise).
 * - or, for an item started before the starting token was kept (`started_by` absent), is bound to the
 *   item's session.
 *
 * Why not any token bound to the item's session, as issue 24.3 first put it: any token not bound to a
 * session may mint a token bound to any session (`POST /v1/sessions/{sid}/tokens`, lib/service/tokens.ts),
 * so "bound to the session" alone would let every `report` token take over any item in two requests.
 *
 * A refusal (403 `not_owner`) names no owner: not the item's session, system or actor, nor any token.
 */
import type { TokenRecord, WorkItem } from '../store/index.js';
import { AppError } from './errors.js';
import type { Owner } from './work-schemas.js';

/** What a new item keeps of the token that starts it (`WorkItem.started_by`). */
export function startedBy(caller: TokenRecord): NonNullable<WorkItem['started_by']> {
  return { token: caller.id, root: caller.root };
}

/** Whether `caller`'s token proves it owns `item` (the rules above). */
export function ownsWork(caller: TokenRecord, item: WorkItem): boolean {
  if (caller.scopes.includes('admin')) return true;
  const by = item.started_by;
  if (!by) return caller.session === item.session;
  return caller.root === by.root && (caller.session === null || caller.session === item.session);
}

/**
 * @throws AppError `not_owner` (403) unless `caller` owns `item` and the request names the item's
 *   session, system and actor; the message and details name neither the item's owner nor any token
 */
export function requireOwner(caller: TokenRecord, item: WorkItem, named: Owner): void {
  if (!ownsWork(caller, item)) {
    throw new AppError(
      'not_owner',
      `work ${item.id} was not started by this token's chain: only a token of that chain (the token that started it, or a session token minted from the same token), or an admin, may renew, change or stop it`,
    );
  }
  if (item.session === named.session && item.system === named.system && item.actor === named.actor) return;
  throw new AppError(
    'not_owner',
    `work ${item.id} belongs to another session, system or actor than this request names: name the ones it was started with (GET /v1/work/${item.id})`,
  );
}
