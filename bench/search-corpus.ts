/**
 * The search benchmark's corpus (issue 30, bench/search.ts): sessions of v3 lines made by the real
 * serializer (`serializeEvent`), deterministic from a seed (each session from its own PRNG, so a session
 * can be made alone and in any order: the bench streams them, one in memory at a time).
 *
 * A session has 2 or 3 writers (each an agent's, `meta.agent` one of `AGENTS`) and about `events` lines
 * between them, in turns: a person's message (`PEOPLE`), `turn.start`, 1 to 4 actions (Bash commands with
 * paths, Read/Edit/Write of a path, Grep of a word) each with its result, the agent's output answering the
 * message (`caused_by`), `turn.end`; between turns a note now and then (3%) and a correction of an earlier
 * message of the writer (0.5%). Free text is drawn from a vocabulary of `VOCABULARY` words with Zipf
 * frequencies (a head of common English words, then made-up ones), some fixed phrases (`PHRASES`, 5% of
 * texts) and rare words (`RARE`, 2% of texts, each about 20 times per million events), so that queries of
 * each class (common, rare, phrase) have known answers. Timestamps: sessions start spread over the 60 days
 * before `CORPUS_END`, events 1 to 3 s apart.
 */
import { formatTs, type LogEvent, serializeEvent } from '../lib/log/index.js';

/** The corpus's sessions end before this instant (ms): `after:` filters are relative to it. */
export const CORPUS_END = Date.UTC(2026, 11, 1);
const SPAN_MS = 60 * 86_400_000;

export const AGENTS = ['claude-code', 'codex', 'aider', 'cursor', 'gemini-cli', 'copilot'] as const;
export const PEOPLE = ['priya', 'marco', 'aisha', 'kenji', 'lena', 'tomas', 'olu', 'sofia'] as const;
export const TOOLS = ['Bash', 'Read', 'Edit', 'Write', 'Grep', 'Glob'] as const;
export const PHRASES = [
  'billing migration',
  'payments worker',
  'terraform apply',
  'rollback plan',
  'flaky test',
  'parser error',
  'rate limiter',
  'cache invalidation',
] as const;

/** A small seeded PRNG (mulberry32): the same seed gives the same corpus on every machine. */
export function prng(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

const HEAD =
  'the to of and a in is it that for on with this we as be at by not are from or have an they which you was but all can there if more when will would what so up out about into than them then only other time some could also its these two may first any new because after should where most over such through back still made well even here how just see fix run test build check file error change update add remove need look make use work data code line user value type case call list next last issue merge branch review deploy config server client request response query table index queue job task log event message output input result start stop open close read write send'.split(
    ' ',
  );
const SYLLABLES =
  'ka ri to me lo sa nu vi pe ra do mi te zu fa ko li na be gu ho ye ze wa ti po ru sé ül'.split(' ');

/** The vocabulary, most frequent first: `HEAD`, then made-up words (a few with accents: unicode terms). */
export const VOCABULARY: readonly string[] = (() => {
  const r = prng(7);
  const out = [...HEAD];
  const seen = new Set(out);
  while (out.length < 3000) {
    const n = 2 + Math.floor(r() * 3);
    let w = '';
    for (let i = 0; i < n; i++) w += SYLLABLES[Math.floor(r() * SYLLABLES.length)];
    if (!seen.has(w)) {
      seen.add(w);
      out.push(w);
    }
  }
  return out;
})();

/** Rare words: none is in `VOCABULARY`; each comes about 20 times in a million events. */
export const RARE: readonly string[] = Array.from(
  { length: 500 },
  (_, i) => `qx${(i * 7919 + 104729).toString(36)}z`,
);

// Zipf (s = 1.05) over the vocabulary: the cumulative weights, searched by bisection.
const CUMULATIVE = (() => {
  const c = new Float64Array(VOCABULARY.length);
  let sum = 0;
  for (let i = 0; i < c.length; i++) {
    sum += 1 / (i + 1) ** 1.05;
    c[i] = sum;
  }
  for (let i = 0; i < c.length; i++) c[i] = (c[i] as number) / sum;
  return c;
})();

function zipf(r: () => number): string {
  const x = r();
  let lo = 0;
  let hi = CUMULATIVE.length - 1;
  while (lo < hi) {
    const mid = (lo + hi) >> 1;
    if ((CUMULATIVE[mid] as number) < x) lo = mid + 1;
    else hi = mid;
  }
  return VOCABULARY[lo] as string;
}

const pick = <T>(r: () => number, xs: readonly T[]): T => xs[Math.floor(r() * xs.length)] as T;

/** What the corpus holds that queries are chosen from: how often each rare word and phrase was written. */
export interface CorpusCounts {
  rare: Map<string, number>;
  phrases: Map<string, number>;
}

export function newCounts(): CorpusCounts {
  return { rare: new Map(), phrases: new Map() };
}

/**
 * `n` words of free text, with now and then a phrase and a rare word (counted in `counts`); `counts` null
 * for a text that is not searchable (an action's result, a Bash description): none of those then.
 */
function sentence(r: () => number, n: number, counts: CorpusCounts | null): string {
  const words: string[] = [];
  for (let i = 0; i < n; i++) words.push(zipf(r));
  if (counts === null) return `${words.join(' ')}.`;
  if (r() < 0.05) {
    const p = pick(r, PHRASES);
    counts.phrases.set(p, (counts.phrases.get(p) ?? 0) + 1);
    words.splice(Math.floor(r() * words.length), 0, p);
  }
  if (r() < 0.02) {
    const w = pick(r, RARE);
    counts.rare.set(w, (counts.rare.get(w) ?? 0) + 1);
    words.splice(Math.floor(r() * words.length), 0, w);
  }
  const s = words.join(' ');
  return `${s.charAt(0).toUpperCase()}${s.slice(1)}.`;
}

const DIRS = ['src', 'lib', 'test', 'infra', 'scripts', 'docs', 'api', 'web'];
const EXTS = ['ts', 'py', 'go', 'md', 'sql', 'yaml', 'json', 'tsx'];
const path = (r: () => number) => `${pick(r, DIRS)}/${zipf(r)}/${zipf(r)}.${pick(r, EXTS)}`;
const COMMANDS: Array<(r: () => number) => string> = [
  () => 'git status',
  (r) => `npm test -- ${path(r)}`,
  (r) => `grep -rn ${zipf(r)} ${pick(r, DIRS)}/`,
  (r) => `terraform apply -target=module.${zipf(r)}`,
  (r) => `kubectl rollout restart deployment/${zipf(r)}-worker`,
  (r) => `psql -c 'select count(*) from ${zipf(r)}_${zipf(r)}'`,
  (r) => `sed -n 1,80p ${path(r)}`,
  (r) => `git diff --stat ${path(r)}`,
  (r) => `docker compose up -d ${zipf(r)}`,
  (r) => `python -m pytest ${path(r)} -k ${zipf(r)}`,
];

// Ids are ULID-shaped and deterministic: prefix, `_01KZ`, session (6), writer (2), seq (14 Crockford digits).
const CROCKFORD = '0123456789ABCDEFGHJKMNPQRSTVWXYZ';
function b32(n: number, width: number): string {
  let s = '';
  for (let k = 0; k < width; k++) {
    s = CROCKFORD[n % 32] + s;
    n = Math.floor(n / 32);
  }
  return s;
}
export const idOf = (prefix: string, session: number, writer: number, seq: number): string =>
  `${prefix}_01KZ${b32(session, 6)}${b32(writer, 2)}${b32(seq, 14)}`;

/** One writer's segment: its lines, each with its `\n`. */
export interface CorpusWriter {
  w: string;
  agent: string;
  lines: string[];
}

export interface CorpusSession {
  sid: string;
  writers: CorpusWriter[];
  /** lines of all writers */
  events: number;
}

/**
 * Session `k` of the corpus of `seed`: about `events` lines over its writers (every writer's first line
 * its `writer.start`; no `writer.end`: the sessions stay open). Counts what it wrote into `counts`.
 */
export function corpusSession(seed: number, k: number, events: number, counts: CorpusCounts): CorpusSession {
  const r = prng(seed * 1_000_003 + k);
  const sid = idOf('s', k, 0, 0);
  const nWriters = r() < 0.5 ? 2 : 3;
  const shares = nWriters === 2 ? [0.6, 0.4] : [0.5, 0.3, 0.2];
  const start = CORPUS_END - SPAN_MS + Math.floor(r() * (SPAN_MS - 3 * 86_400_000));
  const writers: CorpusWriter[] = [];
  let total = 0;
  for (let i = 0; i < nWriters; i++) {
    const wr = writerLines(r, { sid, k, i, start, n: Math.round(events * (shares[i] as number)) }, counts);
    writers.push(wr);
    total += wr.lines.length;
  }
  return { sid, writers, events: total };
}

function writerLines(
  r: () => number,
  o: { sid: string; k: number; i: number; start: number; n: number },
  counts: CorpusCounts,
): CorpusWriter {
  const w = idOf('w', o.k, o.i, 0);
  const agent = pick(r, AGENTS);
  const person = pick(r, PEOPLE);
  const lines: string[] = [];
  let seq = 0;
  let t = o.start * 1000 + o.i * 137_000;
  const messages: string[] = [];
  const put = (prefix: string, type: string, fields: Record<string, unknown>): string => {
    seq += 1;
    t += 1_000_000 + Math.floor(r() * 2_000_000);
    const id = type === 'writer.start' ? w : idOf(prefix, o.k, o.i, seq);
    const ev = { v: 3, sid: o.sid, w, seq, id, ts: formatTs(t), mono: seq, type, extra: {}, ...fields };
    lines.push(`${serializeEvent(ev as unknown as LogEvent)}\n`);
    return id;
  };
  put('w', 'writer.start', {
    writer_id: w,
    meta: { agent, app: null, hansard_version: '0.1.0', host: `bench-${o.i}`, pid: 1000 + o.i },
    redacted: [],
  });
  while (lines.length < o.n) {
    const who = r() < 0.8 ? person : pick(r, PEOPLE);
    const m = put('m', 'message', {
      user_id: who,
      text: sentence(r, 6 + Math.floor(r() * 25), counts),
      client_ts: null,
      redacted: [],
    });
    messages.push(m);
    const turn = put('t', 'turn.start', { turn_id: idOf('t', o.k, o.i, seq + 1), context_message_ids: [m] });
    const actions = 1 + Math.floor(r() * 4);
    for (let a = 0; a < actions; a++) {
      const tool = r() < 0.5 ? 'Bash' : pick(r, TOOLS);
      const input =
        tool === 'Bash'
          ? { command: pick(r, COMMANDS)(r), description: sentence(r, 4, null) }
          : tool === 'Grep'
            ? { pattern: zipf(r), path: pick(r, DIRS) }
            : tool === 'Glob'
              ? { pattern: `${pick(r, DIRS)}/**/*.${pick(r, EXTS)}` }
              : { file_path: path(r) };
      const id = put('a', 'agent.action', {
        turn_id: turn,
        tool,
        input,
        call_id: `toolu_${seq}`,
        caused_by: [m],
        redacted: [],
      });
      put('e', 'agent.action_result', {
        action_id: id,
        status: r() < 0.95 ? 'ok' : 'error',
        output: `${path(r)}:${Math.floor(r() * 400)}: ${sentence(r, 5, null)}`,
        error: null,
        exit_code: 0,
        redacted: [],
      });
    }
    put('e', 'agent.output', {
      turn_id: turn,
      text: sentence(r, 10 + Math.floor(r() * 50), counts),
      caused_by: [m],
      redacted: [],
    });
    put('e', 'turn.end', { turn_id: turn, status: 'completed' });
    if (r() < 0.03) put('e', 'note', { author: pick(r, PEOPLE), text: sentence(r, 8, counts), redacted: [] });
    if (r() < 0.005 && messages.length > 1) {
      put('e', 'correction', {
        target_id: pick(r, messages),
        field: 'text',
        value: sentence(r, 10, counts),
        reason: 'typo',
        redacted: [],
      });
    }
  }
  return { w, agent, lines };
}
