/**
 * One benchmark mode over one session directory, in its own process so its peak RSS is its own.
 * Prints one JSON line: {mode, events, bytes, seconds, max_rss_mb}.
 * Usage: tsx bench/mode.ts MODE DIR   (MODE: parse | replay | naive)
 */
import { createReadStream, readdirSync, readFileSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { replayChunks, sessionDirSegments } from '../lib/log/index.js';
import { parseTs } from '../lib/log/time.js';

/**
 * The practical limit: read every segment in 64 KiB chunks and JSON.parse every line, with nothing else
 * (no envelope checks, no order, no output). Decoding a chunk at a time and splitting the string is the
 * fastest plain way we know to do that in Node.
 */
async function parseOnly(dir: string): Promise<number> {
  let n = 0;
  for (const f of readdirSync(dir)) {
    let carry = '';
    for await (const chunk of createReadStream(join(dir, f), {
      highWaterMark: 64 * 1024,
      encoding: 'utf8',
    })) {
      const text = carry + (chunk as string);
      let pos = 0;
      for (;;) {
        const nl = text.indexOf('\n', pos);
        if (nl === -1) break;
        JSON.parse(text.slice(pos, nl));
        n++;
        pos = nl + 1;
      }
      carry = text.slice(pos);
    }
  }
  return n;
}

/**
 * The merged replay as the CLI and the server run it, consumed as a writer would (bytes, not lines).
 * Returns -1: the run reports the session's event count from the parse mode.
 */
async function replay(dir: string): Promise<number> {
  let bytes = 0;
  for await (const chunk of replayChunks(sessionDirSegments(dir), 'ndjson')) bytes += chunk.length;
  return bytes > 0 ? -1 : 0;
}

async function naive(dir: string): Promise<number> {
  const all: Array<{ t: number; w: string; seq: number; raw: string }> = [];
  for (const f of readdirSync(dir)) {
    for (const raw of readFileSync(join(dir, f), 'utf8').split('\n')) {
      if (!raw) continue;
      const o = JSON.parse(raw) as { ts: string; w: string; seq: number };
      all.push({ t: parseTs(o.ts)?.micros ?? 0, w: o.w, seq: o.seq, raw });
    }
  }
  all.sort((a, b) => a.t - b.t || (a.w < b.w ? -1 : a.w > b.w ? 1 : a.seq - b.seq));
  let bytes = 0;
  for (const e of all) bytes += e.raw.length + 1;
  return bytes >= 0 ? all.length : 0;
}

const [mode, dir] = process.argv.slice(2) as [string, string];
const bytes = readdirSync(dir).reduce((s, f) => s + statSync(join(dir, f)).size, 0);
const fn = { parse: parseOnly, replay, naive }[mode];
if (!fn) throw new Error(`unknown mode ${mode}`);
const t = process.hrtime.bigint();
const events = await fn(dir);
const seconds = Number(process.hrtime.bigint() - t) / 1e9;
console.log(
  JSON.stringify({ mode, events, bytes, seconds, max_rss_mb: process.resourceUsage().maxRSS / 1024 }),
);
