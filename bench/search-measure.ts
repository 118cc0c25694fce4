/**
 * What the search benchmark (bench/search.ts, issue 30) measures, on either engine: ingest of the corpus
 * through the service (`ingestChunk`), the queries' latency by class through `searchSessions` (the
 * parser, the engine, snippets and links: what `GET /v1/search` runs), and the lag from a chunk's 201
 * to the first search that finds it while a live session ingests at a steady rate.
 */
import { performance } from 'node:perf_hooks';
import { formatTs, type LogEvent, serializeEvent } from '../lib/log/index.js';
import { ingestChunk } from '../lib/service/ingest/ingest-chunk.js';
import { searchSessions } from '../lib/service/search/search.js';
import type { ServiceContext } from '../lib/service/shared/context.js';
import { AppError } from '../lib/service/shared/errors.js';
import { type CorpusCounts, corpusSession, idOf, PHRASES, RARE, VOCABULARY } from './search-corpus.js';

export const TENANT = 'bench';

/** A token record of the bench's tenant with ingest and read scopes (the service checks scopes only). */
export function benchCaller(): ServiceContext['caller'] {
  return {
    id: 'tok_bench',
    tenant: TENANT,
    hash: '0'.repeat(64),
    scopes: ['ingest', 'read'],
    session: null,
    label: null,
    created_at: new Date(0).toISOString(),
    expires_at: null,
    revoked_at: null,
    last_used_at: null,
    parent: null,
    root: 'tok_bench',
  };
}

/** p-th percentile (nearest rank) of `xs`, which it sorts. */
export function percentile(xs: number[], p: number): number {
  if (xs.length === 0) return Number.NaN;
  xs.sort((a, b) => a - b);
  return xs[Math.min(xs.length - 1, Math.max(0, Math.ceil((p / 100) * xs.length) - 1))] as number;
}

export interface IngestFigures {
  sessions: number;
  events: number;
  bytes: number;
  chunks: number;
  seconds: number;
  /** every writer of the corpus (sid, w) and every session's facts (w '') */
  targets: Array<{ sid: string; w: string }>;
}

/**
 * Makes and ingests the corpus, one session in memory at a time: each session's writers' lines in chunks
 * of `linesPerChunk`, the writers' chunks taken in turn (as concurrent writers ship).
 * @throws AppError when ingest refuses a chunk (the corpus is wrong)
 */
export async function ingestCorpus(
  ctx: ServiceContext,
  o: { seed: number; sessions: number; eventsPerSession: number; linesPerChunk: number },
  counts: CorpusCounts,
  log: (line: string) => void,
): Promise<IngestFigures> {
  const f: IngestFigures = { sessions: o.sessions, events: 0, bytes: 0, chunks: 0, seconds: 0, targets: [] };
  const t0 = performance.now();
  for (let k = 0; k < o.sessions; k++) {
    const s = corpusSession(o.seed, k, o.eventsPerSession, counts);
    f.events += s.events;
    f.targets.push({ sid: s.sid, w: '' });
    const at = s.writers.map(() => ({ line: 0, offset: 0 }));
    for (const wr of s.writers) f.targets.push({ sid: s.sid, w: wr.w });
    for (let more = true; more; ) {
      more = false;
      for (const [i, wr] of s.writers.entries()) {
        const p = at[i] as { line: number; offset: number };
        if (p.line >= wr.lines.length) continue;
        const body = Buffer.from(wr.lines.slice(p.line, p.line + o.linesPerChunk).join(''));
        await ingestChunk({ ctx, input: { sid: s.sid, w: wr.w, offset: p.offset, body } });
        p.line += o.linesPerChunk;
        p.offset += body.length;
        f.bytes += body.length;
        f.chunks += 1;
        more ||= p.line < wr.lines.length;
      }
    }
    if ((k + 1) % 100 === 0)
      log(`  ingested ${k + 1}/${o.sessions} sessions (${f.events.toLocaleString('en')} events)`);
  }
  f.seconds = (performance.now() - t0) / 1000;
  return f;
}

export type QueryClass =
  | 'common word'
  | 'rare word'
  | 'phrase'
  | 'word + filters'
  | 'filters only'
  | 'exclusion';
export const QUERY_CLASSES: QueryClass[] = [
  'common word',
  'rare word',
  'phrase',
  'word + filters',
  'filters only',
  'exclusion',
];

/** The bench's fixed queries (50), from the corpus's vocabulary and what it counted. */
export function benchQueries(counts: CorpusCounts, sids: string[]): Array<{ cls: QueryClass; q: string }> {
  const W = (rank: number) => VOCABULARY[rank] as string;
  const rare = [...counts.rare.entries()]
    .sort((a, b) => b[1] - a[1] || a[0].localeCompare(b[0]))
    .map(([w]) => w);
  const rareAt = (i: number) => rare[i] ?? (RARE[i] as string);
  const sid = (i: number) => sids[Math.min(sids.length - 1, i)] as string;
  const out: Array<{ cls: QueryClass; q: string }> = [];
  const add = (cls: QueryClass, qs: string[]) => {
    for (const q of qs) out.push({ cls, q });
  };
  add('common word', [0, 1, 3, 10, 30, 60, 100, 150].map(W));
  // the most and the least written of the rare words
  add(
    'rare word',
    [0, 1, 2, 3, rare.length - 4, rare.length - 3, rare.length - 2, rare.length - 1].map((i) =>
      rareAt(Math.max(0, i)),
    ),
  );
  add(
    'phrase',
    PHRASES.map((p) => `"${p}"`),
  );
  add('word + filters', [
    `${W(10)} agent:codex`,
    `${W(30)} tool:Bash`,
    `${W(5)} type:message`,
    `${W(60)} person:priya`,
    `${W(100)} after:2026-11-20`,
    `${W(3)} type:action tool:Edit`,
    `"${PHRASES[1]}" agent:claude-code`,
    `${rareAt(0)} person:marco`,
    `${W(20)} before:2026-10-15 agent:aider`,
    `${W(1)} session:${sid(0)}`,
  ]);
  add('filters only', [
    'agent:codex',
    'tool:Bash',
    'type:note',
    'person:priya type:message',
    'after:2026-11-28',
    `session:${sid(1)}`,
    'type:action tool:Grep',
    'agent:cursor before:2026-10-10',
  ]);
  add('exclusion', [
    `${W(10)} -${W(11)}`,
    `${W(30)} -"${PHRASES[0]}"`,
    `${W(0)} -${W(1)}`,
    `${W(50)} -${W(2)}`,
    `"${PHRASES[2]}" -${W(40)}`,
    `${rareAt(1)} -${W(0)}`,
    `${W(200)} -${W(201)} -${W(202)}`,
    `${W(7)} tool:Bash -${W(8)}`,
  ]);
  return out;
}

export interface QueryStat {
  cls: QueryClass;
  q: string;
  ms: number[];
  /** hits on the first page at the warm-up (-1: it timed out) */
  hits: number;
  timeouts: number;
  /** its warm-up took over `SLOW_MS` */
  slow?: boolean;
}

/** A query whose warm-up run took longer than this (ms) is timed `SLOW_REPS` times only, so the bench ends. */
export const SLOW_MS = 1000;
export const SLOW_REPS = 5;

/**
 * Each query once as a warm-up, then `reps` rounds of all of them (queries interleaved, so a slow
 * moment of the machine is spread over the classes; a query slower than `SLOW_MS` at its warm-up is in
 * the first `SLOW_REPS` rounds only), 20 hits a page, through `searchSessions`.
 */
export async function timeQueries(
  ctx: ServiceContext,
  queries: Array<{ cls: QueryClass; q: string }>,
  reps: number,
): Promise<QueryStat[]> {
  const stats: QueryStat[] = queries.map(({ cls, q }) => ({ cls, q, ms: [], hits: 0, timeouts: 0 }));
  for (let rep = -1; rep < reps; rep++) {
    for (const s of stats) {
      if (rep >= SLOW_REPS && s.slow) continue;
      const t = performance.now();
      try {
        const answer = await searchSessions(ctx, { q: s.q, limit: 20 });
        if (rep < 0) s.hits = answer.hits.length;
      } catch (err) {
        if (rep < 0) s.hits = -1;
        if (!(err instanceof AppError && err.code === 'search_timeout'))
          throw new Error(`query ${s.q}: ${err}`, { cause: err });
        if (rep >= 0) s.timeouts += 1;
      }
      const took = performance.now() - t;
      if (rep >= 0) s.ms.push(took);
      else s.slow = took > SLOW_MS;
    }
  }
  return stats;
}

/** p50 and p95 (ms) of each class over all its queries' timed runs, and its timeouts. */
export function byClass(
  stats: QueryStat[],
): Map<QueryClass, { p50: number; p95: number; n: number; timeouts: number }> {
  const out = new Map<QueryClass, { p50: number; p95: number; n: number; timeouts: number }>();
  for (const cls of QUERY_CLASSES) {
    const of = stats.filter((s) => s.cls === cls);
    const ms = of.flatMap((s) => s.ms);
    out.set(cls, {
      p50: percentile(ms, 50),
      p95: percentile(ms, 95),
      n: ms.length,
      timeouts: of.reduce((a, s) => a + s.timeouts, 0),
    });
  }
  return out;
}

export interface LagFigures {
  chunks: number;
  seconds: number;
  /** chunks a second achieved (the target is `rate`) */
  rate: number;
  found: number;
  p50: number;
  p95: number;
  max: number;
  /** ms of the chunks' 201s: p50, p95 (ingest while the drain runs) */
  ackP50: number;
  ackP95: number;
}

/**
 * The lag from a chunk's 201 to the first search that finds it (issue 30 item 5). A live session of four
 * writers (each one chunk at a time, as a writer ships) ingests `rate` chunks a second in all for `seconds` (5 events a chunk: a message carrying a word
 * no other chunk has, a turn with an action and its result, the output); the indexing runs as the
 * deployment runs it (`startDrain`, on its timer); a prober searches chunks' words from their 201 until a
 * hit (see `probe`: again after 2 ms when nothing new was found). All in this process, as
 * `hansard serve` runs ingest, the drain and queries in one.
 */
export async function measureLag(
  ctx: ServiceContext,
  o: { session: number; rate: number; seconds: number },
  startDrain: () => { stop(): Promise<void> },
): Promise<LagFigures> {
  const sid = idOf('s', o.session, 0, 0);
  const writers = [0, 1, 2, 3].map((i) => ({ w: idOf('w', o.session, i, 0), seq: 0, offset: 0 }));
  const acks: Array<Array<{ n: number; at: number }>> = writers.map(() => []);
  const ackMs: number[] = [];
  const word = (n: number) => `lagmark${n.toString(36)}q`;
  const drain = startDrain();
  const t0 = performance.now();
  const end = t0 + o.seconds * 1000;
  const every = 1000 / o.rate;
  let sent = 0;
  const send = async (i: number) => {
    const wr = writers[i] as { w: string; seq: number; offset: number };
    for (let n = i; ; n += writers.length) {
      const due = t0 + n * every;
      if (due >= end) return;
      const wait = due - performance.now();
      if (wait > 0) await new Promise((r) => setTimeout(r, wait));
      const body = Buffer.from(liveChunk(sid, i, wr, o.session, word(n)));
      const t = performance.now();
      await ingestChunk({ ctx, input: { sid, w: wr.w, offset: wr.offset, body } });
      const now = performance.now();
      ackMs.push(now - t);
      wr.offset += body.length;
      acks[i]?.push({ n, at: now });
      sent += 1;
    }
  };
  const lags: number[] = [];
  let probing = true;
  let cancelled = false;
  const visible = async (n: number) => (await searchSessions(ctx, { q: word(n), limit: 1 })).hits.length > 0;
  // Each writer's oldest chunk not yet found is searched; once it is, the writer's later chunks are
  // searched galloping then bisecting (a writer's bytes are indexed in order, so the visible ones are a
  // prefix), and each is counted found at the end of that search (an upper bound of its lag). One search
  // per chunk would take longer than the chunks take to arrive on PostgreSQL (~4 ms a search).
  const next = writers.map(() => 0);
  const probe = async () => {
    while (!cancelled) {
      let moved = false;
      for (const [i, list] of acks.entries()) {
        const from = next[i] as number;
        const first = list[from];
        if (!first) continue;
        if (!(await visible(first.n))) continue;
        const t = performance.now();
        let lo = from;
        let step = 1;
        while (lo + step < list.length && (await visible((list[lo + step] as { n: number }).n))) {
          lo += step;
          step *= 2;
        }
        let hi = Math.min(lo + step, list.length);
        while (hi - lo > 1) {
          const mid = (lo + hi) >> 1;
          if (await visible((list[mid] as { n: number }).n)) lo = mid;
          else hi = mid;
        }
        const end = performance.now();
        lags.push(t - first.at);
        for (let k = from + 1; k <= lo; k++) lags.push(end - (list[k] as { at: number }).at);
        next[i] = lo + 1;
        moved = true;
      }
      if (!probing && acks.every((list, i) => (next[i] as number) >= list.length)) return;
      if (!moved) await new Promise((r) => setTimeout(r, 2));
    }
  };
  const prober = probe();
  await Promise.all(writers.map((_, i) => send(i)));
  const seconds = (performance.now() - t0) / 1000;
  probing = false;
  // every chunk sent is found, or the bench says how many were not within a minute
  await Promise.race([prober, new Promise((r) => setTimeout(r, 60_000).unref())]);
  cancelled = true;
  await prober;
  await drain.stop();
  return {
    chunks: sent,
    seconds,
    rate: sent / seconds,
    found: lags.length,
    p50: percentile([...lags], 50),
    p95: percentile([...lags], 95),
    max: lags.length ? Math.max(...lags) : Number.NaN,
    ackP50: percentile([...ackMs], 50),
    ackP95: percentile([...ackMs], 95),
  };
}

/** A live writer's next chunk: its writer.start first, then a message with `word`, a turn, the output. */
function liveChunk(
  sid: string,
  i: number,
  wr: { w: string; seq: number },
  session: number,
  word: string,
): string {
  const lines: string[] = [];
  const put = (prefix: string, type: string, fields: Record<string, unknown>) => {
    wr.seq += 1;
    const id = type === 'writer.start' ? wr.w : idOf(prefix, session, i, wr.seq);
    const ev = {
      v: 3,
      sid,
      w: wr.w,
      seq: wr.seq,
      id,
      ts: formatTs(Date.now() * 1000),
      mono: wr.seq,
      type,
      extra: {},
      ...fields,
    };
    lines.push(`${serializeEvent(ev as unknown as LogEvent)}\n`);
    return id;
  };
  if (wr.seq === 0) {
    put('w', 'writer.start', {
      writer_id: wr.w,
      meta: { agent: 'claude-code', app: null, hansard_version: '0.1.0', host: 'live', pid: 1 },
      redacted: [],
    });
  }
  const m = put('m', 'message', {
    user_id: 'priya',
    text: `Please check ${word} in the queue`,
    client_ts: null,
    redacted: [],
  });
  const t = put('t', 'turn.start', { turn_id: idOf('t', session, i, wr.seq + 1), context_message_ids: [m] });
  const a = put('a', 'agent.action', {
    turn_id: t,
    tool: 'Bash',
    input: { command: 'grep -rn queue src/' },
    call_id: null,
    caused_by: [m],
    redacted: [],
  });
  put('e', 'agent.action_result', {
    action_id: a,
    status: 'ok',
    output: 'src/queue.ts:1',
    error: null,
    exit_code: 0,
    redacted: [],
  });
  put('e', 'agent.output', { turn_id: t, text: 'The queue is fine.', caused_by: [m], redacted: [] });
  return lines.join('');
}
