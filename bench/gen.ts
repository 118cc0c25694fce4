/**
 * Generates a synthetic session for the benchmarks: `events` events over `writers` writers, written
 * with the real serializer, timestamps interleaved the way concurrent writers interleave.
 * Usage: tsx bench/gen.ts DIR EVENTS WRITERS
 */
import { closeSync, createWriteStream, mkdirSync, openSync, writeSync } from 'node:fs';
import { join } from 'node:path';
import { formatTs } from '../lib/log/format/time.js';
import { type LogEvent, newId, serializeEvent } from '../lib/log/index.js';

export async function generateSession(root: string, events: number, writers: number): Promise<string> {
  const sid = newId('s');
  const dir = join(root, sid);
  mkdirSync(dir, { recursive: true });
  const perWriter = Math.ceil(events / writers);
  const t0 = Date.UTC(2026, 10, 1) * 1000;
  let written = 0;
  for (let i = 0; i < writers; i++) {
    const w = newId('w');
    const out = createWriteStream(join(dir, `${w}.jsonl`));
    const n = Math.min(perWriter, events - written);
    let buf: string[] = [];
    let turn = '';
    let action = '';
    for (let seq = 1; seq <= n; seq++) {
      // Each writer's clock advances ~1 ms per event with jitter, so writers interleave in the merge.
      const ts = formatTs(t0 + seq * 1000 + ((i * 7919 + seq * 104729) % 997));
      const base = { v: 3, sid, w, seq, ts, mono: seq / 1000, extra: {} };
      let ev: LogEvent;
      if (seq === 1) {
        ev = {
          ...base,
          id: w,
          type: 'writer.start',
          writer_id: w,
          meta: { agent: `bot-${i}`, app: null, hansard_version: '0.1.0', host: 'bench', pid: i },
          redacted: [],
        } as LogEvent;
      } else if (seq === n) {
        ev = { ...base, id: newId('e'), type: 'writer.end', reason: null } as LogEvent;
      } else {
        switch (seq % 5) {
          case 0:
            ev = {
              ...base,
              id: newId('m'),
              type: 'message',
              user_id: `person-${i % 5}`,
              text: `please look at item ${seq} of the queue`,
              client_ts: null,
              redacted: [],
            } as LogEvent;
            break;
          case 1:
            turn = newId('t');
            ev = {
              ...base,
              id: turn,
              type: 'turn.start',
              turn_id: turn,
              context_message_ids: null,
            } as LogEvent;
            break;
          case 2:
            action = newId('a');
            ev = {
              ...base,
              id: action,
              type: 'agent.action',
              turn_id: turn,
              tool: 'Bash',
              input: { command: `grep -n item${seq} src/queue.ts` },
              call_id: `toolu_${seq}`,
              caused_by: null,
              redacted: [],
            } as LogEvent;
            break;
          case 3:
            ev = {
              ...base,
              id: newId('e'),
              type: 'agent.action_result',
              action_id: action,
              status: 'ok',
              output: `src/queue.ts:${seq}: item${seq}`,
              error: null,
              exit_code: 0,
              redacted: [],
            } as LogEvent;
            break;
          default:
            ev = {
              ...base,
              id: newId('e'),
              type: 'agent.output',
              turn_id: turn,
              text: `Item ${seq} is handled in src/queue.ts.`,
              caused_by: null,
              redacted: [],
            } as LogEvent;
        }
      }
      buf.push(serializeEvent(ev));
      if (buf.length >= 2000) {
        if (!out.write(`${buf.join('\n')}\n`)) await new Promise<void>((r) => out.once('drain', () => r()));
        buf = [];
      }
    }
    if (buf.length) out.write(`${buf.join('\n')}\n`);
    await new Promise<void>((r) => out.end(r));
    written += n;
  }
  return dir;
}

if (process.argv[1]?.endsWith('gen.ts')) {
  const [dir, events, writers] = process.argv.slice(2);
  generateSession(dir ?? '/tmp/hansard-bench', Number(events ?? 100000), Number(writers ?? 64)).then((d) =>
    console.log(d),
  );
}

/** What `generateBenchSession` wrote, for the bench's checks (every mode must account for all of it). */
export interface BenchSession {
  dir: string;
  writers: number;
  /** events written (valid lines), quarantined lines not included */
  events: number;
  /** quarantined lines written between events: not JSON, or JSON that is no event */
  quarantined: number;
  /** of those, lines `JSON.parse` refuses (the others parse but lack the envelope) */
  notJson: number;
  /** correction events among `events` (each changes `text` of a message of another writer) */
  corrections: number;
  /** messages the corrections changed (merged replay marks each once as `"corrected"`) */
  correctedTargets: number;
  /** corrections whose target comes later in merged order than the correction itself */
  targetsAfter: number;
  bytes: number;
}

export interface BenchSessionOptions {
  events: number;
  writers: number;
  /** share of events that are corrections (default 0.01; at most 1/12) */
  correctionShare?: number;
  /** quarantined lines to add (default max(3, events / 250,000)) */
  quarantined?: number;
}

const CROCKFORD = '0123456789ABCDEFGHJKMNPQRSTVWXYZ';
// two Crockford digits per lookup: ids are most of what the generator computes
const PAIRS = Array.from({ length: 1024 }, (_, n) => CROCKFORD[n >> 5]! + CROCKFORD[n & 31]!);
/** `n` (≥ 0, < 2^50) in `width` (even) Crockford base-32 digits, most significant first. */
const b32 = (n: number, width: number): string => {
  let s = '';
  for (let k = 0; k < width; k += 2) {
    s = PAIRS[n % 1024]! + s;
    n = Math.floor(n / 1024);
  }
  return s;
};
// Ids are deterministic, ULID-shaped (`p_01KZ0000` + writer in 6 + seq in 12 Crockford digits): unique per
// (writer, seq) with no clock or RNG. Free text of realistic sizes, made once: most lines are 200–300
// bytes, one result in 40 carries 1–3 KB of command output and one message in 25 a long prompt.
const LONG_OUTPUTS = Array.from({ length: 8 }, (_, k) =>
  Array.from(
    { length: 12 + k * 4 },
    (_, j) =>
      `commit ${b32(j * 7919 + k, 10).toLowerCase()} fix(queue): handle item ${j} when the worker restarts`,
  ).join('\n'),
);
const LONG_PROMPTS = Array.from(
  { length: 4 },
  (_, k) =>
    `Please go through the payments queue again (run ${k}). ${'Check that every retried item keeps its idempotency key, that the worker logs the attempt and that nothing is charged twice. '.repeat(4 + k)}`,
);

/**
 * A session for the replay benchmarks (issue 16): `events` events over `writers` writers (1 → 2,000),
 * written line by line from templates in the key order `serializeEvent` gives (test/bench/replay-bench.test.ts
 * checks that each line re-serializes to itself). Each writer cycles turn.start → agent.action →
 * agent.action_result → agent.output → turn.end → message, ~1 ms apart with jitter so writers interleave
 * in the merge. A share of the agent.output slots are corrections of the `text` of a message of the next
 * writer, alternately aimed at a message merged after the correction and one merged before it;
 * `quarantined` extra lines (alternately not JSON, and JSON without an envelope) sit between events.
 * Writes 4 MiB strings synchronously, one file at a time (about 250 bytes an event).
 * @returns the counts the bench checks each mode against, and the bytes written
 */
export function generateBenchSession(root: string, o: BenchSessionOptions): BenchSession {
  const { events, writers } = o;
  const share = Math.min(o.correctionShare ?? 0.01, 1 / 12);
  // a correction in one agent.output slot of every `every` cycles (every ≥ 2 keeps the targets distinct)
  const every = share > 0 ? Math.max(2, Math.round(1 / (6 * share))) : 0;
  const quarantined = o.quarantined ?? Math.max(3, Math.round(events / 250_000));
  const sid = newId('s');
  const dir = join(root, sid);
  mkdirSync(dir, { recursive: true });
  const per = Math.floor(events / writers);
  const counts = Array.from({ length: writers }, (_, i) => per + (i < events - per * writers ? 1 : 0));
  const t0 = Date.UTC(2026, 10, 1) * 1000;
  let tsSec = -1;
  let tsPrefix = '';
  const s: BenchSession = {
    dir,
    writers,
    events,
    quarantined: 0,
    notJson: 0,
    corrections: 0,
    correctedTargets: 0,
    targetsAfter: 0,
    bytes: 0,
  };
  const targets = new Set<string>();
  for (let i = 0; i < writers; i++) {
    const n = counts[i]!;
    if (n === 0) continue;
    const wpart = `_01KZ0000${b32(i, 6)}`;
    const w = `w${wpart}${b32(0, 12)}`;
    const j = (i + 1) % writers;
    const jpart = `_01KZ0000${b32(j, 6)}`;
    const nj = counts[j]!;
    const fd = openSync(join(dir, `${w}.jsonl`), 'w');
    const head = `{"v":3,"sid":"${sid}","w":"${w}","seq":`;
    let out = '';
    let q = 0;
    // the session's quarantined lines are spread over the writers, in the middle of each segment
    const qHere = Math.floor(quarantined / writers) + (i < quarantined % writers ? 1 : 0);
    const qAt = Math.max(1, Math.floor(n / 2));
    let ncorr = 0;
    let turn = '';
    let action = '';
    for (let seq = 1; seq <= n; seq++) {
      const sp = b32(seq, 12);
      const micros = t0 + seq * 1000 + ((i * 7919 + seq * 104729) % 997);
      const sec = Math.floor(micros / 1e6);
      if (sec !== tsSec) {
        tsSec = sec;
        tsPrefix = new Date(sec * 1000).toISOString().slice(0, 20);
      }
      const env = `${head}${seq},"id":"`;
      const rest = `","ts":"${tsPrefix}${String(micros % 1e6).padStart(6, '0')}Z","mono":${seq / 1000},"type":"`;
      const k = (seq - 2) % 6;
      let line: string;
      if (seq === 1) {
        line = `${env}${w}${rest}writer.start","writer_id":"${w}","meta":{"agent":"bot-${i}","app":null,"hansard_version":"0.1.0","host":"bench","pid":${i}},"redacted":[]}`;
      } else if (seq === n) {
        line = `${env}e${wpart}${sp}${rest}writer.end","reason":null}`;
      } else if (k === 0) {
        turn = `t${wpart}${sp}`;
        line = `${env}${turn}${rest}turn.start","turn_id":"${turn}","context_message_ids":null}`;
      } else if (k === 1) {
        action = `a${wpart}${sp}`;
        line = `${env}${action}${rest}agent.action","turn_id":"${turn}","tool":"Bash","input":{"command":"grep -n item${seq} src/queue.ts"},"call_id":"toolu_${seq}","caused_by":null,"redacted":[]}`;
      } else if (k === 2) {
        const output = seq % 240 === 4 ? LONG_OUTPUTS[seq % 8]! : `src/queue.ts:${seq}: item${seq}`;
        line = `${env}e${wpart}${sp}${rest}agent.action_result","action_id":"${action}","status":"ok","output":${JSON.stringify(output)},"error":null,"exit_code":0,"redacted":[]}`;
      } else if (k === 3) {
        // a correction of writer j's message at seq + 2 (merged after this line) or at seq − 4 (before)
        let target = 0;
        if (every > 0 && Math.floor(seq / 6) % every === i % every) {
          const after = ncorr % 2 === 0;
          target = after ? seq + 2 : seq - 4;
          if (target < 7 || target >= nj) target = after ? seq - 4 : seq + 2;
          if (target < 7 || target >= nj) target = 0;
        }
        if (target > 0) {
          ncorr++;
          s.corrections++;
          if (target > seq) s.targetsAfter++;
          targets.add(`${j}:${target}`);
          line = `${env}e${wpart}${sp}${rest}correction","target_id":"m${jpart}${b32(target, 12)}","field":"text","value":"please look at item ${target + 1}","reason":"wrong item","redacted":[]}`;
        } else {
          line = `${env}e${wpart}${sp}${rest}agent.output","turn_id":"${turn}","text":"Item ${seq} is handled in src/queue.ts.","caused_by":null,"redacted":[]}`;
        }
      } else if (k === 4) {
        line = `${env}e${wpart}${sp}${rest}turn.end","turn_id":"${turn}","status":"completed"}`;
      } else {
        const text = seq % 150 === 1 ? LONG_PROMPTS[seq % 4]! : `please look at item ${seq}`;
        line = `${env}m${wpart}${sp}${rest}message","user_id":"person-${i % 5}","text":${JSON.stringify(text)},"client_ts":null,"redacted":[]}`;
      }
      out += `${line}\n`;
      if (seq >= qAt && q < qHere) {
        const notJson = (s.quarantined + q) % 2 === 0;
        out += notJson
          ? `${head}${seq},"id":"e_cut off here\n`
          : `{"note":"a JSON line with no envelope, quarantined by the reader","n":${q}}\n`;
        if (notJson) s.notJson++;
        q++;
      }
      if (out.length >= 4 * 1024 * 1024) {
        s.bytes += writeSync(fd, out);
        out = '';
      }
    }
    if (out) s.bytes += writeSync(fd, out);
    closeSync(fd);
    s.quarantined += q;
  }
  s.correctedTargets = targets.size;
  return s;
}
