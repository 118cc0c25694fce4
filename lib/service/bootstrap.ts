/**
 * First start of a deployment (DESIGN §4): the tenant and its first admin token, created by the operator.
 */
import type { StateStore } from '../store/index.js';
import { type CreatedToken, mintToken } from './tokens.js';

/**
 * Creates `tenant` with an admin token unless it exists. Returns the token (its secret shown once), or
 * null when the tenant was already there.
 * @param secret the admin token to install instead of a random one (`HANSARD_BOOTSTRAP_TOKEN`)
 */
export async function ensureTenant(
  state: StateStore,
  tenant: string,
  now: Date,
  secret?: string,
): Promise<CreatedToken | null> {
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
