/**
 * The PostgreSQL search index's tables (issue 30 items 4 and 6), created by `migrateSearchSchema` through
 * `SqlRunner.admin` as the tables' owner; every statement is idempotent (`IF NOT EXISTS`, policies created
 * only when missing), so a deploy runs it every time.
 *
 * - `search_docs`: one row per searchable document, keyed `(tenant, sid, w, seq)` (reports: `w = ''`). It
 *   keeps the document's own `text` and `terms`, the winning fix's (`fix_text`, `fix_terms`; null: no
 *   fix), and `tsv`, generated with the `simple` configuration (no stemming, no stop words: the terms are
 *   already lib/service/search/terms.ts's words) from the effective terms, behind a GIN index. A fix's
 *   terms are its text's alone, so with a fix `tsv` also holds `facets`, the names of the document's tool,
 *   agent and person (NFKC), read by the `simple` parser: a corrected message of Priya's is still found
 *   by `priya`.
 * - `search_fixes`: corrections, keyed by the correction event `(tenant, sid, w, seq)` and what it fixes.
 * - `search_causes`: recorded causes (`SearchCause`, version 2): message `message_id` filed under `key`,
 *   a document's `cause`; the `person:` filter reads it by its primary key's prefix `(tenant, sid, key)`.
 * - `search_cursors`: each writer's indexed length (the condition of `applyWriter`).
 * - `search_facts`: each session's reported state and title.
 * - `search_schema`: the schema's version (one row).
 *
 * The SQL says `CAST(x AS t)` rather than `x::t` throughout: the Data API reads `:name` as a parameter, and
 * a cast's colons are best kept out of its way.
 *
 * Tenants never meet (item 6): each table has row-level security ENABLEd, with a policy that admits only
 * rows whose `tenant` is the transaction's `hansard.tenant` (`SqlRunner.transaction` sets it), for reads
 * and writes alike, on top of each statement's own `tenant = :tenant`. The app connects as a role that
 * owns nothing and is granted only row access (`appRole` below; neither a superuser nor `BYPASSRLS`, which
 * skip every policy): on Aurora through the Data API, the role of the app secret the functions are given
 * (infra/search.ts), which the indexer makes as the cluster's master user (`ensureAppRole`) before it
 * migrates.
 * FORCE makes the owner subject to the policies too, on every table (on `search_docs` only when no app
 * role is given):
 *
 * Row-level security and the GIN index. Under a policy, PostgreSQL evaluates the policy before any
 * condition of the query that is not LEAKPROOF, and `tsvector @@ tsquery` is not: a search as the app
 * role cannot use the GIN index and reads every row of the tenant (measured: a parallel sequential scan,
 * 110 ms for 200,000 rows, against 7 ms through the index). Marking the operator LEAKPROOF takes a
 * superuser, which Aurora does not give. So the index is read by `search_matching` (below), a SECURITY
 * DEFINER function of the owner; it answers only keys `(sid, w, seq)` of the transaction's tenant (and
 * their rank), and the search joins them to `search_docs` as the app role, under the policy: every row a
 * search answers has still passed row-level security. The function reaches the index only where
 * `search_docs`' policy is not FORCEd on the owner, which `migrateSearchSchema` does when given the app
 * role (`appRole`: the app is not the owner). Without it the app may be the owner, so everything stays
 * FORCEd: still correct and isolated, but every search reads all of the tenant's rows. Deploy with an app
 * role of its own.
 */
import type { SqlRunner } from './runner.js';

/**
 * The schema's version: raised with every change to the statements below (and a migration for it).
 * 2: `search_causes` (a database of version 1 gets it from `CREATE TABLE IF NOT EXISTS`; the documents
 * indexed before keep their old `cause`, a message id that is no key: a reindex files their causes).
 * 3: `search_matching(q, x, f, lim)` ranks at most the `lim` newest matches that pass the filters (it
 * replaces `search_matching(q)`, dropped), and `search_docs_newest` (tenant, at_us DESC NULLS LAST), the
 * order of the candidates and of a filter-only page, replaces `search_docs_at` (DESC, nulls first).
 */
export const SEARCH_SCHEMA_VERSION = 3;

/** The tables holding a tenant's rows, each under the tenant policy. */
export const SEARCH_TABLES = [
  'search_docs',
  'search_fixes',
  'search_causes',
  'search_cursors',
  'search_facts',
] as const;

/** The tenant as the transaction set it; NULL outside one (so no row matches). */
const TENANT_SETTING = "current_setting('hansard.tenant', true)";

const TABLES = [
  `CREATE TABLE IF NOT EXISTS search_schema (
    name text PRIMARY KEY,
    version integer NOT NULL
  )`,
  `CREATE TABLE IF NOT EXISTS search_docs (
    tenant text NOT NULL,
    sid text NOT NULL,
    w text NOT NULL,
    seq bigint NOT NULL,
    id text NOT NULL,
    ts text NOT NULL,
    at_us bigint,
    type text NOT NULL,
    field text NOT NULL,
    agent text,
    person text,
    person_name text,
    tool text,
    cause text,
    text text NOT NULL,
    terms text NOT NULL,
    facets text NOT NULL,
    fix_text text,
    fix_terms text,
    tsv tsvector GENERATED ALWAYS AS (
      to_tsvector(CAST('simple' AS regconfig), COALESCE(fix_terms, terms))
      || CASE WHEN fix_terms IS NULL THEN CAST('' AS tsvector)
        ELSE to_tsvector(CAST('simple' AS regconfig), facets) END
    ) STORED,
    PRIMARY KEY (tenant, sid, w, seq)
  )`,
  'CREATE INDEX IF NOT EXISTS search_docs_tsv ON search_docs USING gin (tsv)',
  // A fix finds its target, and a person filter the messages of an action's cause, by id.
  'CREATE INDEX IF NOT EXISTS search_docs_id ON search_docs (tenant, sid, id)',
  // Filter-only queries (no words) are ordered newest first, unknown instants last, and so are the
  // candidates of a common word (search_matching walks it, testing each row, and stops at its limit).
  'CREATE INDEX IF NOT EXISTS search_docs_newest ON search_docs (tenant, at_us DESC NULLS LAST)',
  'DROP INDEX IF EXISTS search_docs_at',
  `CREATE TABLE IF NOT EXISTS search_fixes (
    tenant text NOT NULL,
    sid text NOT NULL,
    w text NOT NULL,
    seq bigint NOT NULL,
    target_id text NOT NULL,
    field text NOT NULL,
    text text NOT NULL,
    terms text NOT NULL,
    at_us bigint,
    by_id text NOT NULL,
    PRIMARY KEY (tenant, sid, w, seq, target_id, field)
  )`,
  'CREATE INDEX IF NOT EXISTS search_fixes_target ON search_fixes (tenant, sid, target_id, field)',
  `CREATE TABLE IF NOT EXISTS search_causes (
    tenant text NOT NULL,
    sid text NOT NULL,
    key text NOT NULL,
    message_id text NOT NULL,
    PRIMARY KEY (tenant, sid, key, message_id)
  )`,
  `CREATE TABLE IF NOT EXISTS search_cursors (
    tenant text NOT NULL,
    sid text NOT NULL,
    w text NOT NULL,
    length bigint NOT NULL,
    PRIMARY KEY (tenant, sid, w)
  )`,
  `CREATE TABLE IF NOT EXISTS search_facts (
    tenant text NOT NULL,
    sid text NOT NULL,
    state text,
    title text,
    PRIMARY KEY (tenant, sid)
  )`,
];

/**
 * Row-level security on `table`: enabled, forced on the owner too (but for `search_docs` when `force` is
 * false: see the module comment), one policy for reads and writes.
 */
function tenantPolicy(table: string, force: boolean): string[] {
  return [
    `ALTER TABLE ${table} ENABLE ROW LEVEL SECURITY`,
    force
      ? `ALTER TABLE ${table} FORCE ROW LEVEL SECURITY`
      : `ALTER TABLE ${table} NO FORCE ROW LEVEL SECURITY`,
    // CREATE POLICY has no IF NOT EXISTS (PostgreSQL 15): created only when missing, in one statement.
    `DO $$ BEGIN
      IF NOT EXISTS (SELECT 1 FROM pg_policies WHERE schemaname = current_schema() AND tablename = '${table}'
          AND policyname = 'tenant_rows') THEN
        CREATE POLICY tenant_rows ON ${table}
          USING (tenant = ${TENANT_SETTING})
          WITH CHECK (tenant = ${TENANT_SETTING});
      END IF;
    END $$`,
  ];
}

/**
 * `search_matching(q, x, f, lim)`: the keys of the transaction tenant's documents whose `tsv` matches `q`,
 * not `x` (null: no exclusion), and pass the filters `f` (the `EngineQuery` filters as JSON: a key left
 * out filters nothing, as search-query.ts applies them), newest first (`at_us DESC NULLS LAST`, then sid,
 * w, seq), at most `lim` of them (the candidates, lib/store/search.ts `SEARCH_CANDIDATES`), each with its
 * rank (`ts_rank_cd` normalized by the log of the length: search-query.ts) computed on those alone: a word
 * in most documents costs `lim` ranks, not one per match. Read as the tables' owner (SECURITY DEFINER,
 * which row-level security does not hold back on `search_docs`, not FORCEd; the other tables it reads are
 * FORCEd, so under the policy), with the tenant filter written in it. PL/pgSQL's EXECUTE … USING plans the
 * fixed statement with the call's values (nothing of them is in its text), so the planner sees the words
 * and the filters given: a rare word through the GIN index, a common one by walking `search_docs_newest`
 * until `lim` rows passed. Its search_path is fixed (the schema, then pg_temp last), and only the app role
 * may run it. Replaced by every migration (CREATE OR REPLACE), serialized by an advisory lock (concurrent
 * replaces of one function fail with "tuple concurrently updated"); version 2's `search_matching(q)` is
 * dropped.
 */
const MATCHING_FUNCTION = `DO $$ BEGIN
  PERFORM pg_advisory_xact_lock(hashtext('hansard.search_matching'));
  EXECUTE format($f$
    CREATE OR REPLACE FUNCTION search_matching(q tsquery, x tsquery, f jsonb, lim integer)
    RETURNS TABLE (sid text, w text, seq bigint, rank real)
    LANGUAGE plpgsql STABLE SECURITY DEFINER ROWS 100
    SET search_path = %I, pg_temp
    AS $b$
    DECLARE
      -- Each filter of a column as an array of its values (null when not given), compared with = ANY: the
      -- planner reads the values given against the statistics of the column (the rows of one session by
      -- the key). The folded ones (tool, person) have no statistics: as a set from f, which the planner
      -- takes as a filter that keeps most rows (measured: = ANY made it sort every match of a common word
      -- for a person filter, 0.4 s against 20 ms).
      agents text[] := CASE WHEN f -> 'agent' IS NOT NULL
        THEN ARRAY(SELECT jsonb_array_elements_text(f -> 'agent')) END;
      types text[] := CASE WHEN f -> 'type' IS NOT NULL
        THEN ARRAY(SELECT jsonb_array_elements_text(f -> 'type')) END;
      sids text[] := CASE WHEN f -> 'sid' IS NOT NULL
        THEN ARRAY(SELECT jsonb_array_elements_text(f -> 'sid')) END;
      states text[] := CASE WHEN f -> 'state' IS NOT NULL
        THEN ARRAY(SELECT jsonb_array_elements_text(f -> 'state')) END;
    BEGIN
      RETURN QUERY EXECUTE $s$
        SELECT c.sid, c.w, c.seq, ts_rank_cd(c.tsv, $1, 1) FROM (
          SELECT d.sid, d.w, d.seq, d.tsv FROM search_docs d
          WHERE d.tenant = current_setting('hansard.tenant', true) AND d.tsv @@ $1
            AND ($2 IS NULL OR NOT d.tsv @@ $2)
            AND ($4 IS NULL OR d.agent = ANY ($4))
            AND ($5 -> 'tool' IS NULL
              OR lower(d.tool) IN (SELECT lower(v) FROM jsonb_array_elements_text($5 -> 'tool') AS v))
            AND ($6 IS NULL OR d.type = ANY ($6))
            AND ($7 IS NULL OR d.sid = ANY ($7))
            AND ($8 IS NULL OR d.at_us >= $8)
            AND ($9 IS NULL OR d.at_us < $9)
            AND ($10 IS NULL OR EXISTS (
              SELECT 1 FROM search_facts fa WHERE fa.tenant = d.tenant AND fa.sid = d.sid
                AND fa.state = ANY ($10)))
            AND ($5 -> 'person' IS NULL
              OR lower(d.person) IN (SELECT lower(v) FROM jsonb_array_elements_text($5 -> 'person') AS v)
              OR lower(d.person_name) IN (SELECT lower(v) FROM jsonb_array_elements_text($5 -> 'person') AS v)
              OR (d.cause IS NOT NULL AND EXISTS (
                SELECT 1 FROM search_causes k
                JOIN search_docs c ON c.tenant = k.tenant AND c.sid = k.sid AND c.id = k.message_id
                WHERE k.tenant = d.tenant AND k.sid = d.sid AND k.key = d.cause AND c.type = 'message'
                  AND (lower(c.person) IN (SELECT lower(v) FROM jsonb_array_elements_text($5 -> 'person') AS v)
                    OR lower(c.person_name) IN
                      (SELECT lower(v) FROM jsonb_array_elements_text($5 -> 'person') AS v)))))
          ORDER BY d.at_us DESC NULLS LAST, d.sid COLLATE "C", d.w COLLATE "C", d.seq
          LIMIT $3
        ) c
      $s$ USING q, x, lim, agents, f, types, sids, CAST(f ->> 'after_us' AS bigint),
        CAST(f ->> 'before_us' AS bigint), states;
    END $b$
  $f$, current_schema());
  REVOKE ALL ON FUNCTION search_matching(tsquery, tsquery, jsonb, integer) FROM PUBLIC;
  DROP FUNCTION IF EXISTS search_matching(tsquery);
END $$`;

/** A role name as SQL takes it unquoted (lowercase letters, digits, `_`): grants name it in the text. */
const ROLE_NAME = /^[a-z_][a-z0-9_]{0,62}$/;

/**
 * The statements of the schema, in order; with `appRole`, the grants that let that role read and write
 * the rows (and read the version) without owning anything.
 * @throws Error when `appRole` is not a plain lowercase role name
 */
export function searchSchemaStatements(options: { appRole?: string } = {}): string[] {
  // With an app role of its own, the owner is not the app: search_docs' policy is not FORCEd on it, so its
  // search_matching reads the GIN index. Without one the app may be the owner, and everything stays FORCEd.
  const forceDocs = options.appRole === undefined;
  const out = [
    ...TABLES,
    ...SEARCH_TABLES.flatMap((t) => tenantPolicy(t, t !== 'search_docs' || forceDocs)),
    MATCHING_FUNCTION,
  ];
  out.push(
    // Raised to this code's version once its statements ran; never lowered (older code then refuses).
    `INSERT INTO search_schema (name, version) VALUES ('search', ${SEARCH_SCHEMA_VERSION})
      ON CONFLICT (name) DO UPDATE SET version = GREATEST(search_schema.version, EXCLUDED.version)`,
  );
  if (options.appRole !== undefined) {
    if (!ROLE_NAME.test(options.appRole)) {
      throw new Error(`searchSchemaStatements: "${options.appRole}" is not a plain lowercase role name`);
    }
    out.push(`GRANT SELECT, INSERT, UPDATE, DELETE ON ${SEARCH_TABLES.join(', ')} TO ${options.appRole}`);
    out.push(`GRANT SELECT ON search_schema TO ${options.appRole}`);
    out.push(
      `GRANT EXECUTE ON FUNCTION search_matching(tsquery, tsquery, jsonb, integer) TO ${options.appRole}`,
    );
  }
  return out;
}

/** The app role's login, as its secret holds it (on AWS: lib/deploy/aws-search.ts `appLoginOf`). */
export interface AppLogin {
  /** the role's name: a plain lowercase name (`ROLE_NAME`) */
  role: string;
  password: string;
  /**
   * what changes whenever the password does (on AWS the secret's `VersionId`): the role keeps the one its
   * password was set from (its comment), so an unchanged login is not written again
   */
  version: string;
}

/** The role comment that says which version of its secret set its password. */
const LOGIN_MARK_PREFIX = 'hansard app role; password from secret version ';

/**
 * Makes the app role a login with `login.password` (issue 30 item 6), as the owner (a role allowed to
 * create roles: on Aurora the cluster's master user): creates it when missing, sets its password again
 * when `login.version` is not the one it was last set from, else changes nothing. In one transaction: the
 * name, password and version go in as parameters of `set_config(…, true)` (gone at its end, never in the
 * statement's text, which the server may log), and a DO block reads them and runs `CREATE ROLE` or
 * `ALTER ROLE` built with `format('%I', '%L')`. An advisory lock for the transaction serializes containers
 * that start together (two ALTER ROLEs of one role at once can fail with "tuple concurrently updated").
 * Then `migrateSearchSchema(runner, { appRole: login.role })` grants it the rows.
 * @throws Error when `login.role` is not a plain lowercase role name; the server's error when the role
 *   exists as a superuser or BYPASSRLS (row-level security would not hold it) or the runner's role may
 *   not create roles
 */
export async function ensureAppRole(runner: SqlRunner, login: AppLogin): Promise<void> {
  if (!ROLE_NAME.test(login.role)) {
    throw new Error(`ensureAppRole: "${login.role}" is not a plain lowercase role name`);
  }
  // No tenant (''): the transaction reads no tenant's rows.
  await runner.transaction('', async (tx) => {
    await tx.query(
      `SELECT set_config('hansard.app_role', :role, true), set_config('hansard.app_password', :password, true),
        set_config('hansard.app_mark', :mark, true)`,
      { role: login.role, password: login.password, mark: `${LOGIN_MARK_PREFIX}${login.version}` },
    );
    await tx.query(ENSURE_ROLE);
  });
}

/** The DO block of `ensureAppRole` (its inputs are the transaction's settings). */
const ENSURE_ROLE = `DO $$
DECLARE
  r text := current_setting('hansard.app_role');
  pw text := current_setting('hansard.app_password');
  mark text := current_setting('hansard.app_mark');
  existing pg_roles%ROWTYPE;
BEGIN
  PERFORM pg_advisory_xact_lock(hashtext('hansard.app_role'));
  SELECT * INTO existing FROM pg_roles WHERE rolname = r;
  IF NOT FOUND THEN
    EXECUTE format('CREATE ROLE %I LOGIN PASSWORD %L', r, pw);
  ELSIF existing.rolsuper OR existing.rolbypassrls THEN
    RAISE EXCEPTION 'the search app role % is a superuser or BYPASSRLS: row-level security would not hold it', r;
  ELSIF shobj_description(existing.oid, 'pg_authid') IS DISTINCT FROM mark OR NOT existing.rolcanlogin THEN
    EXECUTE format('ALTER ROLE %I LOGIN PASSWORD %L', r, pw);
  ELSE
    RETURN;
  END IF;
  EXECUTE format('COMMENT ON ROLE %I IS %L', r, mark);
END $$`;

/**
 * Creates what is missing of the schema (see the module comment) through `runner.admin`, as the owner.
 * @throws Error when the database holds a newer schema than this code knows (a rollback of the code
 *   after a migration: refusing beats writing rows the newer schema would misread)
 */
export async function migrateSearchSchema(
  runner: SqlRunner,
  options: { appRole?: string } = {},
): Promise<void> {
  for (const sql of searchSchemaStatements(options)) await runner.admin(sql);
  const [row] = await runner.admin("SELECT version FROM search_schema WHERE name = 'search'");
  const version = Number(row?.version);
  if (version > SEARCH_SCHEMA_VERSION) {
    throw new Error(
      `the search database holds schema version ${version}; this code knows up to ${SEARCH_SCHEMA_VERSION}`,
    );
  }
}
