/**
 * The token methods of `SqliteStateStore` (ADR 4; ../tokens.ts): tokens in table `tokens` (their scopes
 * one JSON text; `parent` and `root` added to a database made before token chains, the store's opening
 * transaction does that) and server secrets in `server_secrets`. Split from the store so that each file
 * stays readable, as the DynamoDB adapter's dynamo/tokens.ts is.
 */
import { StateConflictError } from '../errors.js';
import type { ServerSecrets, TokenRecord, TokenStore } from '../tokens.js';
import type { SqlitePrimitives } from './status-work.js';

type Row = Record<string, unknown>;

/** The `StateStore` token and server secret methods on SQLite; each answers as `DynamoStateStore`'s does. */
export class SqliteTokens implements TokenStore, ServerSecrets {
  constructor(private readonly x: SqlitePrimitives) {}

  async putToken(t: TokenRecord): Promise<void> {
    try {
      this.x
        .q(
          `INSERT INTO tokens (id, tenant, hash, scopes, session, label, created_at, expires_at, revoked_at, last_used_at,
           parent, root) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`,
        )
        .run(
          t.id,
          t.tenant,
          t.hash,
          JSON.stringify(t.scopes),
          t.session,
          t.label,
          t.created_at,
          t.expires_at,
          t.revoked_at,
          t.last_used_at,
          t.parent,
          t.root,
        );
    } catch (err) {
      if ((err as { code?: string }).code?.startsWith('SQLITE_CONSTRAINT')) {
        throw new StateConflictError('a token with this id or hash exists');
      }
      throw err;
    }
  }

  async getTokenByHash(hash: string): Promise<TokenRecord | null> {
    const row = this.x.q('SELECT * FROM tokens WHERE hash = ?').get(hash) as Row | undefined;
    return row ? toToken(row) : null;
  }

  async listTokens(tenant: string): Promise<TokenRecord[]> {
    const rows = this.x
      .q('SELECT * FROM tokens WHERE tenant = ? ORDER BY created_at, id')
      .all(tenant) as Row[];
    return rows.map(toToken);
  }

  async revokeToken(tenant: string, id: string, at: string): Promise<boolean> {
    const r = this.x
      .q('UPDATE tokens SET revoked_at = COALESCE(revoked_at, ?) WHERE tenant = ? AND id = ?')
      .run(at, tenant, id) as { changes: number };
    return r.changes > 0;
  }

  async touchToken(hash: string, at: string): Promise<void> {
    this.x.q('UPDATE tokens SET last_used_at = ? WHERE hash = ?').run(at, hash);
  }

  async getTokenById(tenant: string, id: string): Promise<TokenRecord | null> {
    const row = this.x.q('SELECT * FROM tokens WHERE tenant = ? AND id = ?').get(tenant, id) as
      | Row
      | undefined;
    return row ? toToken(row) : null;
  }

  async countLiveChildren(tenant: string, parent: string, at: string): Promise<number> {
    const row = this.x
      .q(
        `SELECT COUNT(*) AS n FROM tokens WHERE tenant = ? AND parent = ? AND revoked_at IS NULL
         AND (expires_at IS NULL OR expires_at > ?)`,
      )
      .get(tenant, parent, at) as { n: number };
    return row.n;
  }

  async serverSecret(name: string, candidate: string): Promise<string> {
    this.x.q('INSERT OR IGNORE INTO server_secrets (name, value) VALUES (?, ?)').run(name, candidate);
    return (this.x.q('SELECT value FROM server_secrets WHERE name = ?').get(name) as { value: string }).value;
  }
}

function toToken(row: Row): TokenRecord {
  return {
    ...(row as unknown as TokenRecord),
    scopes: JSON.parse(row.scopes as string) as string[],
    parent: (row.parent as string | null) ?? null,
    root: (row.root as string | null) ?? (row.id as string),
  };
}
