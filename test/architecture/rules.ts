/**
 * The architecture's rules (DESIGN §2, issue 9.4) as data, and `violations`, which names every import
 * that breaks one: `lib/service/x.ts:12 imports lib/store/sqlite/state-store.ts: <the rule>`.
 *
 * Decisions these rules record:
 * - Scopes are the contract's (lib/contract/scopes.ts: the service checks them, the CLI and doctor name
 *   them); the store keeps a token's scopes as plain strings (`TokenRecord.scopes: string[]`).
 * - The client side (lib/client/{cli,api,capture,work,mcp}) never imports the server's service or
 *   store: what both sides of the wire use is in lib/contract, below both; the operator's
 *   commands that work on a server's stores (`hansard serve`, `hansard tenant …`) reach them through
 *   lib/deploy (local-serve.ts, tenant-admin.ts).
 * - The board's pages (lib/board) are views of the service; their routes and sign-in live in lib/http
 *   (lib/http/routes/pages/), which imports the pages: nothing runs back from lib/board to lib/http.
 * - lib/ratelimit is a port (`interface.ts`, with `noop.ts` as the no-limit default) and adapters
 *   (`memory.ts`, `dynamo.ts`), like lib/store.
 * - lib/http reaches the store's errors only through the service's translation
 *   (lib/service/shared/storage-faults.ts): it imports no module of lib/store.
 * - `HANSARD_VERSION` lives in lib/log (the writer records it); lib/version.ts re-exports it.
 */
import { type Edge, unitOf } from './import-graph.js';

/** Which units each unit may import (DESIGN §2's "depends on", with the wiring in lib/deploy). */
export const MAY_IMPORT: Record<string, readonly string[]> = {
  'lib/log': [],
  // the audit digests' contract, hashing rules, signers, bundles and offline verifier (issue 15); DESIGN
  // lets it use lib/log, and no module does today
  'lib/audit': [],
  'lib/version.ts': ['lib/log'],
  'lib/index.ts': ['lib/log', 'lib/version.ts'],
  // the schemas both sides of the wire use (limits, scopes, ids, status, work, chunks, the token form)
  'lib/contract': ['lib/log'],
  'lib/store': ['lib/log', 'lib/contract', 'lib/audit'],
  'lib/ratelimit': ['lib/store'],
  'lib/service': ['lib/log', 'lib/contract', 'lib/store', 'lib/audit'],
  'lib/board': ['lib/log', 'lib/contract', 'lib/service', 'lib/version.ts'],
  'lib/http': [
    'lib/log',
    'lib/contract',
    'lib/service',
    'lib/board',
    'lib/ratelimit',
    'lib/version.ts',
    'lib/audit',
  ],
  'lib/importers': ['lib/log'],
  'lib/deploy': [
    'lib/contract',
    'lib/http',
    'lib/service',
    'lib/store',
    'lib/ratelimit',
    'lib/audit',
    'lib/version.ts',
  ],
  // the client side, lib/client/*: talking to a server from this machine (the HTTP client, its settings,
  // upload, the state dir's place)
  'lib/client/api': ['lib/log', 'lib/contract', 'lib/audit'],
  // local work leases and pending operations (seed 004)
  'lib/client/work': ['lib/log', 'lib/contract', 'lib/client/api'],
  // capture as it happens: hooks, spool, shipper, doctor, integrations
  'lib/client/capture': ['lib/log', 'lib/contract', 'lib/importers', 'lib/client/api', 'lib/client/work'],
  'lib/client/mcp': ['lib/log', 'lib/contract', 'lib/client/api', 'lib/client/capture', 'lib/version.ts'],
  'lib/client/cli': [
    'lib/log',
    'lib/contract',
    'lib/importers',
    'lib/deploy',
    'lib/version.ts',
    'lib/client/api',
    'lib/client/capture',
    'lib/client/mcp',
    'lib/client/work',
    'lib/audit',
  ],
  // the Lambda entry points reach the app through lib/deploy (aws.ts, aws-lambda.ts, aws-access.ts, …)
  functions: ['lib/deploy'],
  infra: ['functions', 'lib/store'],
  // What is not shipped (issue 26.4). harness/: what test/ and bench/ both start (the emulators, `hansard
  // serve` as a process, the S3 replay world; harness/README.md), so that bench/ imports nothing of test/.
  harness: ['functions', 'lib/deploy', 'lib/log', 'lib/service', 'lib/store'],
  bench: ['harness', 'lib/client/capture', 'lib/deploy', 'lib/http', 'lib/log', 'lib/service'],
  // scripts/screenshots.ts starts the benchmarks' server (bench/serve.ts)
  scripts: ['bench', 'lib/log'],
  // the tests import what they test, anywhere; nothing imports a test
  test: [
    'lib/log',
    'lib/audit',
    'lib/contract',
    'lib/store',
    'lib/ratelimit',
    'lib/service',
    'lib/board',
    'lib/http',
    'lib/importers',
    'lib/deploy',
    'lib/version.ts',
    'lib/client/api',
    'lib/client/work',
    'lib/client/capture',
    'lib/client/mcp',
    'lib/client/cli',
    'functions',
    'infra',
    'harness',
    'bench',
  ],
};

/** Whether a module ships (lib/, functions/, infra/): the rules past MAY_IMPORT and PACKAGE_HOMES are about those. */
const ships = (path: string) => /^(lib|functions|infra)\//.test(path);

/**
 * The arrows of `mayImport` that no import of `edges` uses (`unit -> unit`): each is looser than the
 * code needs, so it goes (issue 26.4).
 */
export function unusedArrows(
  edges: Edge[],
  mayImport: Record<string, readonly string[]> = MAY_IMPORT,
): string[] {
  const used = new Set(edges.filter((e) => !e.pkg).map((e) => `${unitOf(e.from)} -> ${unitOf(e.to)}`));
  return Object.entries(mayImport).flatMap(([from, to]) =>
    to.map((t) => `${from} -> ${t}`).filter((arrow) => !used.has(arrow)),
  );
}

/**
 * What each module of lib/store and lib/ratelimit is: a port (the interfaces, their errors, the key
 * rules every adapter shares), a key layout of one backend, or an adapter of a family (modules of one
 * family may import each other).
 *
 * lib/store says it by place (DESIGN §2, issue 26.1): a module directly in lib/store is a port (one per
 * entity, the errors, the key rules); a module in `lib/store/<backend>/` is an adapter of that backend,
 * but for the key layouts in STORE_KEYS, which infra/, lib/deploy (for functions/) and the limiter read
 * too. lib/ratelimit is named module by module in ROLES: a new module there must be placed there.
 */
export const STORE_BACKENDS: readonly string[] = ['fs', 'sqlite', 's3', 'dynamo', 'postgres'];
/** Key layouts of one backend: the DynamoDB table's key names, and what each module sends to it. */
export const STORE_KEYS: readonly string[] = ['lib/store/dynamo/schema.ts', 'lib/store/dynamo/access.ts'];
export const ROLES: Record<string, Role> = {
  'lib/ratelimit/index.ts': { adapter: 'limiters' },
  'lib/ratelimit/interface.ts': 'port',
  'lib/ratelimit/noop.ts': 'port',
  'lib/ratelimit/memory.ts': { adapter: 'limiters' },
  'lib/ratelimit/dynamo.ts': { adapter: 'dynamo-limiter' },
};

/** Packages only some modules may import: the ones that must never reach a bundle they are not for. */
export const PACKAGE_HOMES: { pkg: RegExp; only: string; may: (from: string) => boolean }[] = [
  {
    pkg: /^better-sqlite3$/,
    only: 'lib/store/sqlite/state-store.ts and lib/store/sqlite/advance.ts import better-sqlite3 (no Lambda bundle may hold it)',
    may: (f) => f === 'lib/store/sqlite/state-store.ts' || f === 'lib/store/sqlite/advance.ts',
  },
  {
    pkg: /^pg$/,
    only: 'lib/store/postgres/pg-runner.ts imports pg (the functions reach PostgreSQL through the Data API)',
    may: (f) => f === 'lib/store/postgres/pg-runner.ts',
  },
  {
    pkg: /^@hono\/node-server(\/|$)/,
    only: 'lib/deploy/local.ts imports @hono/node-server (Lambda serves through hono/aws-lambda)',
    may: (f) => f === 'lib/deploy/local.ts',
  },
  {
    pkg: /^@aws-sdk\//,
    only: 'the AWS adapters, lib/deploy/aws.ts, aws-stores.ts and aws-sealer.ts, lib/audit/kms-signer.ts, functions/ and infra/ import the AWS SDK (local mode loads none of it)',
    may: (f) =>
      /^(functions|infra)\//.test(f) ||
      f === 'lib/deploy/aws.ts' ||
      f === 'lib/deploy/aws-stores.ts' ||
      // the KMS sealer of alert targets' secrets (issue 28 item 6)
      f === 'lib/deploy/aws-sealer.ts' ||
      f === 'lib/audit/kms-signer.ts' ||
      f === 'lib/store/dynamo/schema.ts' ||
      // search on AWS (issue 30): the RDS Data API runner and its wiring
      f === 'lib/store/postgres/data-api-runner.ts' ||
      f === 'lib/deploy/aws-search.ts' ||
      ['s3', 'dynamo', 'dynamo-limiter'].includes(adapterOf(f) ?? ''),
  },
];

type Role = 'port' | 'keys' | { adapter: string };

function roleOf(path: string): Role | undefined {
  if (path in ROLES) return ROLES[path];
  const m = /^lib\/store\/(?:([^/]+)\/)?[^/]+$/.exec(path);
  if (!m) return undefined;
  if (STORE_KEYS.includes(path)) return 'keys';
  if (m[1] === undefined) return 'port';
  return STORE_BACKENDS.includes(m[1]) ? { adapter: m[1] } : undefined;
}
function adapterOf(path: string): string | null {
  const r = roleOf(path);
  return typeof r === 'object' ? r.adapter : null;
}
const isPort = (path: string) => roleOf(path) === 'port';
const isKeys = (path: string) => roleOf(path) === 'keys';

/** Whether a unit is of the client side (lib/client/*: the `hansard` command, the HTTP client, capture, work, MCP). */
const isClientSide = (unit: string) => unit === 'lib/client' || unit.startsWith('lib/client/');

/**
 * The rules over single imports of ours: each returns its text when `e` breaks it, else null. The first
 * (MAY_IMPORT) holds for every module; the others for the modules that ship (lib/, functions/, infra/):
 * a test, a benchmark or harness/ may open an adapter or the wiring itself.
 */
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
    // records derived from the schemas both sides of the wire use (DESIGN §2: lib/store depends on lib/contract)
    if (unitOf(e.to) === 'lib/contract') return null;
    // the digest contract's shapes (DigestWriter) are a port's vocabulary too
    if (e.to === 'lib/audit/schemas.ts') return null;
    if (isKeys(e.from) && isKeys(e.to)) return null;
    return 'a port imports only ports, lib/contract and lib/log (a key layout also other key layouts)';
  },
  (e) =>
    unitOf(e.from) === 'lib/service' && unitOf(e.to) === 'lib/store' && !isPort(e.to)
      ? 'the service imports the store ports only (lib/store/index.ts and what it exports)'
      : null,
  (e) =>
    isClientSide(unitOf(e.from)) && ['lib/service', 'lib/store'].includes(unitOf(e.to))
      ? "the client side never imports the server's service or store: what both sides use lives in lib/contract; the operator's commands on a server's stores go through lib/deploy (DESIGN §2)"
      : null,
  (e) =>
    unitOf(e.to) === 'lib/deploy' && !['lib/client/cli', 'functions', 'lib/deploy'].includes(unitOf(e.from))
      ? 'lib/deploy is imported only by lib/client/cli (serve, tenant) and functions/'
      : null,
  // `hansard tenant create --data` opens the stores alone: through local.ts it loaded the whole app
  // (Hono, the routes, node-server), ~120 ms more per run.
  (e) =>
    (e.from === 'lib/deploy/local-stores.ts' && unitOf(e.to) !== 'lib/store') ||
    ((e.from === 'lib/deploy/tenant-admin.ts' || unitOf(e.from) === 'lib/client/cli') &&
      e.to === 'lib/deploy/local.ts')
      ? 'the local stores alone are lib/deploy/local-stores.ts, which imports lib/store only; the tenant commands open them through it (lib/deploy/tenant-admin.ts), loading no app'
      : null,
];

/** Every broken rule, one line per import: `file:line imports target: rule`. */
export function violations(edges: Edge[], files: string[]): string[] {
  const out: string[] = [];
  for (const e of edges) {
    if (e.pkg) {
      if (!ships(e.from)) continue;
      for (const home of PACKAGE_HOMES) {
        if (home.pkg.test(e.to) && !home.may(e.from)) {
          out.push(`${e.from}:${e.line} imports ${e.to}: only ${home.only}`);
        }
      }
      continue;
    }
    for (const rule of ships(e.from) ? RULES : RULES.slice(0, 1)) {
      const broken = rule(e);
      if (broken) out.push(`${e.from}:${e.line} imports ${e.to}: ${broken}`);
    }
  }
  for (const f of files) {
    if (['lib/store', 'lib/ratelimit'].includes(unitOf(f)) && roleOf(f) === undefined) {
      out.push(
        `${f} has no role (test/architecture/rules.ts): a store module is a port in lib/store or an adapter in lib/store/{${STORE_BACKENDS.join(',')}}/; a limiter module is placed in ROLES`,
      );
    }
  }
  return out;
}
