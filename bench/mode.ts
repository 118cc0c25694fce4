/**
 * The parse-only baselines of `npm run bench` (issue 16), each run in its own process so its peak RSS is
 * its own. Prints one JSON line: {mode, lines, parsed, failed, bytes}: `lines` non-empty lines read,
 * `parsed` those `JSON.parse` took, `failed` those it refused (quarantined lines that are not JSON).
 * Usage: node bench/.build/mode.mjs MODE DIR   (MODE: parse | parse-chunks)
 */
import { createReadStream, readdirSync, readFileSync, statSync } from 'node:fs';
import { join } from 'node:path';

interface Counts {
  lines: number;
  parsed: number;
  failed: number;
}

function parseText(text: string, from: number, to: number, c: Counts): void {
  try {
    JSON.parse(text.slice(from, to));
    c.parsed++;
  } catch {
    c.failed++;
  }
  c.lines++;
}

/**
 * The baseline: "a parse-only pass over the same files (read each file whole, JSON.parse every
 * line)" — no envelope checks, no order, no output. A file must fit in one string (V8: 512 MiB), which
 * every session of the bench does (the largest segment is 1M events of one writer, ~320 MB).
 */
function parseWhole(dir: string): Counts {
  const c: Counts = { lines: 0, parsed: 0, failed: 0 };
  for (const f of readdirSync(dir)) {
    const text = readFileSync(join(dir, f), 'utf8');
    let pos = 0;
    for (;;) {
      const nl = text.indexOf('\n', pos);
      const end = nl === -1 ? text.length : nl;
      if (end > pos) parseText(text, pos, end, c);
      if (nl === -1) break;
      pos = nl + 1;
    }
  }
  return c;
}

/**
 * The previous bench's baseline (kept for comparison, not in the tables): the same parse over 64 KiB
 * reads decoded a chunk at a time, so memory stays flat however large a file is.
 */
async function parseChunks(dir: string): Promise<Counts> {
  const c: Counts = { lines: 0, parsed: 0, failed: 0 };
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
        if (nl > pos) parseText(text, pos, nl, c);
        pos = nl + 1;
      }
      carry = text.slice(pos);
    }
    if (carry) parseText(carry, 0, carry.length, c);
  }
  return c;
}

const [mode, dir] = process.argv.slice(2) as [string, string];
const bytes = readdirSync(dir).reduce((s, f) => s + statSync(join(dir, f)).size, 0);
const counts =
  mode === 'parse' ? parseWhole(dir) : mode === 'parse-chunks' ? await parseChunks(dir) : undefined;
if (!counts) throw new Error(`unknown mode ${mode} (parse | parse-chunks)`);
process.stdout.write(`${JSON.stringify({ mode, ...counts, bytes })}\n`);
