/**
 * `npm run bench:hook` (issue 11): the wall time of one `hansard hook claude-code` invocation, as a ratio
 * to `node -e 0` measured in the same run (the machine is shared: absolute times move, ratios less), p50
 * and p95 over 200 invocations each, interleaved round by round so that every kind sees the same load:
 *
 * - `node -e 0`: the floor, a Node process that does nothing;
 * - load only: `hansard hook claude-code` with empty stdin (bundle load, parse, a bad_input record);
 * - hook: PreToolUse / PostToolUse pairs on one session, no server configured (spool only);
 * - hook + shipper: the same with a server configured (a dead port), so each hook also starts the
 *   detached shipper (unless one runs);
 * - the hook row again from a build without the watchdog (scripts/build.mjs with
 *   HANSARD_BUILD_NO_WATCHDOG, issue 25 item 1), run beside it in alternating order: the difference of
 *   the two p50s is what the watchdog (its supervisor process) costs.
 *
 * Then the offline figure: 1,000 hook invocations with the server down, then a real server up
 * (harness/serve-process.ts) and the shipper: every spooled event in its replay, once.
 *
 * The CLI is built from the current source into .test-results/ (not dist/). Writes the figures to
 * docs/benchmarks.md between `<!-- bench:hook:start -->` and `<!-- bench:hook:end -->`.
 */
import { execFileSync, spawn, spawnSync } from 'node:child_process';
import {
  copyFileSync,
  mkdirSync,
  mkdtempSync,
  readdirSync,
  readFileSync,
  rmSync,
  statSync,
  writeFileSync,
} from 'node:fs';
import { cpus, tmpdir } from 'node:os';
import { join } from 'node:path';
import { startServeProcess } from '../harness/serve-process.js';
import { configPath, spoolBacklog, writeJsonAtomic } from '../lib/client/capture/state-dir.js';

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
// The same source without the hook's watchdog, to measure what it costs.
const BARE_APP = `${APP}-no-watchdog`;
execFileSync(process.execPath, [join(ROOT, 'scripts/build.mjs')], {
  env: { ...process.env, HANSARD_BUILD_OUTDIR: join(BARE_APP, 'dist'), HANSARD_BUILD_NO_WATCHDOG: '1' },
  stdio: 'inherit',
});
mkdirSync(join(BARE_APP, 'bin'), { recursive: true });
copyFileSync(join(ROOT, 'bin/hansard'), join(BARE_APP, 'bin/hansard'));
copyFileSync(join(ROOT, 'package.json'), join(BARE_APP, 'package.json'));
const BARE_BIN = join(BARE_APP, 'bin/hansard');
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
  bare: {
    label: 'the same hook, built without the watchdog (HANSARD_BUILD_NO_WATCHDOG)',
    ms: [] as number[],
  },
  ship: { label: 'hook + detached shipper start (server configured)', ms: [] as number[] },
};
const stateA = join(tmp, 'a');
const stateB = join(tmp, 'b');
const stateL = join(tmp, 'l');
const stateN = join(tmp, 'n');
const shipEnv = {
  ...cleanEnv,
  HANSARD_STATE_DIR: stateB,
  HANSARD_URL: 'http://127.0.0.1:9',
  HANSARD_TOKEN: 'hns_bench',
};
// Warm the file cache once.
time(['-e', '0'], '', cleanEnv);
time([BIN, 'hook', 'claude-code'], '', { ...cleanEnv, HANSARD_STATE_DIR: stateL });
time([BARE_BIN, 'hook', 'claude-code'], '', { ...cleanEnv, HANSARD_STATE_DIR: stateN });
for (let i = 0; i < N; i++) {
  const p = JSON.stringify({ ...(i % 2 === 0 ? pre : post), tool_use_id: `toolu_${i >> 1}` });
  kinds.node.ms.push(time(['-e', '0'], '', cleanEnv));
  kinds.load.ms.push(time([BIN, 'hook', 'claude-code'], '', { ...cleanEnv, HANSARD_STATE_DIR: stateL }));
  // With and without the watchdog, one after the other, in turn first.
  const withIt = () =>
    kinds.hook.ms.push(time([BIN, 'hook', 'claude-code'], p, { ...cleanEnv, HANSARD_STATE_DIR: stateA }));
  const without = () =>
    kinds.bare.ms.push(
      time([BARE_BIN, 'hook', 'claude-code'], p, { ...cleanEnv, HANSARD_STATE_DIR: stateN }),
    );
  if (i % 2 === 0) {
    withIt();
    without();
  } else {
    without();
    withIt();
  }
  kinds.ship.ms.push(time([BIN, 'hook', 'claude-code'], p, shipEnv));
}

// Offline: OFFLINE hook invocations with the server down (a dead port in config.json), then a real server
// up and the shipper run: every spooled event must be in the server's replay, exactly once.
const OFFLINE = Number(process.env.BENCH_HOOK_OFFLINE ?? 1000);
const stateO = join(tmp, 'offline');
writeJsonAtomic(configPath(stateO), { url: 'http://127.0.0.1:9', token: 'hns_down' });
const offlineEnv = { ...cleanEnv, HANSARD_STATE_DIR: stateO };
const payloads = [fixture('01-SessionStart.json'), fixture('02-UserPromptSubmit.json')];
// Two calls at a time, as parallel tool calls run: both PreToolUse, then both PostToolUse.
for (let j = 0; payloads.length < OFFLINE; j += 2) {
  const call = (p: Record<string, unknown>, n: number) => ({
    ...p,
    tool_use_id: `toolu_off_${n}`,
    tool_input: { command: `echo ${n}` },
  });
  payloads.push(call(pre, j), call(pre, j + 1), call(post, j), call(post, j + 1));
}
payloads.length = OFFLINE;
const offlineStarted = performance.now();
for (let i = 0; i < payloads.length; i += 2) {
  await Promise.all(
    payloads.slice(i, i + 2).map(
      (p, k) =>
        new Promise<void>((done, fail) => {
          setTimeout(() => {
            const c = spawn(process.execPath, [BIN, 'hook', 'claude-code'], {
              env: offlineEnv,
              stdio: ['pipe', 'ignore', 'ignore'],
            });
            c.stdin.end(JSON.stringify(p));
            c.on('close', (code) => (code === 0 ? done() : fail(new Error(`hook exited ${code}`))));
          }, k * 40);
        }),
    ),
  );
}
const offlineSecs = (performance.now() - offlineStarted) / 1000;
const spooled = spoolBacklog(stateO).reduce((n, b) => n + b.events, 0);
const server = await startServeProcess();
let onServer = 0;
let distinct = 0;
try {
  writeJsonAtomic(configPath(stateO), { url: server.url, token: server.admin });
  for (let i = 0; i < 5 && spoolBacklog(stateO).length > 0; i++) {
    spawnSync(process.execPath, [BIN, 'hook', 'ship'], { env: offlineEnv, stdio: 'ignore' });
  }
  for (const b of readdirSync(join(stateO, 'spool'))) {
    const res = await fetch(`${server.url}/v1/sessions/${b}/replay?format=ndjson`, {
      headers: { authorization: `Bearer ${server.admin}` },
    });
    const ids = (await res.text())
      .split('\n')
      .filter(Boolean)
      .map((l) => (JSON.parse(l) as { id: string }).id);
    onServer += ids.length;
    distinct += new Set(ids).size;
  }
} finally {
  await server.close();
}
const offlineLine = `Offline: ${payloads.length} hook invocations (one session: SessionStart, a prompt, then two parallel tool calls at a time, PreToolUse then PostToolUse) with the server down took ${offlineSecs.toFixed(0)} s and spooled ${spooled} events; with the server up, \`hansard hook ship\` put ${onServer} events in its replay, ${distinct} distinct (${onServer === spooled && distinct === onServer ? 'all of them, each once' : 'MISMATCH'}).`;
console.log(offlineLine);

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
const bundleKb = Math.round(statSync(join(APP, 'dist/hook-bundle.cjs')).size / 1024);
console.log(rows.join('\n'));
const watchdogMs = pct(kinds.hook.ms, 50) - pct(kinds.bare.ms, 50);
const watchdogRatio = pct(kinds.hook.ms, 50) / pct(kinds.bare.ms, 50);
const watchdogLine = `The watchdog (issue 25 item 1, attack items 14 and 15: a supervisor process started before the hook loads, \`/bin/sh\` with \`cat\` reading the hook's notes and a killer sleeping to the hard deadline) costs ${watchdogMs.toFixed(1)} ms at p50 here: the hook's p50 is ${watchdogRatio.toFixed(3)}× the same hook's built without it (the "hook" row to the row built without it, run side by side in alternating order, in the same run), ${Math.abs(watchdogMs) < 0.02 * pct(kinds.bare.ms, 50) ? 'within the noise of this shared machine' : 'more than 2%'}: spawning \`sh\` through libuv's process handle, not child_process (lib/client/capture/hook-supervisor-spawn.ts, about 1.5 ms), and its own forks of \`cat\` and \`sleep\`, which run beside the hook on the same two cores. A worker thread as the watchdog, measured while it was built (60 hooks interleaved with the same build without it, CPU time from getrusage), cost 42 ms of CPU per hook, +27% CPU and +21% to +45% wall at p50 in two runs: a V8 isolate and Node's bootstrap (about 30 ms of CPU per worker in a warm process).`;
console.log(watchdogLine);

const section = `<!-- bench:hook:start -->
## Capture hook wall time (issue 11)

\`npm run bench:hook\` on ${new Date().toISOString().slice(0, 10)}, ${cpus()[0]?.model.trim() ?? 'unknown CPU'} (${cpus().length} cores), Node ${process.version}: ${N} invocations of each kind, interleaved; the ratio is to \`node -e 0\` of the same run (p50 to p50, p95 to p95). Goal: p95 of the hook ≤ 1.5×.

| kind | p50 ms | p95 ms | p50 ratio | p95 ratio |
|---|---:|---:|---:|---:|
${rows.join('\n')}

${watchdogLine}

What dominates: starting Node itself (the \`node -e 0\` row). Then loading the hook (the "load only" row less \`node -e 0\`): \`bin/hansard\` is an ES module, \`dist/hook.cjs\` runs \`dist/hook-bundle.cjs\` (${bundleKb} KiB minified, about four fifths of it zod, then the redaction rules) through V8's code cache in \`<state>/cache/\`, so it is not compiled again, but its modules still initialise and Node loads the builtins it needs (crypto for ids, fs, path, os). The hook's own work (the lock, reading the state, reopening the segment, redacting and writing its lines, saving the state) is the difference between the "hook" and "load only" rows; starting the detached shipper (loading child_process, a fork) the difference between the last two. A CPU profile of one PreToolUse hook (68 ms in all under the profiler) gave about 16 ms to the hook's run, 12 ms to loading Node builtins, 5 ms to the bundle's module initialisation and 5 ms to reading the cached code.

The machine is shared (2 cores, other engineers' test runs): the p95s carry their load spikes, \`node -e 0\`'s as much as the hook's, so the p50 ratio is the steadier figure. Earlier in the work, before the V8 code cache and the lazy child_process, a CPU-time comparison (30 runs, p50) gave the hook 165 ms against 70 ms for \`node -e 0\` (2.4×); after, 143 ms against 83 ms (1.7×).

${offlineLine}
<!-- bench:hook:end -->`;
const doc = join(ROOT, 'docs', 'benchmarks.md');
const before = readFileSync(doc, 'utf8');
const next = before.includes('<!-- bench:hook:start -->')
  ? before.replace(/<!-- bench:hook:start -->[\s\S]*<!-- bench:hook:end -->/, section)
  : `${before.trimEnd()}\n\n${section}\n`;
writeFileSync(doc, next);
// The detached shippers the hooks started may still be writing to their state directories.
await new Promise((r) => setTimeout(r, 2000));
rmSync(tmp, { recursive: true, force: true });
rmSync(APP, { recursive: true, force: true });
rmSync(BARE_APP, { recursive: true, force: true });
