/**
 * Validation of the parts of storage keys (DESIGN §3, §5): keys and paths are built only from these.
 * Adapters check again what the routes already checked, so a bug upstream cannot become a traversal.
 */
import { isId } from '../log/ids.js';
import type { SegmentKey } from './ports.js';

/** Tenant names: lower-case letters, digits and `-`, 1 to 63 characters, starting with a letter or digit. */
export const TENANT_PATTERN = /^[a-z0-9][a-z0-9-]{0,62}$/;

/** True when `name` is a valid tenant name. */
export function isTenantName(name: unknown): name is string {
  return typeof name === 'string' && TENANT_PATTERN.test(name);
}

/** @throws TypeError when any part of the key is not a valid id */
export function assertSegmentKey(key: SegmentKey): void {
  if (!isTenantName(key.tenant))
    throw new TypeError(`invalid tenant in storage key: ${JSON.stringify(key.tenant)}`);
  if (!isId('s', key.sid))
    throw new TypeError(`invalid session id in storage key: ${JSON.stringify(key.sid)}`);
  if (!isId('w', key.w)) throw new TypeError(`invalid writer id in storage key: ${JSON.stringify(key.w)}`);
}
