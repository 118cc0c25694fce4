/**
 * What `hansard serve` writes when it starts (issue 8, durability attack B): tenant `local` and its admin
 * token on the first start, and at every start a new board link that replaces the last. A full or
 * read-only data directory must not keep a server from serving what it holds: once the tenant exists, a
 * refused write only costs this start its new board link (a warning says so; reads work, writes answer
 * 507 or 503 until the operator fixes the disk). Only a first start that cannot create its tenant, or
 * stores that cannot be opened at all, is refused, with a sentence and no stack trace.
 */
import { ensureTenant } from '../service/tenants/bootstrap.js';
import { type CreatedToken, mintToken } from '../service/tokens/create.js';
import { type StorageFaultKind, storageFaultKind } from '../store/errors.js';
import type { StateStore } from '../store/index.js';

/** The label of the token a board link carries. */
export const BOARD_LINK_LABEL = 'board link';
/** Lifetime of the board link's token. */
const BOARD_LINK_TTL_SECONDS = 30 * 86400;

/** `hansard serve` cannot start on this data directory; the message says why and what to do (exit 2). */
export class StartRefusedError extends Error {
  override name = 'StartRefusedError';
}

/** The kind of storage fault `err` (or its cause) is, or null. */
function faultKind(err: unknown): StorageFaultKind | null {
  return storageFaultKind(err) ?? storageFaultKind((err as { cause?: unknown } | null)?.cause);
}

/** How the data directory refuses, in words for the operator. */
function refusal(kind: StorageFaultKind, data: string): string {
  switch (kind) {
    case 'full':
      return `the disk holding ${data} is full`;
    case 'read_only':
      return `the data directory ${data} is on a read-only filesystem`;
    case 'permission':
      return `this user may not write the data directory ${data}`;
    case 'layout':
      return `the data directory ${data} holds a file where a folder should be (or the reverse)`;
  }
}

/**
 * `err` as a refused start when the data directory refused a write or an open (full, read-only, not
 * ours, laid out wrong), else null. For a failure before anything is served: opening the stores.
 */
export function refusedStart(err: unknown, data: string, what: string): StartRefusedError | null {
  const kind = faultKind(err);
  if (kind === null) return null;
  return new StartRefusedError(
    `${refusal(kind, data)}: hansard serve cannot ${what} (${(err as { code?: string }).code ?? kind}). ` +
      `${kind === 'full' ? `Free some space (df -h ${data})` : 'Fix the data directory (see docs/operations.md)'} ` +
      'or pass another --data, then start again',
  );
}

/**
 * Tenant `local` with its admin token on the first start (see `ensureTenant`); null when it exists.
 * @throws StartRefusedError when the data directory refuses to store it (nothing to serve without it)
 */
export async function ensureLocalTenant(
  state: StateStore,
  tenant: string,
  data: string,
  now: Date,
  bootstrapToken?: string,
): Promise<CreatedToken | null> {
  try {
    return await ensureTenant(state, tenant, now, bootstrapToken);
  } catch (err) {
    throw refusedStart(err, data, `create tenant "${tenant}" and its admin token on its first start`) ?? err;
  }
}

/** This start's board link, or why there is none. */
export interface BoardLink {
  token: CreatedToken | null;
  /** set when the link could not be made or the earlier ones not revoked: a line for the operator */
  warning: string | null;
}

/**
 * A new board-scoped token for this start's link, then the earlier links revoked (like Jupyter: they do
 * not pile up in `token list`). Minted first, so that a refused write leaves the previous link working
 * rather than none. A full or read-only data directory is a warning, not a failure.
 * @throws what the state store throws for anything but a storage fault
 */
export async function newBoardLink(
  state: StateStore,
  tenant: string,
  data: string,
  now: Date,
): Promise<BoardLink> {
  let token: CreatedToken;
  try {
    token = await mintToken(
      state,
      tenant,
      { scopes: ['board'], label: BOARD_LINK_LABEL, ttl_seconds: BOARD_LINK_TTL_SECONDS },
      now,
    );
  } catch (err) {
    const kind = faultKind(err);
    if (kind === null) throw err;
    return {
      token: null,
      warning: `${refusal(kind, data)}: no new board link this start; ${consequence(kind)}`,
    };
  }
  try {
    for (const t of await state.listTokens(tenant)) {
      if (t.label === BOARD_LINK_LABEL && t.revoked_at === null && t.id !== token.record.id) {
        await state.revokeToken(tenant, t.id, now.toISOString());
      }
    }
  } catch (err) {
    const kind = faultKind(err);
    if (kind === null) throw err;
    return {
      token,
      warning: `${refusal(kind, data)}: the board links of earlier starts still work this time; ${consequence(kind)}`,
    };
  }
  return { token, warning: null };
}

/** What a refused start-up write means for the clients. */
function consequence(kind: StorageFaultKind): string {
  switch (kind) {
    case 'full':
      return 'reads work, writes answer 507 until space is freed';
    case 'read_only':
      return 'reads work, writes answer 503 until it is writable again';
    default:
      return 'reads work, writes fail until the operator fixes it (see docs/operations.md)';
  }
}

/**
 * The warning for a state database this server had to open exclusively (`SqliteStateStore.exclusive`: the
 * disk had no room for SQLite's shared-memory file), or null.
 */
export function exclusiveStateWarning(state: StateStore, data: string): string | null {
  if (!(state as { exclusive?: boolean }).exclusive) return null;
  return (
    `the disk holding ${data} is full: its state database is held by this server alone, so ` +
    '`hansard tenant create --data` cannot run beside it until it is restarted with room'
  );
}
