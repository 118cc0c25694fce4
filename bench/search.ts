/**
 * `npm run bench:search` (issue 30, "Done when"): indexes and queries 1,000 sessions (about 1 M events) on
 * both engines and reports the index size, the indexing throughput and lag, and the queries' p50 and p95.
 *
 * 1. The corpus (bench/search-corpus.ts, seeded) is ingested through the service (`ingestChunk`) into the
 *    local stores in a temporary data directory (files + `state.sqlite`), as `hansard serve` stores it;
 *    each chunk queues its writer for indexing in the same transaction.
 * 2. SQLite FTS5: one full drain of that queue (`SearchDrain.runOnce`, what the server's timer runs),
 *    timed; the index's size (`SearchIndex.stats`, and `state.sqlite` before and after, WAL checkpointed);
 *    50 queries in 6 classes, `--reps` times each, through `searchSessions`; the lag (bench/search-measure.ts
 *    `measureLag`) with the drain on its timer as in `hansard serve`.
 * 3. PostgreSQL (`PgSearchIndex` over `PgRunner`, as an app role under row-level security) on a server the
 *    bench starts (harness/search-postgres.ts; skipped with the reason when none is installed): every
 *    writer and session of the corpus queued again and drained into it, so both engines index the same
 *    documents from the same stored segments; then the same measurements.
 * Baselines of the same run, for ratios: `count(*)` of the tenant's documents, and a `LIKE '%word%'` scan
 * of their texts (what a search without a full-text index would do), in each engine.
 * Writes its section of docs/benchmarks.md (`bench:search` markers) unless `--quick` without `--write`.
 *
 * Usage: npm run bench:search [-- OPTIONS]
 *   --sessions N        sessions of the corpus (default 1000; `--quick`: 20)
 *   --events N          events a session (default 1000)
 *   --chunk-lines N     lines a chunk at ingest (default 100)
 *   --reps N            timed runs of each query (default 20; `--quick`: 5)
 *   --lag-seconds S     how long the live session ingests while the lag is measured (default 20; quick 5)
 *   --lag-rate R        chunks a second of the live session (default 200)
 *   --no-pg             leave PostgreSQL out
 *   --seed N            the corpus's seed (default 30)
 *   --quick             20 sessions, 5 runs a query, 5 s of lag; prints the section, writes nothing
 *   --write / --no-write  write docs/benchmarks.md even with --quick / never
 */
import { existsSync, mkdtempSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { cpus, loadavg, tmpdir, totalmem } from 'node:os';
import { join } from 'node:path';
import { performance } from 'node:perf_hooks';
import Database from 'better-sqlite3';
import { postgresMissing, startBenchPostgres } from '../harness/search-postgres.js';
import { localSearch, startSearchDrain } from '../lib/deploy/local-search.js';
import { openLocalStores } from '../lib/deploy/local-stores.js';
import { DEFAULT_SEARCH_TIMEOUT_MS, type SearchDeps } from '../lib/service/search/deps.js';
import { DRAIN_POLL_MS, SearchDrain } from '../lib/service/search/drain.js';
import type { ServiceContext } from '../lib/service/shared/context.js';
import { newCounts } from './search-corpus.js';
import {
  benchCaller,
  benchQueries,
  ingestCorpus,
  measureLag,
  percentile,
  TENANT,
  timeQueries,
} from './search-measure.js';
import { type EngineFigures, renderSection } from './search-report.js';
import { upsertSection } from './tables.js';

export interface SearchBenchOptions {
  sessions: number;
  eventsPerSession: number;
  linesPerChunk: number;
  reps: number;
  lagSeconds: number;
  lagRate: number;
  pg: boolean;
  seed: number;
  /** the command as run, for the section's first line */
  command: string;
  log: (line: string) => void;
}

/** Median ms of `fn` over `n` runs. */
async function medianMs(n: number, fn: () => unknown): Promise<number> {
  const xs: number[] = [];
  for (let i = 0; i < n; i++) {
    const t = performance.now();
    await fn();
    xs.push(performance.now() - t);
  }
  return percentile(xs, 50);
}

const fileBytes = (p: string) => (existsSync(p) ? statSync(p).size : 0);

/** Runs the benchmark (see the module comment) and answers its markdown section. */
export async function runSearchBench(o: SearchBenchOptions): Promise<string> {
  const started = performance.now();
  const loadBefore = loadavg();
  const root = mkdtempSync(join(tmpdir(), 'hansard-search-bench-'));
  const data = join(root, 'data');
  const stores = openLocalStores(data);
  const search = localSearch(stores.state);
  if (!search?.queue) throw new Error('the local state store has no search index');
  const queue = search.queue;
  const ctx: ServiceContext = {
    tenant: TENANT,
    caller: benchCaller(),
    segments: stores.segments,
    state: stores.state,
    now: () => new Date(),
    search,
  };
  const drainLog = (message: string, err: unknown) => o.log(`${message}: ${err}`);
  const dbPath = join(data, 'state.sqlite');
  const raw = new Database(dbPath);
  const dbSize = () => {
    raw.pragma('wal_checkpoint(TRUNCATE)');
    return fileBytes(dbPath) + fileBytes(`${dbPath}-wal`);
  };
  try {
    o.log(`search bench: ${o.sessions} sessions × ~${o.eventsPerSession} events into ${root}`);
    const counts = newCounts();
    const ingest = await ingestCorpus(ctx, o, counts, o.log);
    o.log(`ingested ${ingest.events.toLocaleString('en')} events in ${ingest.seconds.toFixed(1)} s`);
    const sids = ingest.targets.filter((t) => t.w === '').map((t) => t.sid);
    const queries = benchQueries(counts, sids);
    const rareWord = queries.find((q) => q.cls === 'rare word')?.q ?? 'x';

    // ---- SQLite FTS5
    const sizeBefore = dbSize();
    const deps = { segments: stores.segments, state: stores.state, now: () => new Date() };
    let t = performance.now();
    const entries = await new SearchDrain({
      deps: { ...deps, index: search.index },
      queue,
      log: drainLog,
    }).runOnce();
    const sqliteDrain = (performance.now() - t) / 1000;
    const sizeAfter = dbSize();
    const sqliteStats = await search.index.stats(TENANT);
    o.log(`SQLite: ${entries} entries, ${sqliteStats.docs} documents indexed in ${sqliteDrain.toFixed(1)} s`);
    const countSt = raw.prepare('SELECT count(*) AS n FROM search_docs WHERE tenant = ?');
    const likeSt = raw.prepare('SELECT count(*) AS n FROM search_docs WHERE tenant = ? AND text LIKE ?');
    const sqlite: EngineFigures = {
      name: 'SQLite FTS5',
      docs: sqliteStats.docs,
      drainSeconds: sqliteDrain,
      bytes: sqliteStats.bytes,
      diskBytes: sizeAfter - sizeBefore,
      storage: `\`state.sqlite\` ${(sizeBefore / 1e6).toFixed(0)} MB before the drain, ${(sizeAfter / 1e6).toFixed(0)} MB after (WAL checkpointed; the segments and state are in it too)`,
      countMs: await medianMs(5, () => countSt.get(TENANT)),
      likeMs: await medianMs(5, () => likeSt.get(TENANT, `%${rareWord}%`)),
      queries: [],
      lag: null,
    };
    o.log(`SQLite: ${queries.length} queries × ${o.reps}…`);
    sqlite.queries = await timeQueries(ctx, queries, o.reps);
    o.log('SQLite: lag…');
    sqlite.lag = await measureLag(ctx, { session: 1_000_000, rate: o.lagRate, seconds: o.lagSeconds }, () => {
      const d = startSearchDrain(stores, search, drainLog);
      if (!d) throw new Error('no drain');
      return d;
    });

    // ---- PostgreSQL
    let pg: EngineFigures | string;
    const missing = o.pg ? postgresMissing() : 'left out (`--no-pg`)';
    if (missing) pg = missing;
    else {
      const server = await startBenchPostgres(DEFAULT_SEARCH_TIMEOUT_MS);
      try {
        const pgSearch: SearchDeps = {
          index: server.index,
          queue: null,
          timeoutMs: DEFAULT_SEARCH_TIMEOUT_MS,
        };
        const pgCtx: ServiceContext = { ...ctx, search: pgSearch };
        for (const e of ingest.targets) {
          await queue.enqueueSearch({ tenant: TENANT, ...e, since: new Date().toISOString() });
        }
        t = performance.now();
        await new SearchDrain({ deps: { ...deps, index: server.index }, queue, log: drainLog }).runOnce();
        const pgDrain = (performance.now() - t) / 1000;
        t = performance.now();
        await server.sql('VACUUM ANALYZE');
        const analyze = (performance.now() - t) / 1000;
        const stats = await server.index.stats(TENANT);
        o.log(
          `PostgreSQL: ${stats.docs} documents indexed in ${pgDrain.toFixed(1)} s (VACUUM ANALYZE ${analyze.toFixed(1)} s)`,
        );
        const sizes = await server.sql(
          `SELECT c.relname AS name, pg_total_relation_size(c.oid) AS total, pg_relation_size(c.oid) AS heap
             FROM pg_class c WHERE c.relname IN ('search_docs', 'search_fixes', 'search_cursors', 'search_facts',
               'search_causes', 'search_docs_tsv') ORDER BY c.relname`,
        );
        const mb = (x: unknown) => `${(Number(x) / 1e6).toFixed(0)} MB`;
        const size = (n: string) => sizes.find((r) => r.name === n);
        pg = {
          name: `PostgreSQL ${server.version}`,
          docs: stats.docs,
          drainSeconds: pgDrain,
          bytes: stats.bytes,
          diskBytes: sizes
            .filter((r) => r.name !== 'search_docs_tsv')
            .reduce((n, r) => n + Number(r.total), 0),
          storage: `search_docs ${mb(size('search_docs')?.total)} with its indexes (heap and TOAST ${mb(size('search_docs')?.heap)}; the GIN index on \`tsv\` ${mb(size('search_docs_tsv')?.total)}), search_fixes ${mb(size('search_fixes')?.total)}, search_causes ${mb(size('search_causes')?.total)}; \`VACUUM ANALYZE\` after the drain took ${analyze.toFixed(1)} s`,
          countMs: await medianMs(5, () =>
            server.sql('SELECT count(*) FROM search_docs WHERE tenant = $1', [TENANT]),
          ),
          likeMs: await medianMs(5, () =>
            server.sql('SELECT count(*) FROM search_docs WHERE tenant = $1 AND text LIKE $2', [
              TENANT,
              `%${rareWord}%`,
            ]),
          ),
          queries: [],
          lag: null,
        };
        o.log(`PostgreSQL: ${queries.length} queries × ${o.reps}…`);
        pg.queries = await timeQueries(pgCtx, queries, o.reps);
        o.log('PostgreSQL: lag…');
        pg.lag = await measureLag(
          pgCtx,
          { session: 1_000_001, rate: o.lagRate, seconds: o.lagSeconds },
          () => {
            const d = new SearchDrain({ deps: { ...deps, index: server.index }, queue, log: drainLog });
            d.start();
            return d;
          },
        );
      } finally {
        await server.stop();
      }
    }
    return renderSection({
      o,
      ingest,
      sqlite,
      pg,
      rareWord,
      loadBefore,
      loadAfter: loadavg(),
      minutes: (performance.now() - started) / 60000,
      machine: `${cpus()[0]?.model ?? 'unknown CPU'}, ${cpus().length} cores, ${(totalmem() / 2 ** 30).toFixed(0)} GiB, Node ${process.version}`,
      pollMs: DRAIN_POLL_MS,
    });
  } finally {
    raw.close();
    await stores.state.close();
    rmSync(root, { recursive: true, force: true });
  }
}

export const SEARCH_TITLE = 'Search (issue 30)';

/**
 * `npm run bench`'s search section (bench/run.ts): a smaller corpus than `bench:search`'s own (100 sessions,
 * 20 with `--quick`), or `sessions` (`--search-sessions`).
 */
export async function searchSection(
  quick: boolean,
  log: (line: string) => void,
  sessions?: number,
): Promise<{ inline: string; own: { title: string; section: string } }> {
  log('search (bench/search.ts)…');
  const n = sessions ?? (quick ? 20 : 100);
  const section = await runSearchBench({
    sessions: n,
    eventsPerSession: 1000,
    linesPerChunk: 100,
    reps: quick ? 5 : 20,
    lagSeconds: quick ? 5 : 10,
    lagRate: 200,
    pg: true,
    seed: 30,
    command: `npm run bench (search: ${n} sessions)`,
    log,
  });
  return {
    inline: `From this same run, in its own section below (\`bench:search\` markers, "${SEARCH_TITLE}").`,
    own: { title: SEARCH_TITLE, section },
  };
}

if (process.argv[1]?.endsWith('search.ts')) {
  const args = process.argv.slice(2);
  const opt = (name: string, def: number) => {
    const i = args.indexOf(`--${name}`);
    return i >= 0 && args[i + 1] ? Number(args[i + 1]) : def;
  };
  const quick = args.includes('--quick');
  const section = await runSearchBench({
    sessions: opt('sessions', quick ? 20 : 1000),
    eventsPerSession: opt('events', 1000),
    linesPerChunk: opt('chunk-lines', 100),
    reps: opt('reps', quick ? 5 : 20),
    lagSeconds: opt('lag-seconds', quick ? 5 : 20),
    lagRate: opt('lag-rate', 200),
    pg: !args.includes('--no-pg'),
    seed: opt('seed', 30),
    command: `npm run bench:search${args.length ? ` -- ${args.join(' ')}` : ''}`,
    log: (line) => process.stderr.write(`${line}\n`),
  });
  process.stdout.write(`${section}\n`);
  if ((!quick || args.includes('--write')) && !args.includes('--no-write')) {
    const doc = 'docs/benchmarks.md';
    writeFileSync(doc, upsertSection(readFileSync(doc, 'utf8'), SEARCH_TITLE, section));
    process.stderr.write(`wrote ${doc}\n`);
  }
}
