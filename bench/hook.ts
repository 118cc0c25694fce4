/**
 * `npm run bench:hook` (issue 11): the wall time of one `hansard hook claude-code` invocation, as a ratio
 * to `node -e 0` measured in the same run (the machine is shared: absolute times move, ratios less), p50
 * and p95 over 200 invocations each, interleaved round by round so that every kind sees the same load:
 *
 * - `node -e 0`: the floor, a Node process that does nothing;
 * - load only: `hansard hook claude-code` with empty stdin (bundle load, parse, a bad_input record);
 * - hook: PreToolUse / PostToolUse pairs on one session, no server configured (spool only);
 * - hook + shipper: the same with a server configured (a dead port), so each hook also starts the
 *   detached shipper (unless one runs).
 *
 * The CLI is built from the current source into .test-results/ (not dist/). Writes the figures to
 * docs/benchmarks.md between `<!-- bench:hook:start -->` and `<!-- bench:hook:end -->`.
 */
import { execFileSync, spawnSync } from 'node:child_process';
import { copyFileSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { cpus, tmpdir } from 'node:os';
import { join } from 'node:path';

const ROOT = join(import.meta.dirname, '..');
const N = Number(process.env.BENCH_HOOK_N ?? 200);
const APP = join(ROOT, '.test-results', `bench-hook-${process.pid}`);
execFileSync(process.execPath, [join(ROOT, 'scripts/build.mjs')], {
  env: { ...process.env, HANSARD_BUILD_OUTDIR: join(APP, 'dist') },
  stdio: 'inherit',
});
mkdirSync(join(APP, 'bin'), { recursive: true });
copyFileSync(join(ROOT, 'bin/hansard'), join(APP, 'bin/hansard'));
copyFileSync(join(ROOT, 'package.json'), join(APP, 'package.json'));
const BIN = join(APP, 'bin/hansard');
const tmp = mkdtempSync(join(tmpdir(), 'hansard-bench-hook-'));

const fixture = (f: string) =>
  JSON.parse(readFileSync(join(ROOT, 'test/fixtures/real-client', f), 'utf8')) as Record<string, unknown>;
const pre = fixture('03-PreToolUse.hello-from-tool.json');
const post = fixture('06-PostToolUse.hello-from-tool.json');
const cleanEnv: NodeJS.ProcessEnv = {};
for (const [k, v] of Object.entries(process.env)) if (!k.startsWith('HANSARD_')) cleanEnv[k] = v;

/** Wall time in ms of one process run to its end. */
function time(args: string[], input: string, env: NodeJS.ProcessEnv): number {
  const t = performance.now();
  const r = spawnSync(process.execPath, args, { input, env, stdio: ['pipe', 'ignore', 'pipe'] });
  const ms = performance.now() - t;
  if (r.status !== 0) throw new Error(`${args.join(' ')} exited ${r.status}: ${r.stderr}`);
  return ms;
}

const kinds = {
  node: { label: '`node -e 0`', ms: [] as number[] },
  load: { label: 'load only (empty stdin: bundle load, a bad_input record)', ms: [] as number[] },
  hook: { label: 'hook: PreToolUse/PostToolUse, no server configured (spool only)', ms: [] as number[] },
  ship: { label: 'hook + detached shipper start (server configured)', ms: [] as number[] },
};
const stateA = join(tmp, 'a');
const stateB = join(tmp, 'b');
const stateL = join(tmp, 'l');
const shipEnv = { ...cleanEnv, HANSARD_STATE_DIR: stateB, HANSARD_URL: 'http://127.0.0.1:9', HANSARD_TOKEN: 'hns_bench' };
// Warm the file cache once.
time(['-e', '0'], '', cleanEnv);
time([BIN, 'hook', 'claude-code'], '', { ...cleanEnv, HANSARD_STATE_DIR: stateL });
for (let i = 0; i < N; i++) {
  const p = JSON.stringify({ ...(i % 2 === 0 ? pre : post), tool_use_id: `toolu_${i >> 1}` });
  kinds.node.ms.push(time(['-e', '0'], '', cleanEnv));
  kinds.load.ms.push(time([BIN, 'hook', 'claude-code'], '', { ...cleanEnv, HANSARD_STATE_DIR: stateL }));
  kinds.hook.ms.push(time([BIN, 'hook', 'claude-code'], p, { ...cleanEnv, HANSARD_STATE_DIR: stateA }));
  kinds.ship.ms.push(time([BIN, 'hook', 'claude-code'], p, shipEnv));
}

const pct = (xs: number[], p: number) => {
  const s = [...xs].sort((a, b) => a - b);
  return s[Math.min(s.length - 1, Math.ceil((p / 100) * s.length) - 1)]!;
};
const node50 = pct(kinds.node.ms, 50);
const node95 = pct(kinds.node.ms, 95);
const rows = Object.values(kinds).map((k) => {
  const p50 = pct(k.ms, 50);
  const p95 = pct(k.ms, 95);
  return `| ${k.label} | ${p50.toFixed(1)} | ${p95.toFixed(1)} | ${(p50 / node50).toFixed(2)}× | ${(p95 / node95).toFixed(2)}× |`;
});
const bundle = (() => {
  const out = execFileSync('du', ['-sk', join(APP, 'dist/hook.js'), join(APP, 'dist/hook-chunks')], {
    encoding: 'utf8',
  });
  return out;
})();
console.log(rows.join('\n'));
console.log(bundle);

const section = `<!-- bench:hook:start -->
## Capture hook wall time (issue 11)

\`npm run bench:hook\` on ${new Date().toISOString().slice(0, 10)}, ${cpus()[0]?.model.trim() ?? 'unknown CPU'} (${cpus().length} cores), Node ${process.version}: ${N} invocations of each kind, interleaved; the ratio is to \`node -e 0\` of the same run (p50 to p50, p95 to p95). Goal: p95 of the hook ≤ 1.5×.

| kind | p50 ms | p95 ms | p50 ratio | p95 ratio |
|---|---:|---:|---:|---:|
${rows.join('\n')}

What dominates: starting Node itself (the \`node -e 0\` row), then loading the hook bundle (the "load only" row less \`node -e 0\`: dist/hook.js and its chunk, about 0.5 MB minified, most of it zod and the redaction rules the writer compiles); the hook's own work (the lock, reading the state, reopening the segment, redacting and writing two or three lines, saving the state) is the difference between the "hook" and "load only" rows, and starting the detached shipper the difference between the last two.
<!-- bench:hook:end -->`;
const doc = join(ROOT, 'docs', 'benchmarks.md');
const before = readFileSync(doc, 'utf8');
const next = before.includes('<!-- bench:hook:start -->')
  ? before.replace(/<!-- bench:hook:start -->[\s\S]*<!-- bench:hook:end -->/, section)
  : `${before.trimEnd()}\n\n${section}\n`;
writeFileSync(doc, next);
rmSync(tmp, { recursive: true, force: true });
rmSync(APP, { recursive: true, force: true });
