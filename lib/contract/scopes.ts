/**
 * Token scopes (DESIGN §4): what a token may do. They are authorization, so they live here, in the
 * service that checks them (`requireScope`); the store keeps a token's scopes as the strings it was given
 * (`TokenRecord.scopes`) and gives them no meaning. A stored name this version does not know grants
 * nothing: every check asks for one of these by name.
 */

/** Every scope a token can carry, in the order the CLI and the docs list them. */
export const SCOPES = ['ingest', 'report', 'read', 'board', 'admin'] as const;
export type Scope = (typeof SCOPES)[number];

/** Whether `name` is one of `SCOPES`. */
export function isScope(name: string): name is Scope {
  return (SCOPES as readonly string[]).includes(name);
}
