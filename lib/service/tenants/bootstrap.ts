/**
 * First start of a deployment (DESIGN §4): the tenant and its first admin token, created by the operator.
 */

import { TOKEN_PATTERN } from '../../contract/tokens.js';
import type { TenantStore, TokenStore } from '../../store/index.js';
import { AppError } from '../shared/errors.js';
import { type CreatedToken, mintToken } from '../tokens/create.js';

/**
 * Creates `tenant` with an admin token unless it exists. Returns the token (its secret shown once), or
 * null when the tenant was already there.
 * @param secret the admin token to install instead of a random one (`HANSARD_BOOTSTRAP_TOKEN`)
 * @throws AppError `bad_request` for a `secret` that is not `hns_` + 43 base62 characters, before anything
 *   is stored (a tenant created without its token could never be used)
 */
export async function ensureTenant(
  state: TenantStore & TokenStore,
  tenant: string,
  now: Date,
  secret?: string,
): Promise<CreatedToken | null> {
  if (secret !== undefined && !TOKEN_PATTERN.test(secret)) {
    throw new AppError('bad_request', 'a token must be hns_ followed by 43 letters and digits');
  }
  if (await state.tenantExists(tenant)) return null;
  await state.createTenant(tenant, now.toISOString());
  return mintToken(
    state,
    tenant,
    { scopes: ['admin', 'ingest', 'report', 'read', 'board'], label: 'bootstrap admin' },
    now,
    secret,
  );
}

/**
 * A new admin token for an existing `tenant`, for an operator whose admins lost theirs (`hansard tenant
 * admin-token`): the same scopes as the first one, labelled `recovery admin`; every other token is kept
 * (revoke what was lost with the new one). Runs on the state store itself, as `ensureTenant` does.
 * @returns the token, its secret shown once; null when there is no such tenant (nothing is stored)
 */
export async function mintRecoveryAdmin(
  state: TenantStore & TokenStore,
  tenant: string,
  now: Date,
): Promise<CreatedToken | null> {
  if (!(await state.tenantExists(tenant))) return null;
  return mintToken(
    state,
    tenant,
    { scopes: ['admin', 'ingest', 'report', 'read', 'board'], label: 'recovery admin' },
    now,
  );
}
