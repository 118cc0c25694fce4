/**
 * The ingest workload of the load benchmarks (bench/load.ts, bench/ingest-scale.ts): `connections`
 * autocannon connections, each owning one session at a time, posting the next chunk of that session's
 * writer (`eventsPerChunk` note events, or `chunkBytes` of padded notes) and, when `withStatus`, a status
 * report after each chunk. `checkLoss` then replays every session and counts events lost or duplicated
 * against what the server acknowledged.
 */
import autocannon from 'autocannon';
import { formatTs, type LogEvent, newId, serializeEvent } from '../lib/log/index.js';

export interface SessionState {
  sid: string;
  w: string;
  seq: number;
  offset: number;
  /** events the server acknowledged (201, or 200 for a retry) */
  accepted: number;
  ids: Set<string>;
  next: 'chunk' | 'status';
  pending: { body: Buffer; lines: number; ids: string[] } | null;
  /** the chunk after `pending`, made while the server answers (large chunks) */
  prepared: { body: Buffer; lines: number; ids: string[] } | null;
}

export interface WorkloadOptions {
  url: string;
  admin: string;
  connections: number;
  /** seconds */
  duration: number;
  /** a status report after each chunk (the issue 5 mix), else chunks only */
  withStatus: boolean;
  eventsPerChunk?: number;
  /** when set, each chunk is about this many bytes (its notes padded), e.g. 4 MiB */
  chunkBytes?: number;
}

export interface Summary {
  requests: number;
  /** requests per second (autocannon's average over the seconds of the run) */
  rps: number;
  /** ms */
  p50: number;
  p99: number;
  non2xx: number;
  errors: number;
  timeouts: number;
  codes: Record<string, number>;
  /** bytes of chunk bodies acknowledged per second, in MiB/s */
  chunkMiBps: number;
}

export function newSession(): SessionState {
  return {
    sid: newId('s'),
    w: newId('w'),
    seq: 0,
    offset: 0,
    accepted: 0,
    ids: new Set(),
    next: 'chunk',
    pending: null,
    prepared: null,
  };
}

/** Where a note's padding goes in its serialized line (plain ASCII: JSON escapes none of it). */
const PAD_MARK = '@@pad@@';
const pads = new Map<number, Buffer>();

/**
 * The next chunk of `s` (a writer.start first for a new segment), `events` lines of about `bytes`, as the
 * bytes to send. A padded note is serialized with a mark where its padding goes and the padding (`x`s, one
 * shared buffer) is spliced in as bytes: the same bytes as serializing the padded text, at a fraction of
 * the client's CPU (a 4 MiB chunk took the client 38 ms to make as one string, more than the server took).
 */
export function chunkFor(
  s: SessionState,
  events: number,
  bytes?: number,
): { body: Buffer; lines: number; ids: string[] } {
  const parts: Buffer[] = [];
  const ids: string[] = [];
  const now = Date.now() * 1000;
  const base = (type: string, id: string) => ({
    v: 3,
    sid: s.sid,
    w: s.w,
    seq: ++s.seq,
    id,
    ts: formatTs(now + s.seq),
    mono: s.seq / 1000,
    type,
    extra: {},
  });
  const nl = Buffer.from('\n');
  if (s.offset === 0 && s.seq === 0) {
    const ev = {
      ...base('writer.start', s.w),
      writer_id: s.w,
      meta: { agent: 'load', app: null, hansard_version: '0.1.0', host: 'bench', pid: 1 },
      redacted: [],
    };
    parts.push(Buffer.from(serializeEvent(ev as LogEvent)), nl);
    ids.push(s.w);
  }
  // Padding per note so that `events` notes make about `bytes` (each line's envelope is ~200 bytes).
  const padLength = bytes ? Math.max(0, Math.floor(bytes / events) - 260) : 0;
  let pad = pads.get(padLength);
  if (!pad) {
    pad = Buffer.alloc(padLength, 'x');
    pads.set(padLength, pad);
  }
  while (ids.length < events) {
    const id = newId('e');
    const line = serializeEvent({
      ...base('note', id),
      author: 'load',
      text: `load note ${s.seq}${padLength > 0 ? PAD_MARK : ''}`,
      redacted: [],
    } as LogEvent);
    const at = padLength > 0 ? line.indexOf(PAD_MARK) : -1;
    if (at < 0) parts.push(Buffer.from(line), nl);
    else parts.push(Buffer.from(line.slice(0, at)), pad, Buffer.from(line.slice(at + PAD_MARK.length)), nl);
    ids.push(id);
  }
  return { body: Buffer.concat(parts), lines: ids.length, ids };
}

function summarize(r: autocannon.Result, chunkBytes: number): Summary {
  return {
    requests: r.requests.total,
    rps: r.requests.average,
    p50: r.latency.p50,
    p99: r.latency.p99,
    non2xx: r.non2xx,
    errors: r.errors,
    timeouts: r.timeouts,
    codes: Object.fromEntries(
      Object.entries(r.statusCodeStats ?? {}).map(([k, v]) => [k, (v as { count: number }).count]),
    ),
    chunkMiBps: chunkBytes / 2 ** 20 / r.duration,
  };
}

/** `connections` × `duration` s of `GET /healthz`, the bare route of the same server. */
export async function bareRoute(url: string, connections: number, duration: number): Promise<Summary> {
  return summarize(await autocannon({ url: `${url}/healthz`, connections, duration }), 0);
}

/**
 * `connections` × `duration` s of one fixed request (the same method, path, headers and body every time):
 * the steps of a chunk without its disk, e.g. an authenticated read or a chunk the server refuses.
 */
export async function fixedRequest(
  url: string,
  connections: number,
  duration: number,
  req: { method: 'GET' | 'POST'; path: string; headers: Record<string, string>; body?: Buffer },
): Promise<Summary> {
  return summarize(await autocannon({ url: `${url}${req.path}`, connections, duration, ...req }), 0);
}

/** Runs the workload; returns its figures and the sessions (for `checkLoss`). */
export async function ingestWorkload(
  o: WorkloadOptions,
): Promise<{ summary: Summary; sessions: SessionState[] }> {
  const events = o.eventsPerChunk ?? 5;
  const sessions = Array.from({ length: o.connections }, newSession);
  const idle = [...sessions];
  const auth = { authorization: `Bearer ${o.admin}` };
  let ackedBytes = 0;
  const result = await autocannon({
    url: o.url,
    connections: o.connections,
    duration: o.duration,
    // 4 MiB bodies at 200 connections: autocannon's default 10 s timeout is short for a 2-core machine.
    timeout: 60,
    requests: [
      {
        setupRequest: (req, context) => {
          // Each connection takes an idle session, so a writer never has two chunks in flight.
          const s = idle.shift()!;
          (context as { s?: SessionState }).s = s;
          if (s.next === 'status') {
            return {
              ...req,
              method: 'POST',
              path: `/v1/sessions/${s.sid}/status`,
              headers: { ...auth, 'content-type': 'application/json' },
              body: JSON.stringify({ state: 'working', note: `at seq ${s.seq}` }),
            };
          }
          if (!s.pending) {
            s.pending = s.prepared ?? chunkFor(s, events, o.chunkBytes);
            s.prepared = null;
            // A large chunk takes the client milliseconds to make: the next one is made while the server
            // takes this one (after autocannon has written it), not after its answer.
            if (o.chunkBytes) setImmediate(() => (s.prepared ??= chunkFor(s, events, o.chunkBytes)));
          }
          return {
            ...req,
            method: 'POST',
            path: `/v1/sessions/${s.sid}/writers/${s.w}/chunks?offset=${s.offset}`,
            headers: { ...auth, 'content-type': 'application/x-ndjson' },
            body: s.pending.body,
          };
        },
        onResponse: (status, body, context) => {
          const s = (context as { s: SessionState }).s;
          if (s.next === 'chunk') {
            const accept = () => {
              s.accepted += s.pending!.lines;
              ackedBytes += s.pending!.body.length;
              for (const id of s.pending!.ids) s.ids.add(id);
              s.pending = null;
            };
            if (status === 201 || status === 200) {
              s.offset = (JSON.parse(body) as { length: number }).length;
              accept();
              if (o.withStatus) s.next = 'status';
            } else if (status === 409) {
              // Only this connection writes this session: a 409 means an earlier try of this very chunk
              // was stored (its answer lost), or not.
              const e = JSON.parse(body) as { error: { details: { expected_offset: number } } };
              const expected = e.error.details.expected_offset;
              if (expected === s.offset + s.pending!.body.length) accept();
              s.offset = expected;
            }
          } else s.next = 'chunk';
          idle.push(s);
        },
      },
    ],
  });
  return { summary: summarize(result, ackedBytes), sessions };
}

/** Replays every session that got an acknowledgement: events lost, duplicated, and replayed. */
export async function checkLoss(
  url: string,
  admin: string,
  sessions: SessionState[],
): Promise<{ lost: number; duplicated: number; checked: number; sessions: number }> {
  const auth = { authorization: `Bearer ${admin}` };
  let lost = 0;
  let duplicated = 0;
  let checked = 0;
  const used = sessions.filter((s) => s.accepted > 0);
  for (const s of used) {
    const res = await fetch(`${url}/v1/sessions/${s.sid}/replay`, { headers: auth });
    const lines = (await res.text()).split('\n').filter(Boolean);
    const seen = new Map<string, number>();
    for (const l of lines) {
      const id = (JSON.parse(l) as { id: string }).id;
      seen.set(id, (seen.get(id) ?? 0) + 1);
    }
    for (const id of s.ids) if (!seen.has(id)) lost += 1;
    for (const n of seen.values()) if (n > 1) duplicated += n - 1;
    if (lines.length !== s.accepted) lost += Math.max(0, s.accepted - lines.length);
    checked += lines.length;
  }
  return { lost, duplicated, checked, sessions: used.length };
}
