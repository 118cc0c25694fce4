/**
 * scanLine (lib/log/format/envelope-scan.ts) against parseLine and a bare JSON.parse of the decoded line, in ns per
 * line over the lines of a session from bench/gen.ts (64 writers), and how many lines the scan handed to
 * parseLine (its fallback). Also checks the three agree on every line's verdict.
 * Usage: npx tsx bench/scan-line.ts [LINES=200000] [ROUNDS=5]
 */
import { mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { parseLine } from '../lib/log/format/codec.js';
import { newLineScan, scanFallbacks, scanLine } from '../lib/log/format/envelope-scan.js';
import { generateSession } from './gen.js';

const lines = Number(process.argv[2] ?? 200_000);
const rounds = Number(process.argv[3] ?? 5);
const root = mkdtempSync(join(tmpdir(), 'hansard-scan-'));
const dir = await generateSession(root, lines, 64);
const bufs = readdirSync(dir).map((f) => readFileSync(join(dir, f)));
rmSync(root, { recursive: true, force: true });

/** Every line as [buffer, start, end) (no copy). */
const spans: { buf: Buffer; start: number; end: number }[] = [];
for (const buf of bufs) {
  let at = 0;
  for (let nl = buf.indexOf(10, at); nl >= 0; nl = buf.indexOf(10, at)) {
    spans.push({ buf, start: at, end: nl });
    at = nl + 1;
  }
}
const bytes = spans.reduce((n, s) => n + s.end - s.start, 0);
console.log(`${spans.length} lines, ${(bytes / spans.length).toFixed(0)} bytes a line on average`);

const out = newLineScan();
let sink = 0;
const runs: Record<string, () => void> = {
  scanLine: () => {
    for (const s of spans) if (scanLine(s.buf, s.start, s.end, out)) sink += out.tsMicros;
  },
  'scanLine(wantId)': () => {
    for (const s of spans) if (scanLine(s.buf, s.start, s.end, out, true)) sink += out.id!.length;
  },
  parseLine: () => {
    for (const s of spans) {
      const p = parseLine(s.buf.subarray(s.start, s.end), 1, 0, true);
      if (p.ok) sink += p.event.tsMicros ?? 0;
    }
  },
  'JSON.parse': () => {
    for (const s of spans) sink += JSON.parse(s.buf.toString('utf8', s.start, s.end)).seq;
  },
};

// Verdicts agree on every line.
const before = scanFallbacks();
let disagree = 0;
for (const s of spans) {
  const ok = scanLine(s.buf, s.start, s.end, out, true);
  const p = parseLine(s.buf.subarray(s.start, s.end), 1, 0, true);
  if (ok !== p.ok || (p.ok && (p.event.tsMicros !== out.tsMicros || p.event.id !== out.id))) disagree++;
}
const fallbacks = scanFallbacks() - before;
console.log(
  `verdicts that differ from parseLine: ${disagree}; fallbacks to parseLine: ${fallbacks} of ${spans.length}`,
);

const best: Record<string, number> = {};
for (let r = 0; r < rounds; r++) {
  for (const [name, run] of Object.entries(runs)) {
    // CPU time of this thread rather than wall time: the figures hold on a machine others share.
    const t0 = process.cpuUsage();
    run();
    const used = process.cpuUsage(t0);
    const ns = ((used.user + used.system) * 1000) / spans.length;
    best[name] = Math.min(best[name] ?? Number.POSITIVE_INFINITY, ns);
  }
}
for (const [name, ns] of Object.entries(best))
  console.log(`${name.padEnd(18)} ${ns.toFixed(0).padStart(6)} ns/line CPU (best of ${rounds})`);
console.log(`scanLine / JSON.parse: ${(best.scanLine! / best['JSON.parse']!).toFixed(2)}`);
if (sink === 42) console.log('');
