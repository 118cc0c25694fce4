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
 *
 * An item started before the starting token was kept (`started_by` absent, a legacy item) is owned by
 * the admin scope alone: nothing in it says which chain started it.
 *
 * Why not any token bound to the item's session, as issue 24.3 first put it (and, until the attack of
 * test/attack/work-owner-takeover.test.ts, for legacy items): any token not bound to a session may mint a
 * token bound to any session (`POST /v1/sessions/{sid}/tokens`, lib/service/tokens/create.ts), so "bound to the
 * session" alone would let every `report` token take over any item in two requests (mint, stop).
 *
 * A refusal (403 `not_owner`) names no owner: not the item's session, system or actor, nor any token.
 * The owner's own token naming another session, system or actor than the item's is `409 work_mismatch`.
 */

import type { Owner } from '../../contract/work.js';
import type { TokenRecord, WorkItem } from '../../store/index.js';
import { AppError } from '../shared/errors.js';

/** What a new item keeps of the token that starts it (`WorkItem.started_by`). */
export function startedBy(caller: TokenRecord): NonNullable<WorkItem['started_by']> {
  return { token: caller.id, root: caller.root };
}

/** Whether `caller`'s token proves it owns `item` (the rules above). */
export function ownsWork(caller: TokenRecord, item: WorkItem): boolean {
  if (caller.scopes.includes('admin')) return true;
  const by = item.started_by;
  if (!by) return false;
  return caller.root === by.root && (caller.session === null || caller.session === item.session);
}

/**
 * Refuses a request that may not write `item`, in words a newcomer can act on (issue 24.3; the wording,
 * the trial of issues 24/25): not the owner, `not_owner` (403), saying whose tokens may write it (no
 * "chain": "the token it was started with and the session tokens made from the same token") and what to
 * do instead (start an item of one's own), naming neither the item's owner nor any token; the owner naming
 * another session, system or actor than the item's, `work_mismatch` (409), saying which of the three
 * differ (`details.fields`) and the command that shows the item's (`hansard work status wk_… --json`):
 * the caller proved it owns the item, so this tells it nothing it could not read.
 * @throws AppError `not_owner` (403), `work_mismatch` (409)
 */
export function requireOwner(caller: TokenRecord, item: WorkItem, named: Owner): void {
  if (!ownsWork(caller, item)) throw new AppError('not_owner', notOwnerMessage(caller, item));
  const fields = (['session', 'system', 'actor'] as const).filter((k) => item[k] !== named[k]);
  if (fields.length === 0) return;
  throw new AppError(
    'work_mismatch',
    `work ${item.id} was started with another ${words(fields)} than this request names: send the session, system and actor it was started with (\`hansard work status ${item.id} --json\` shows them; the API: GET /v1/work/${item.id})`,
    { fields },
  );
}

/** Why `caller` may not write `item`, and what it may do instead; names no owner. */
function notOwnerMessage(caller: TokenRecord, item: WorkItem): string {
  const next =
    'To report your own work, start an item of your own: hansard work start (the API: POST /v1/work)';
  if (!item.started_by) {
    return `work ${item.id} was started before hansard kept which token starts an item, so only an admin may renew, change or stop it. ${next}`;
  }
  const whose =
    caller.session === null
      ? 'was started with another token'
      : 'was started with another token than the one this session token was made from';
  return `work ${item.id} ${whose}: only the token it was started with, the session tokens made from the same token, or an admin may renew, change or stop it. ${next}`;
}

/** `session`, `system and actor`, `session, system and actor`. */
function words(fields: readonly string[]): string {
  return fields.length === 1
    ? fields[0]!
    : `${fields.slice(0, -1).join(', ')} and ${fields[fields.length - 1]}`;
}
