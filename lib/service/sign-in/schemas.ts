/**
 * The shapes of the sign-in admin verbs beyond the contract's (lib/contract/sign-in.ts): a tenant name as
 * a path names it, and the pages of people.
 */
import { z } from 'zod';
import type { PersonView } from '../../contract/sign-in.js';
import { TENANT_PATTERN } from '../../store/index.js';

/** A tenant's name (`{tenant}` of `/v1/tenants/{tenant}/oidc`): 1 to 63 lower-case letters, digits and `-`. */
export const TenantName = z
  .string()
  .regex(
    TENANT_PATTERN,
    'a tenant name is 1 to 63 lower-case letters, digits and -, starting with a letter or digit',
  )
  .describe('the tenant: the caller’s own (another one answers 404, as a tenant that does not exist)');

/** A page of the tenant's people, by email; `next` the signed cursor of the page after (null: last). */
export interface PeoplePage {
  people: PersonView[];
  next: string | null;
}
