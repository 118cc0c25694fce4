/**
 * The architecture's rules (DESIGN §2, issue 9.4) as data, and `violations`, which names every import
 * that breaks one: `lib/service/x.ts:12 imports lib/store/sqlite/state-store.ts: <the rule>`.
 *
 * Decisions these rules record:
 * - Scopes are the service's (lib/contract/scopes.ts); the store keeps a token's scopes as plain strings
 *   (`TokenRecord.scopes: string[]`), so no store module needs the service.
 * - The board's pages (lib/board) are views of the service; their routes and sign-in live in lib/http
 *   (lib/http/routes/pages/), which imports the pages: nothing runs back from lib/board to lib/http.
 * - lib/ratelimit is a port (`interface.ts`, with `noop.ts` as the no-limit default) and adapters
 *   (`memory.ts`, `dynamo.ts`), like lib/store.
 * - `HANSARD_VERSION` lives in lib/log (the writer records it); lib/version.ts re-exports it.
 */
import { type Edge, unitOf } from './import-graph.js';

/** Which units each unit may import (DESIGN §2's "depends on", with the wiring in lib/deploy). */
export const MAY_IMPORT: Record<string, readonly string[]> = {
  'lib/log': [],
  // the audit digests' contract, hashing rules, signers, bundles and offline verifier (issue 15)
  'lib/audit': ['lib/log'],
  'lib/version.ts': ['lib/log'],
  'lib/index.ts': ['lib/log', 'lib/version.ts'],
  'lib/store': ['lib/log', 'lib/audit'],
  'lib/ratelimit': ['lib/store'],
  'lib/service': ['lib/log', 'lib/store', 'lib/audit'],
  'lib/board': ['lib/log', 'lib/service', 'lib/version.ts'],
  'lib/http': [
    'lib/log',
    'lib/service',
    'lib/board',
    'lib/store',
    'lib/ratelimit',
    'lib/version.ts',
    'lib/audit',
  ],
  'lib/importers': ['lib/log'],
  'lib/deploy': ['lib/http', 'lib/service', 'lib/store', 'lib/ratelimit', 'lib/audit'],
  // talking to a server from this machine: the HTTP client, its settings, upload, the state dir's place
  'lib/client': ['lib/log', 'lib/service', 'lib/audit'],
  // local work leases and pending operations (seed 004)
  'lib/work': ['lib/log', 'lib/service', 'lib/client'],
  // capture as it happens: hooks, spool, shipper, doctor, integrations
  'lib/capture': ['lib/log', 'lib/service', 'lib/importers', 'lib/client', 'lib/work', 'lib/version.ts'],
  'lib/mcp': ['lib/log', 'lib/service', 'lib/client', 'lib/capture', 'lib/version.ts'],
  'lib/cli': [
    'lib/log',
    'lib/service',
    'lib/store',
    'lib/importers',
    'lib/deploy',
    'lib/version.ts',
    'lib/client',
    'lib/capture',
    'lib/mcp',
    'lib/work',
    'lib/audit',
  ],
  functions: ['lib/deploy', 'lib/http', 'lib/store', 'lib/ratelimit'],
  infra: ['functions', 'lib/store'],
};

/**
 * What each module of lib/store and lib/ratelimit is: a port (the interfaces, their errors, the key
 * rules every adapter shares), a key layout of one backend, or an adapter of a family (modules of one
 * family may import each other). A new module there must be placed here.
 */
export const ROLES: Record<string, 'port' | 'keys' | { adapter: string }> = {
  'lib/store/index.ts': 'port',
  'lib/store/ports.ts': 'port',
  'lib/store/storage-errors.ts': 'port',
  'lib/store/keys.ts': 'port',
  // how both adapters encode a status record (and read one an earlier hansard wrote)
  'lib/store/status-record.ts': 'port',
  'lib/store/session-summary.ts': 'port',
  'lib/store/digest-ports.ts': 'port',
  // the tables of the SQLite state store
  'lib/store/sqlite/schema.ts': { adapter: 'sqlite' },
  // a tenant's own limits as both adapters keep them (issue 17.1, 17.3)
  'lib/store/tenant-settings.ts': 'port',
  'lib/store/sqlite/tenants.ts': { adapter: 'sqlite' },
  'lib/store/dynamo/tenants.ts': { adapter: 'dynamo' },
  'lib/store/dynamo/schema.ts': 'keys',
  'lib/store/dynamo/access.ts': 'keys',
  'lib/store/fs/segment-store.ts': { adapter: 'fs' },
  'lib/store/sqlite/state-store.ts': { adapter: 'sqlite' },
  'lib/store/sqlite/status-work.ts': { adapter: 'sqlite' },
  'lib/store/sqlite/summary.ts': { adapter: 'sqlite' },
  // group commit of the writer index (issue 16.3): the queue and the batch SQLite runs
  'lib/store/sqlite/group-commit.ts': { adapter: 'sqlite' },
  'lib/store/sqlite/advance.ts': { adapter: 'sqlite' },
  'lib/store/s3/segment-store.ts': { adapter: 's3' },
  // the names of a writer's objects and the GET of one part; what S3's error answers mean
  'lib/store/s3/segment-objects.ts': { adapter: 's3' },
  'lib/store/s3/errors.ts': { adapter: 's3' },
  // windowed, budgeted reads of chunk objects (issue 16.4)
  'lib/store/s3/segment-read.ts': { adapter: 's3' },
  // stored copies of large replays and their build markers (issue 17.2)
  'lib/store/s3/replay-archive.ts': { adapter: 's3' },
  // compaction of small chunk objects (issue 17.2): the layout both sides read, and the S3 side
  'lib/store/segment-objects.ts': 'port',
  'lib/store/s3/compaction.ts': { adapter: 's3' },
  'lib/store/dynamo/state-store.ts': { adapter: 'dynamo' },
  'lib/store/dynamo/tokens.ts': { adapter: 'dynamo' },
  'lib/store/dynamo/items.ts': { adapter: 'dynamo' },
  'lib/store/dynamo/status-work.ts': { adapter: 'dynamo' },
  // no hot keys on ingest (issue 17.1, ADR 8): the writer's transaction, the session index, retries,
  // and the pending counts of a follow-up that failed for good
  'lib/store/dynamo/writers.ts': { adapter: 'dynamo' },
  'lib/store/dynamo/sessions.ts': { adapter: 'dynamo' },
  'lib/store/dynamo/retry.ts': { adapter: 'dynamo' },
  'lib/store/dynamo/pending.ts': { adapter: 'dynamo' },
  // the audit digests (issue 15)
  'lib/store/fs/durable.ts': { adapter: 'fs' },
  'lib/store/fs/digest-store.ts': { adapter: 'fs' },
  'lib/store/s3/digest-store.ts': { adapter: 's3' },
  'lib/store/sqlite/digest-index.ts': { adapter: 'sqlite' },
  'lib/store/dynamo/digest-index.ts': { adapter: 'dynamo' },
  'lib/ratelimit/index.ts': { adapter: 'limiters' },
  'lib/ratelimit/interface.ts': 'port',
  'lib/ratelimit/noop.ts': 'port',
  'lib/ratelimit/memory.ts': { adapter: 'limiters' },
  'lib/ratelimit/dynamo.ts': { adapter: 'dynamo-limiter' },
};

/** Imports of an adapter from outside lib/deploy that are allowed, each with its reason. */
export const ADAPTER_EXCEPTIONS: { from: string; to: string; why: string }[] = [
  {
    from: 'functions/access.ts',
    to: 'lib/ratelimit/dynamo.ts',
    why: "reads RATE_LIMITER_ACCESS, the limiter's declaration of what it sends, to derive IAM grants",
  },
];

/** Packages only some modules may import: the ones that must never reach a bundle they are not for. */
export const PACKAGE_HOMES: { pkg: RegExp; only: string; may: (from: string) => boolean }[] = [
  {
    pkg: /^better-sqlite3$/,
    only: 'lib/store/sqlite/state-store.ts and lib/store/sqlite/advance.ts import better-sqlite3 (no Lambda bundle may hold it)',
    may: (f) => f === 'lib/store/sqlite/state-store.ts' || f === 'lib/store/sqlite/advance.ts',
  },
  {
    pkg: /^@hono\/node-server(\/|$)/,
    only: 'lib/deploy/local.ts imports @hono/node-server (Lambda serves through hono/aws-lambda)',
    may: (f) => f === 'lib/deploy/local.ts',
  },
  {
    pkg: /^@aws-sdk\//,
    only: 'the AWS adapters, lib/deploy/aws.ts and aws-stores.ts, lib/audit/kms-signer.ts, functions/ and infra/ import the AWS SDK (local mode loads none of it)',
    may: (f) =>
      /^(functions|infra)\//.test(f) ||
      f === 'lib/deploy/aws.ts' ||
      f === 'lib/deploy/aws-stores.ts' ||
      f === 'lib/audit/kms-signer.ts' ||
      f === 'lib/store/dynamo/schema.ts' ||
      ['s3', 'dynamo', 'dynamo-limiter'].includes(adapterOf(f) ?? ''),
  },
];

function roleOf(path: string) {
  return ROLES[path];
}
function adapterOf(path: string): string | null {
  const r = roleOf(path);
  return typeof r === 'object' ? r.adapter : null;
}
const isPort = (path: string) => roleOf(path) === 'port';
const isKeys = (path: string) => roleOf(path) === 'keys';

/** The rules over single imports of ours: each returns its text when `e` breaks it, else null. */
const RULES: ((e: Edge) => string | null)[] = [
  (e) => {
    const from = unitOf(e.from);
    const to = unitOf(e.to);
    if (from === to || MAY_IMPORT[from]?.includes(to)) return null;
    if (!(from in MAY_IMPORT)) return `${from} is not in MAY_IMPORT: place the new folder there`;
    const allowed = MAY_IMPORT[from]!;
    if (allowed.length === 0) return `${from} imports nothing of ours (DESIGN §2)`;
    return `${from} may import only ${allowed.join(', ')} (DESIGN §2)`;
  },
  (e) => {
    const fam = adapterOf(e.to);
    if (fam === null || adapterOf(e.from) === fam || unitOf(e.from) === 'lib/deploy') return null;
    if (ADAPTER_EXCEPTIONS.some((x) => x.from === e.from && x.to === e.to)) return null;
    return 'adapters are imported by the wiring in lib/deploy only; elsewhere import the ports (lib/store/index.ts, lib/ratelimit/interface.ts)';
  },
  (e) => {
    const fam = adapterOf(e.from);
    if (fam === null || adapterOf(e.to) === fam || isPort(e.to) || isKeys(e.to)) return null;
    if (unitOf(e.to) === 'lib/log') return null;
    return 'an adapter imports only ports, key layouts, lib/log and modules of its own adapter';
  },
  (e) => {
    if (!(isPort(e.from) || isKeys(e.from)) || isPort(e.to) || unitOf(e.to) === 'lib/log') return null;
    // the digest contract's shapes (DigestWriter) are a port's vocabulary too
    if (e.to === 'lib/audit/schemas.ts') return null;
    if (isKeys(e.from) && isKeys(e.to)) return null;
    return 'a port imports only ports and lib/log (a key layout also other key layouts)';
  },
  (e) =>
    unitOf(e.from) === 'lib/service' && unitOf(e.to) === 'lib/store' && !isPort(e.to)
      ? 'the service imports the store ports only (lib/store/index.ts and what it exports)'
      : null,
  (e) =>
    unitOf(e.to) === 'lib/deploy' && !['lib/cli', 'functions', 'lib/deploy'].includes(unitOf(e.from))
      ? 'lib/deploy is imported only by lib/cli (serve, tenant create) and functions/'
      : null,
  // `hansard tenant create --data` opens the stores alone: through local.ts it loaded the whole app
  // (Hono, the routes, node-server), ~120 ms more per run.
  (e) =>
    (e.from === 'lib/deploy/local-stores.ts' && unitOf(e.to) !== 'lib/store') ||
    (e.from === 'lib/cli/cmd-tenant.ts' && e.to === 'lib/deploy/local.ts')
      ? 'the local stores alone are lib/deploy/local-stores.ts, which imports lib/store only; tenant create opens them through it, loading no app'
      : null,
];

/** Every broken rule, one line per import: `file:line imports target: rule`. */
export function violations(edges: Edge[], files: string[]): string[] {
  const out: string[] = [];
  for (const e of edges) {
    if (e.pkg) {
      for (const home of PACKAGE_HOMES) {
        if (home.pkg.test(e.to) && !home.may(e.from)) {
          out.push(`${e.from}:${e.line} imports ${e.to}: only ${home.only}`);
        }
      }
      continue;
    }
    for (const rule of RULES) {
      const broken = rule(e);
      if (broken) out.push(`${e.from}:${e.line} imports ${e.to}: ${broken}`);
    }
  }
  for (const f of files) {
    if (['lib/store', 'lib/ratelimit'].includes(unitOf(f)) && !(f in ROLES)) {
      out.push(
        `${f} has no role in ROLES (test/architecture/rules.ts): say whether it is a port, keys or an adapter`,
      );
    }
  }
  return out;
}
