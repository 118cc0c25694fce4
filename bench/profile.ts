/**
 * `npm run bench -- --profile MODE`: one run of a replay mode under `node --cpu-prof`, and the functions
 * that took the most self time, from the .cpuprofile V8 writes (the Chrome DevTools profile format:
 * `nodes` with `callFrame` and ids, `samples` naming a node per tick, `timeDeltas` in µs between ticks).
 */
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { SourceMap } from 'node:module';
import { dirname, join, relative, resolve } from 'node:path';

interface ProfileNode {
  id: number;
  callFrame: { functionName: string; url: string; lineNumber: number; columnNumber: number };
}
interface CpuProfile {
  nodes: ProfileNode[];
  samples: number[];
  timeDeltas: number[];
}

/** One function's share of a profile: self time in ms and as a share of all sampled time. */
export interface SelfTime {
  fn: string;
  where: string;
  ms: number;
  share: number;
}

/**
 * Self time per function (name + file:line, 1-based) of a .cpuprofile, largest first. Ticks in V8's
 * pseudo-frames ("(garbage collector)", "(program)", "(idle)") are kept under those names, since GC is
 * often what a ratio is held back by.
 * @throws when `file` is not a V8 CPU profile
 */
export function selfTimes(file: string, root = process.cwd()): SelfTime[] {
  const p = JSON.parse(readFileSync(file, 'utf8')) as CpuProfile;
  if (!Array.isArray(p.nodes) || !Array.isArray(p.samples)) throw new Error(`${file} is no .cpuprofile`);
  const byId = new Map(p.nodes.map((n) => [n.id, n]));
  const acc = new Map<string, SelfTime>();
  let total = 0;
  for (let i = 0; i < p.samples.length; i++) {
    const us = p.timeDeltas[i] ?? 0;
    const node = byId.get(p.samples[i]!);
    if (!node) continue;
    total += us;
    const { functionName, url, lineNumber, columnNumber } = node.callFrame;
    const where = sourceOf(url, lineNumber, columnNumber, root);
    const key = `${functionName}\u0000${where}`;
    const e = acc.get(key) ?? { fn: functionName || '(anonymous)', where, ms: 0, share: 0 };
    e.ms += us / 1000;
    acc.set(key, e);
  }
  return [...acc.values()]
    .map((e) => ({ ...e, share: total > 0 ? (e.ms * 1000) / total : 0 }))
    .sort((a, b) => b.ms - a.ms);
}

const maps = new Map<string, SourceMap | null>();
/**
 * `file:line` (1-based, relative to `root`) of a frame, through the bundle's source map when there is one
 * (dist/ is built with maps), so the table names lib/… files rather than lines of a bundle chunk.
 */
function sourceOf(url: string, line0: number, col0: number, root: string): string {
  if (!url.startsWith('file://')) return url ? `${url}:${line0 + 1}` : '';
  const file = new URL(url).pathname;
  if (!maps.has(file)) {
    const map = `${file}.map`;
    maps.set(file, existsSync(map) ? new SourceMap(JSON.parse(readFileSync(map, 'utf8'))) : null);
  }
  const e = maps.get(file)?.findEntry(line0, col0);
  if (e && 'originalSource' in e && e.originalSource) {
    const src = e.originalSource.startsWith('file://')
      ? new URL(e.originalSource).pathname
      : resolve(dirname(file), e.originalSource);
    return `${relative(root, src)}:${e.originalLine + 1}`;
  }
  return `${relative(root, file)}:${line0 + 1}`;
}

/** The newest .cpuprofile in `dir` (V8 names them CPU.<date>.<pid>…). */
export function latestProfile(dir: string): string {
  const files = readdirSync(dir)
    .filter((f) => f.endsWith('.cpuprofile'))
    .sort();
  if (files.length === 0) throw new Error(`no .cpuprofile written in ${dir}`);
  return join(dir, files.at(-1)!);
}

/** A markdown table of the top `n` functions by self time. */
export function selfTimeTable(rows: SelfTime[], n = 20): string {
  const lines = rows
    .slice(0, n)
    .map((r) => `| ${r.fn} | ${r.where || '-'} | ${r.ms.toFixed(0)} | ${(r.share * 100).toFixed(1)}% |`);
  return ['| function | where | self ms | share |', '|---|---|---:|---:|', ...lines].join('\n');
}
