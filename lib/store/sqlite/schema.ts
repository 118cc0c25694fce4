/**
 * The tables of `SqliteStateStore` (one SQLite file, `{data}/state.sqlite`), as made by a first open.
 * Columns added since a table first shipped are added to older databases by the store's migrations
 * (sqlite/summary.ts, sqlite/digest-index.ts, sqlite/tenants.ts), not here. Split from the store so that
 * each file stays readable.
 */

/** `CREATE … IF NOT EXISTS` of every table and index, run in the store's schema transaction. */
export const SCHEMA = `
CREATE TABLE IF NOT EXISTS tenants (name TEXT PRIMARY KEY, created_at TEXT NOT NULL);
CREATE TABLE IF NOT EXISTS tokens (
  id TEXT PRIMARY KEY, tenant TEXT NOT NULL, hash TEXT NOT NULL UNIQUE, scopes TEXT NOT NULL,
  session TEXT, label TEXT, created_at TEXT NOT NULL, expires_at TEXT, revoked_at TEXT, last_used_at TEXT,
  parent TEXT, root TEXT
);
CREATE INDEX IF NOT EXISTS tokens_tenant ON tokens (tenant);
CREATE TABLE IF NOT EXISTS server_secrets (name TEXT PRIMARY KEY, value TEXT NOT NULL);
CREATE TABLE IF NOT EXISTS sessions (
  tenant TEXT NOT NULL, sid TEXT NOT NULL, created_at TEXT NOT NULL, updated_at TEXT NOT NULL,
  writers INTEGER NOT NULL, lines INTEGER NOT NULL, bytes INTEGER NOT NULL, PRIMARY KEY (tenant, sid)
);
CREATE INDEX IF NOT EXISTS sessions_updated ON sessions (tenant, updated_at DESC, sid DESC);
CREATE TABLE IF NOT EXISTS writers (
  tenant TEXT NOT NULL, sid TEXT NOT NULL, w TEXT NOT NULL, length INTEGER NOT NULL, lines INTEGER NOT NULL,
  last_seq INTEGER, ended INTEGER NOT NULL, agent TEXT, created_at TEXT NOT NULL, updated_at TEXT NOT NULL,
  provenance TEXT, token_id TEXT, token_label TEXT, mixed_tokens INTEGER,
  PRIMARY KEY (tenant, sid, w)
);
CREATE TABLE IF NOT EXISTS chunks (
  tenant TEXT NOT NULL, sid TEXT NOT NULL, w TEXT NOT NULL, offset INTEGER NOT NULL, length INTEGER NOT NULL,
  sha256 TEXT NOT NULL, lines INTEGER NOT NULL, last_seq INTEGER, PRIMARY KEY (tenant, sid, w, offset)
);
CREATE TABLE IF NOT EXISTS tenant_usage (tenant TEXT PRIMARY KEY, bytes INTEGER NOT NULL);
CREATE TABLE IF NOT EXISTS status (
  tenant TEXT NOT NULL, sid TEXT NOT NULL, state TEXT NOT NULL, note TEXT NOT NULL, events TEXT NOT NULL,
  reported_by TEXT NOT NULL, reported_at TEXT NOT NULL, PRIMARY KEY (tenant, sid)
);
CREATE TABLE IF NOT EXISTS work_items (
  tenant TEXT NOT NULL, id TEXT NOT NULL, sid TEXT NOT NULL, item TEXT NOT NULL, version INTEGER NOT NULL,
  PRIMARY KEY (tenant, id)
);
CREATE INDEX IF NOT EXISTS work_items_session ON work_items (tenant, sid, id);
CREATE TABLE IF NOT EXISTS claimed_keys (
  tenant TEXT NOT NULL, scope TEXT NOT NULL, key TEXT NOT NULL, value TEXT NOT NULL, claimed_at TEXT NOT NULL,
  PRIMARY KEY (tenant, scope, key)
);
CREATE TABLE IF NOT EXISTS status_records (
  tenant TEXT NOT NULL, sid TEXT NOT NULL, record TEXT NOT NULL, version INTEGER NOT NULL,
  PRIMARY KEY (tenant, sid)
);
CREATE TABLE IF NOT EXISTS search_queue (
  tenant TEXT NOT NULL, sid TEXT NOT NULL, w TEXT NOT NULL, since TEXT NOT NULL, version INTEGER NOT NULL,
  PRIMARY KEY (tenant, sid, w)
);
CREATE INDEX IF NOT EXISTS search_queue_since ON search_queue (since);
CREATE INDEX IF NOT EXISTS search_queue_tenant ON search_queue (tenant, since);
`;
