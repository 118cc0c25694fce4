/**
 * The search benchmark's section of docs/benchmarks.md (bench/search.ts, issue 30): the corpus, each
 * engine's index (documents, size, indexing throughput), the queries' p50 and p95 by class beside the same
 * run's baselines, the lag, and the slowest queries.
 */
import type { IngestFigures, LagFigures, QueryStat } from './search-measure.js';
import { byClass, percentile, QUERY_CLASSES, SLOW_MS, SLOW_REPS } from './search-measure.js';

export interface EngineFigures {
  name: string;
  docs: number;
  drainSeconds: number;
  /** `SearchIndex.stats().bytes`: the tenant's own rows as stored (no index structures) */
  bytes: number | null;
  /** what indexing added on disk: SQLite, the growth of `state.sqlite`; PostgreSQL, the search tables with their indexes */
  diskBytes: number;
  /** the engine's storage in words (files, tables, indexes) */
  storage: string;
  /** baselines, median ms: count(*) of the tenant's documents; a LIKE '%word%' scan of their texts */
  countMs: number;
  likeMs: number;
  queries: QueryStat[];
  lag: LagFigures | null;
}

export interface ReportInput {
  o: {
    sessions: number;
    eventsPerSession: number;
    linesPerChunk: number;
    reps: number;
    lagSeconds: number;
    lagRate: number;
    command: string;
  };
  ingest: IngestFigures;
  sqlite: EngineFigures;
  /** the figures, or why PostgreSQL was not measured */
  pg: EngineFigures | string;
  rareWord: string;
  loadBefore: number[];
  loadAfter: number[];
  minutes: number;
  machine: string;
  pollMs: number;
}

const int = (n: number) => Math.round(n).toLocaleString('en');
const ms = (n: number) =>
  Number.isNaN(n) ? '-' : n < 10 ? n.toFixed(2) : n < 100 ? n.toFixed(1) : n.toFixed(0);
const load = (l: number[]) => l.map((x) => x.toFixed(2)).join(' / ');

function engineRows(engines: EngineFigures[], events: number): string {
  const head = `| | ${engines.map((e) => e.name).join(' | ')} |\n|---|${engines.map(() => '---:').join('|')}|`;
  const row = (label: string, f: (e: EngineFigures) => string) =>
    `| ${label} | ${engines.map(f).join(' | ')} |`;
  return [
    head,
    row('documents indexed', (e) => int(e.docs)),
    row('indexing: one drain of the whole queue, s', (e) => e.drainSeconds.toFixed(1)),
    row(
      'indexing throughput, events/s (documents/s)',
      (e) => `${int(events / e.drainSeconds)} (${int(e.docs / e.drainSeconds)})`,
    ),
    row(
      'index on disk (SQLite: growth of state.sqlite; PostgreSQL: the search tables and their indexes)',
      (e) => `${(e.diskBytes / 1e6).toFixed(0)} MB (${int(e.diskBytes / e.docs)} B a document)`,
    ),
    row("the tenant's rows as stored, `stats().bytes`", (e) =>
      e.bytes === null ? '-' : `${(e.bytes / 1e6).toFixed(0)} MB (${int(e.bytes / e.docs)} B a document)`,
    ),
    row('baseline: `count(*)` of the documents, ms', (e) => ms(e.countMs)),
    row("baseline: `LIKE '%word%'` scan of the texts, ms", (e) => ms(e.likeMs)),
  ].join('\n');
}

function queryRows(engines: EngineFigures[]): string {
  const classes = engines.map((e) => byClass(e.queries));
  const head = `| class | queries | ${engines.map((e) => `${e.name} p50 | p95 | p95 ÷ LIKE scan`).join(' | ')} |`;
  const sep = `|---|---:|${engines.map(() => '---:|---:|---:').join('|')}|`;
  const rows = QUERY_CLASSES.map((cls) => {
    const n = engines[0]?.queries.filter((q) => q.cls === cls).length ?? 0;
    const cells = engines.map((e, i) => {
      const c = classes[i]?.get(cls);
      if (!c) return '- | - | -';
      const to = c.timeouts > 0 ? ` (${c.timeouts} timed out)` : '';
      return `${ms(c.p50)} | ${ms(c.p95)}${to} | ${(c.p95 / e.likeMs).toFixed(3)}`;
    });
    return `| ${cls} | ${n} | ${cells.join(' | ')} |`;
  });
  const all = engines.map((e) => {
    const xs = e.queries.flatMap((q) => q.ms);
    return `${ms(percentile([...xs], 50))} | ${ms(percentile([...xs], 95))} | ${(percentile([...xs], 95) / e.likeMs).toFixed(3)}`;
  });
  return [head, sep, ...rows, `| all | ${engines[0]?.queries.length ?? 0} | ${all.join(' | ')} |`].join('\n');
}

function lagRows(engines: EngineFigures[]): string {
  const head = `| | ${engines.map((e) => e.name).join(' | ')} |\n|---|${engines.map(() => '---:').join('|')}|`;
  const row = (label: string, f: (l: LagFigures) => string) =>
    `| ${label} | ${engines.map((e) => (e.lag ? f(e.lag) : '-')).join(' | ')} |`;
  return [
    head,
    row('chunks ingested (rate achieved, chunks/s)', (l) => `${int(l.chunks)} (${l.rate.toFixed(0)})`),
    row('found by a search', (l) => int(l.found)),
    row('lag from the 201 to the first hit, p50 ms', (l) => ms(l.p50)),
    row('p95 ms', (l) => ms(l.p95)),
    row('max ms', (l) => ms(l.max)),
    row("the chunks' own 201, p50 / p95 ms", (l) => `${ms(l.ackP50)} / ${ms(l.ackP95)}`),
  ].join('\n');
}

function slowest(e: EngineFigures): string {
  return [...e.queries]
    .map((q) => ({ q, p50: percentile([...q.ms], 50) }))
    .sort((a, b) => b.p50 - a.p50)
    .slice(0, 5)
    .map(
      ({ q, p50 }) =>
        `\`${q.q}\` ${ms(p50)} ms (${q.hits < 0 ? 'timed out at its warm-up' : `${q.hits} hits on the first page`}, ${q.ms.length} runs)`,
    )
    .join('; ');
}

/** The section, between its markers. */
export function renderSection(r: ReportInput): string {
  const engines = typeof r.pg === 'string' ? [r.sqlite] : [r.sqlite, r.pg];
  const i = r.ingest;
  const pgNote = typeof r.pg === 'string' ? `\n\nPostgreSQL was not measured in this run: ${r.pg}.` : '';
  return `<!-- bench:search:start -->
Measured ${new Date().toISOString().slice(0, 16).replace('T', ' ')} UTC on ${r.machine}: \`${r.o.command}\`, which took ${r.minutes.toFixed(1)} min. Load average (1, 5, 15 min) ${load(r.loadBefore)} at the start and ${load(r.loadAfter)} at the end: other engineers' test runs share the 2 cores, so compare the ratios to the same run's baselines more than the absolute times.

The corpus (bench/search-corpus.ts, seeded): ${int(i.sessions)} sessions of 2 or 3 writers, ${int(i.events)} events (${(i.bytes / 1e6).toFixed(0)} MB of segments): people's messages, agents' turns with Bash commands and paths, Read/Edit/Grep actions and their results, outputs, notes, corrections, over a Zipf vocabulary of 3,000 words with fixed phrases and 500 rare words. Ingested through the service (\`ingestChunk\`, the local stores: files + SQLite, every chunk fsynced) in ${int(i.chunks)} chunks of up to ${r.o.linesPerChunk} lines in ${i.seconds.toFixed(1)} s (${int(i.events / i.seconds)} events/s), each chunk queueing its writer for indexing in its own transaction; then each engine indexed the same stored segments through \`SearchDrain.runOnce\` (\`indexQueued\` of every writer and session, one at a time, as the server's drain runs): action results, turn bounds and \`writer.start\` are not searchable, so there are fewer documents than events.

${engineRows(engines, i.events)}

Storage: SQLite: ${r.sqlite.storage}.${typeof r.pg === 'string' ? '' : ` PostgreSQL: ${r.pg.storage}. PostgreSQL ran on the same machine (harness/postgres.ts: \`fsync\` and \`synchronous_commit\` off, autovacuum on) as an app role under row-level security, through \`PgRunner\` (\`pg\`, 4 connections) on loopback.`}

### Query latency (ms)

${r.o.reps} timed runs (${SLOW_REPS} for a query whose warm-up took over ${SLOW_MS / 1000} s) of each of ${engines[0]?.queries.length ?? 0} queries after one warm-up run, queries interleaved, through \`searchSessions\` (the parser, the engine, snippets and links: what \`GET /v1/search\` runs in the server, without HTTP), 20 hits a page; PostgreSQL with the deployment's default time limit (\`statement_timeout\` ${3000} ms). Classes: a common word (ranks 1 to 151 of the vocabulary: the first is in most documents, the last in about 1%), a rare word (a few to a few dozen documents), a quoted phrase, a word with \`agent:\` \`tool:\` \`type:\` \`person:\` \`after:\` \`before:\` \`session:\` filters, filters alone, a word with \`-word\` or \`-"phrase"\` exclusions. The ratio is the class's p95 over the same engine's \`LIKE '%${r.rareWord}%'\` scan of every document's text (below 1: faster than a scan without an index).

${queryRows(engines)}

Slowest queries by p50: ${engines.map((e) => `${e.name}: ${slowest(e)}`).join('. ')}.

### Lag: from a chunk's 201 to the first search that finds it (issue 30 item 5)

A live session of four writers (each one chunk at a time) ingesting ${r.o.lagRate} chunks/s in all for ${r.o.lagSeconds} s (5 events a chunk, one message with a word no other chunk has), on top of the indexed corpus, with the drain on its timer as \`hansard serve\` runs it (${r.pollMs} ms between passes, lib/service/search/drain.ts \`DRAIN_POLL_MS\`), and a prober searching the chunks' words from their 201 (for each writer, the word of its oldest chunk not yet found, again every 2 ms; once it is found, the writer's later chunks by galloping then bisecting, since a writer's bytes are indexed in order, each counted found at the end of that search: an upper bound), all in one process as in the server. The lag is made of: the wait for the drain's next pass (up to ${r.pollMs} ms once a pass ends), the pass itself (each queued writer's new bytes read back from its segment, cut into documents and written to the index in one transaction: the entries queued since the last pass, so a pass's time grows with the ingest rate), and the search (under a ms for a rare word). PostgreSQL's lag is measured with the same local drain writing to it (on AWS the queue is the state table's stream feeding a function, which adds the stream's own delivery delay).

${lagRows(engines)}${pgNote}
<!-- bench:search:end -->`;
}
