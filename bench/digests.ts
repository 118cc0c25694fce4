/**
 * `npm run bench:digests`: what the audit digests cost at ingest (issue 15, "hashing must not cost more
 * than 10%"). Two figures, in the same run:
 * - the digester: the built `hansard serve` runs three times per round, in rotating order: with the
 *   digester off (`HANSARD_DIGESTER=off`), on at the default 300 s interval (each new session is signed
 *   at the next 5 s tick, then every 5 minutes), and on at a 1 s interval (every session that changed
 *   is signed at each tick: 60× the default cadence), on a fresh data directory each time;
 * - the hashing: every chunk's SHA-256 (kept since issue 8: retries and verify use it) and the chain are
 *   computed in both modes, so their share is measured directly: the time to hash the run's bytes in
 *   this process over the time the server took to ingest them.
 * Workloads:
 * 1. small chunks: 50 connections × DURATION s, each its own session and writer, 5-event chunks;
 * 2. large chunks: 4 writers in parallel, each sending 4 MiB chunks back to back (MiB/s).
 * The figure is the ratio on/off of the median over ROUNDS rounds (same machine, same run).
 * Usage: npm run bench:digests [-- --duration 10 --rounds 3 --large-mib 64]
 */
import { mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { cpus, tmpdir, totalmem } from 'node:os';
import { join } from 'node:path';
import autocannon from 'autocannon';
import { formatTs, type LogEvent, newId, serializeEvent } from '../lib/log/index.js';
import { startServer } from './serve.js';

const args = process.argv.slice(2);
const arg = (name: string, def: string) => {
  const i = args.indexOf(`--${name}`);
  return i >= 0 && args[i + 1] ? args[i + 1]! : def;
};
const DURATION = Number(arg('duration', '10'));
const ROUNDS = Number(arg('rounds', '3'));
const LARGE_MIB = Number(arg('large-mib', '64'));
const CONNECTIONS = 50;
const LARGE_WRITERS = 4;
const ADMIN = `hns_${'D'.repeat(43)}`;
const auth = { authorization: `Bearer ${ADMIN}` };

interface Writer {
  sid: string;
  w: string;
  seq: number;
  offset: number;
}

function event(s: Writer, type: string, fields: Record<string, unknown>): string {
  s.seq += 1;
  return serializeEvent({
    v: 3,
    sid: s.sid,
    w: s.w,
    seq: s.seq,
    id: type === 'writer.start' ? s.w : newId('e'),
    ts: formatTs(Date.now() * 1000 + s.seq),
    mono: s.seq / 1000,
    type,
    extra: {},
    redacted: [],
    ...fields,
  } as unknown as LogEvent);
}

/** The next chunk of `s`: its writer.start first, then notes of `noteBytes` characters each. */
function chunk(s: Writer, events: number, noteBytes: number): string {
  const lines: string[] = [];
  if (s.seq === 0) {
    lines.push(
      event(s, 'writer.start', {
        writer_id: s.w,
        meta: { agent: 'bench', app: null, hansard_version: '0.1.0', host: 'bench', pid: 1 },
      }),
    );
  }
  const text = 'x'.repeat(noteBytes);
  while (lines.length < events) lines.push(event(s, 'note', { author: 'bench', text }));
  return `${lines.join('\n')}\n`;
}

async function smallChunks(url: string): Promise<number> {
  const writers: Writer[] = Array.from({ length: CONNECTIONS }, () => ({
    sid: newId('s'),
    w: newId('w'),
    seq: 0,
    offset: 0,
  }));
  const idle = [...writers];
  const r = await autocannon({
    url,
    connections: CONNECTIONS,
    duration: DURATION,
    requests: [
      {
        setupRequest: (req, context) => {
          const s = idle.shift()!;
          const c = context as { s?: Writer; body?: string };
          c.s = s;
          c.body = chunk(s, 5, 200);
          return {
            ...req,
            method: 'POST',
            path: `/v1/sessions/${s.sid}/writers/${s.w}/chunks?offset=${s.offset}`,
            headers: { ...auth, 'content-type': 'application/x-ndjson' },
            body: c.body,
          };
        },
        onResponse: (status, body, context) => {
          const c = context as { s: Writer };
          if (status === 201 || status === 200) c.s.offset = (JSON.parse(body) as { length: number }).length;
          else throw new Error(`chunk answered ${status}: ${body}`);
          idle.push(c.s);
        },
      },
    ],
  });
  if (r.non2xx > 0 || r.errors > 0) throw new Error(`small chunks: ${r.non2xx} non-2xx, ${r.errors} errors`);
  return r.requests.average;
}

async function largeChunks(url: string): Promise<number> {
  const per = Math.max(1, Math.round(LARGE_MIB / 4 / LARGE_WRITERS));
  const started = performance.now();
  let bytes = 0;
  await Promise.all(
    Array.from({ length: LARGE_WRITERS }, async () => {
      const s: Writer = { sid: newId('s'), w: newId('w'), seq: 0, offset: 0 };
      for (let i = 0; i < per; i++) {
        // ~4 MiB: 1,000 notes of ~4 KiB
        const body = chunk(s, 1000, 4000);
        const res = await fetch(`${url}/v1/sessions/${s.sid}/writers/${s.w}/chunks?offset=${s.offset}`, {
          method: 'POST',
          headers: { ...auth, 'content-type': 'application/x-ndjson' },
          body,
        });
        const text = await res.text();
        if (res.status !== 201) throw new Error(`large chunk answered ${res.status}: ${text}`);
        s.offset = (JSON.parse(text) as { length: number }).length;
        bytes += Buffer.byteLength(body);
      }
    }),
  );
  return bytes / 2 ** 20 / ((performance.now() - started) / 1000);
}

/** Digest files the run left in the data directory (0 with digests off). */
function countDigests(data: string): number {
  let n = 0;
  const walk = (dir: string) => {
    for (const e of readdirSync(dir, { withFileTypes: true })) {
      if (e.isDirectory()) walk(join(dir, e.name));
      else if (dir.endsWith('digests') && e.name.endsWith('.json')) n += 1;
    }
  };
  walk(data);
  return n;
}

type Mode = 'off' | 'on' | 'stress';
const MODES: Mode[] = ['off', 'on', 'stress'];

async function round(mode: Mode): Promise<{ small: number; large: number; digests: number }> {
  const data = mkdtempSync(join(tmpdir(), `hansard-digests-${mode}-`));
  const env: Record<string, string> = { HANSARD_RATE_LIMIT: '0' };
  if (mode === 'off') env.HANSARD_DIGESTER = 'off';
  if (mode === 'stress') env.HANSARD_DIGEST_INTERVAL_SECONDS = '1';
  const { url, proc } = await startServer(data, ADMIN, env);
  try {
    const small = await smallChunks(url);
    const large = await largeChunks(url);
    // let the digester's 5 s tick sign what the run wrote, so the digest count is the run's
    await new Promise((r) => setTimeout(r, 6000));
    return { small, large, digests: countDigests(data) };
  } finally {
    proc.kill('SIGTERM');
    await new Promise((r) => proc.once('exit', r));
    rmSync(data, { recursive: true, force: true });
  }
}

const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!;
const results: Record<Mode, Array<{ small: number; large: number; digests: number }>> = {
  off: [],
  on: [],
  stress: [],
};
for (let i = 0; i < ROUNDS; i++) {
  // rotate which goes first, so a machine warming up or slowing down does not favour one mode
  for (let k = 0; k < MODES.length; k++) {
    const mode = MODES[(i + k) % MODES.length]!;
    process.stderr.write(`round ${i + 1}/${ROUNDS}, digester ${mode}\n`);
    results[mode].push(await round(mode));
  }
}
const med = (mode: Mode) => ({
  small: median(results[mode].map((r) => r.small)),
  large: median(results[mode].map((r) => r.large)),
});
const on = med('on');
const off = med('off');
const stress = med('stress');

// The share of ingest time that hashing is: SHA-256 of a 4 MiB body and of a small one, here, against the
// time per chunk the server took (digests on).
const { createHash } = await import('node:crypto');
const hashMs = (bytes: number, reps: number) => {
  const b = Buffer.alloc(bytes, 0x61);
  const t = performance.now();
  for (let i = 0; i < reps; i++) createHash('sha256').update(b).digest('hex');
  return (performance.now() - t) / reps;
};
const largeBytes = Buffer.byteLength(
  chunk({ sid: newId('s'), w: newId('w'), seq: 1, offset: 0 }, 1000, 4000),
);
const smallBytes = Buffer.byteLength(chunk({ sid: newId('s'), w: newId('w'), seq: 1, offset: 0 }, 5, 200));
const largeHash = hashMs(largeBytes, 50);
const smallHash = hashMs(smallBytes, 20000);
const largeChunkMs = (largeBytes / 2 ** 20 / on.large) * 1000 * LARGE_WRITERS;
const smallChunkMs = (1000 / on.small) * CONNECTIONS;
const fmt = (xs: number[]) => xs.map((x) => x.toFixed(0)).join(', ');
const section = `<!-- bench:digests:start -->
Measured ${new Date().toISOString().slice(0, 16).replace('T', ' ')} UTC on ${cpus()[0]?.model ?? 'unknown CPU'}, ${cpus().length} cores, ${(totalmem() / 2 ** 30).toFixed(0)} GiB, Node ${process.version}: \`npm run bench:digests\`, the built server on loopback, local mode (files + SQLite, every chunk fsynced), ${ROUNDS} rounds, the three modes in rotating order, a fresh data directory each.

| workload | digester off (\`HANSARD_DIGESTER=off\`) | on, default 300 s interval | on / off | on, 1 s interval | 1 s / off |
|---|---:|---:|---:|---:|---:|
| small chunks (5 events, ~1.4 KB), ${CONNECTIONS} connections × ${DURATION} s, req/s | ${off.small.toFixed(0)} (${fmt(results.off.map((r) => r.small))}) | ${on.small.toFixed(0)} (${fmt(results.on.map((r) => r.small))}) | ${(on.small / off.small).toFixed(3)} | ${stress.small.toFixed(0)} (${fmt(results.stress.map((r) => r.small))}) | ${(stress.small / off.small).toFixed(3)} |
| 4 MiB chunks, ${LARGE_WRITERS} writers in parallel, ${LARGE_MIB} MiB, MiB/s | ${off.large.toFixed(0)} (${fmt(results.off.map((r) => r.large))}) | ${on.large.toFixed(0)} (${fmt(results.on.map((r) => r.large))}) | ${(on.large / off.large).toFixed(3)} | ${stress.large.toFixed(0)} (${fmt(results.stress.map((r) => r.large))}) | ${(stress.large / off.large).toFixed(3)} |

Figures are medians of the rounds (each round's in brackets).

Hashing (SHA-256 of each chunk, in both columns): ${largeHash.toFixed(2)} ms per 4 MiB chunk against ${largeChunkMs.toFixed(1)} ms per chunk and writer at ingest (${((largeHash / largeChunkMs) * 100).toFixed(1)}%); ${(smallHash * 1000).toFixed(1)} µs per small chunk against ${smallChunkMs.toFixed(1)} ms per request and connection (${((smallHash / smallChunkMs) * 100).toFixed(2)}%).

Digests written per run: default interval ${results.on.map((r) => r.digests).join(', ')}; 1 s interval ${results.stress.map((r) => r.digests).join(', ')}; digester off ${results.off.map((r) => r.digests).join(', ')}.
<!-- bench:digests:end -->`;
const doc = 'docs/benchmarks.md';
const before = readFileSync(doc, 'utf8');
writeFileSync(
  doc,
  before.includes('<!-- bench:digests:start -->')
    ? before.replace(/<!-- bench:digests:start -->[\s\S]*<!-- bench:digests:end -->/, section)
    : `${before.trimEnd()}\n\n## Audit digests: the cost at ingest\n\n${section}\n`,
);
process.stdout.write(`${section}\n`);
