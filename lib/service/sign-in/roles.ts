/**
 * Who may come in, and as what (issue 29 item 2). A person's role is decided at every request from the
 * tenant's settings and the person's record as they are now, never from what the cookie held at sign-in:
 * so changing the role map or removing a person takes effect at their next request.
 *
 * The order: an email outside `allowed_domains` is refused; a person an admin removed (`role: none`) is
 * refused; a role an admin gave the person is theirs; else the highest role their groups map to, else the
 * tenant's `default_role`; else refused ("no role mapped").
 */
import { higherRole, type Role } from '../../contract/sign-in.js';
import type { PersonRecord, StoredOidcSettings } from '../../store/index.js';

/** Why a person is refused: outside the allowed domains, removed by an admin, or given no role. */
export type Refusal = 'domain' | 'removed' | 'unmapped';

/** A role, or why there is none. */
export type RoleDecision = { role: Role } | { refused: Refusal; message: string };

/** The domain of `email` (after the last `@`), lower case. */
export function emailDomain(email: string): string {
  return email.slice(email.lastIndexOf('@') + 1).toLowerCase();
}

/**
 * The role of the person `email` with `groups`, under `settings`, given their record (null: never set).
 * Pure: the caller reads the settings and the record.
 */
export function decideRole(
  settings: Pick<StoredOidcSettings, 'allowed_domains' | 'role_map' | 'default_role' | 'tenant'>,
  email: string,
  groups: readonly string[],
  person: Pick<PersonRecord, 'role'> | null,
): RoleDecision {
  const domains = settings.allowed_domains;
  if (domains.length > 0 && !domains.includes(emailDomain(email))) {
    return {
      refused: 'domain',
      message: `${email} is not at a domain tenant ${settings.tenant} lets in (${domains.join(', ')}).`,
    };
  }
  const own = person?.role ?? null;
  if (own === 'none') {
    return { refused: 'removed', message: `An admin of tenant ${settings.tenant} has removed ${email}.` };
  }
  if (own !== null) return { role: own };
  let role: Role | null = null;
  // Own keys only: a group named `constructor` or `__proto__` maps to nothing.
  for (const g of groups)
    role = higherRole(role, Object.hasOwn(settings.role_map, g) ? settings.role_map[g]! : null);
  role = role ?? settings.default_role;
  if (role === null) {
    return {
      refused: 'unmapped',
      message: `${email} has no role in tenant ${settings.tenant}: none of their groups is mapped to one, and the tenant gives none by default.`,
    };
  }
  return { role };
}

/** The groups the role map gives `role` (for "whom to ask": the admin groups). */
export function groupsWithRole(settings: Pick<StoredOidcSettings, 'role_map'>, role: Role): string[] {
  return Object.entries(settings.role_map)
    .filter(([, r]) => r === role)
    .map(([g]) => g);
}
