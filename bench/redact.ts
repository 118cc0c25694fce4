/**
 * `npm run bench:redact` (issue 10, item 4): redaction's recall and false positives on the corpus
 * (bench/redact-corpus.ts), and the writer's throughput on a realistic event mix with redaction on (the
 * built-in patterns) and off (`redact: { disabled: true }`), so the cost of redaction is the difference.
 * Writes the figures to docs/benchmarks.md between `<!-- bench:redact:start -->` and `…:end -->`.
 */
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { cpus, tmpdir } from 'node:os';
import { join } from 'node:path';
import { BUILTIN_PATTERNS, redactText } from '../lib/log/redact/redact.js';
import { GITLEAKS_PATTERNS } from '../lib/log/redact/redact-gitleaks.js';
import { openSession } from '../lib/log/write/writer.js';
import { measureCorpus } from './redact-corpus.js';

let seed = 42;
const rnd = (n: number) => {
  seed = (seed * 1103515245 + 12345) % 2147483648;
  return (seed >>> 8) % n;
};
const B62 = 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789';
const rs = (n: number, abc = B62) => Array.from({ length: n }, () => abc[rnd(abc.length)]).join('');
const CODE = readFileSync(join(import.meta.dirname, '..', 'lib', 'log', 'read', 'merge.ts'), 'utf8');

/** The mix: prompts and answers (prose), tool inputs (commands, JSON), outputs (code, logs, JSON,
 * a base64 image now and then), and about 1 event in 50 holding a credential. */
function mix(n: number) {
  const out: { kind: 'message' | 'action' | 'result' | 'output'; body: unknown }[] = [];
  for (let i = 0; i < n; i++) {
    const r = rnd(100);
    const at = rnd(CODE.length - 4000);
    if (r < 15)
      out.push({
        kind: 'message',
        body: `Please fix the failing test in lib/${rs(8)}.ts and keep the API the same (${i})`,
      });
    else if (r < 35)
      out.push({
        kind: 'action',
        body: { command: `npx vitest run test/${rs(6)}.test.ts`, description: 'run tests' },
      });
    else if (r < 60) out.push({ kind: 'result', body: CODE.slice(at, at + 200 + rnd(3800)) });
    else if (r < 72)
      out.push({
        kind: 'result',
        body: {
          stdout: `commit ${rs(40, '0123456789abcdef')}\nAuthor: dev\n\n    fix ${i}\n`.repeat(1 + rnd(20)),
          exitCode: 0,
        },
      });
    else if (r < 74) out.push({ kind: 'result', body: `data:image/png;base64,${rs(20_000, `${B62}+/`)}` });
    else if (r < 76)
      out.push({ kind: 'result', body: `OPENAI_API_KEY=sk-proj-${rs(80)}\nDB_PASSWORD=${rs(20)}\n` });
    else
      out.push({
        kind: 'output',
        body: `I changed the ${rs(6)} handler so the token count and key order are kept; tests pass (${i}).`.repeat(
          1 + rnd(6),
        ),
      });
  }
  return out;
}

function run(events: ReturnType<typeof mix>, disabled: boolean): { ms: number; bytes: number } {
  const dir = mkdtempSync(join(tmpdir(), 'hansard-bench-redact-'));
  try {
    const w = openSession(dir, {}, { redact: { disabled } });
    const turn = w.turnStart().id;
    let bytes = 0;
    const t0 = performance.now();
    for (const e of events) {
      const size = typeof e.body === 'string' ? e.body.length : JSON.stringify(e.body).length;
      bytes += size;
      if (e.kind === 'message') w.message({ user_id: 'u', text: e.body as string });
      else if (e.kind === 'action') w.action({ turn_id: turn, tool: 'Bash', input: e.body });
      else if (e.kind === 'result') w.actionResult({ action_id: turn, status: 'ok', output: e.body });
      else w.output({ turn_id: turn, text: e.body as string });
    }
    const ms = performance.now() - t0;
    w.end();
    return { ms, bytes };
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

const N = Number(process.env.BENCH_REDACT_EVENTS ?? 20_000);
const events = mix(N);
run(events.slice(0, 2000), false); // warm-up
const best = (disabled: boolean) =>
  [0, 1, 2].map(() => run(events, disabled)).sort((a, b) => a.ms - b.ms)[0]!;
const off = best(true);
const on = best(false);
const c = measureCorpus();
// The hostile text of test/log/redact-rules.test.ts: every keyword followed by runs of word characters.
const keywords = [...new Set(BUILTIN_PATTERNS.flatMap((p) => p.keywords ?? []))];
const hostile = keywords
  .map((k) => `${k}${'a'.repeat(300)}`)
  .join(' ')
  .repeat(20)
  .slice(0, 1 << 20);
const hostileMs = Math.min(
  ...[0, 1, 2].map(() => {
    const t0 = performance.now();
    redactText(hostile);
    return performance.now() - t0;
  }),
);
const eps = (r: { ms: number }) => Math.round((N / r.ms) * 1000).toLocaleString('en-US');
const mbs = (r: { ms: number; bytes: number }) => (r.bytes / 1e6 / (r.ms / 1000)).toFixed(1);
const pct = (x: number) => `${(x * 100).toFixed(1)}%`;

const section = `<!-- bench:redact:start -->
## Redaction (issue 10, item 4)

\`npm run bench:redact\` on ${new Date().toISOString().slice(0, 10)}, ${cpus()[0]?.model ?? 'unknown CPU'} (${cpus().length} cores), Node ${process.version}.

Corpus (test/fixtures/redaction, written by gen.ts and gen-more.ts there; all credentials fake): a line counts as found when redaction changes it. The shapes were written by us from the vendors' formats, gitleaks' rules and the forms people paste them in (env files, YAML, Python/JS/Go settings, connection strings, command lines, headers; issue 25 item 8), so recall on kinds outside the corpus may well be lower; the look-alikes include ids under key-like labels (\`Idempotency-Key\`, \`publicKey\`, \`sortKey\`, \`key: <path>\`) and variables, placeholders and references under credential labels (\`password = os.getenv(…)\`, \`password: \${{ secrets.X }}\`, \`PASSWORD=\`, \`ghp_xxxx…\`).

| | lines | kinds | flagged | rate |
|---|---:|---:|---:|---:|
| true secrets | ${c.secrets} | ${c.secretKinds} | ${c.secrets - c.missed.length} | recall ${c.recall.toFixed(3)} (goal ≥ 0.98) |
| look-alikes (hashes, ULIDs, UUIDs, base64 images, integrity, digests…) | ${c.lookalikes} | ${c.lookalikeKinds} | ${c.falsePositives.length} | false positives ${pct(c.falsePositives.length / c.lookalikes)} (goal ≤ 1%) |

Writer throughput, ${N.toLocaleString('en-US')} events of a realistic mix (prompts, commands, code and git-log output up to 4 KB, a 20 KB base64 image in 2%, a credential in 2%), ${(on.bytes / 1e6).toFixed(1)} MB of free text, best of 3:

| redaction | events/s | MB/s of free text | ms |
|---|---:|---:|---:|
| off (\`redact: { disabled: true }\`) | ${eps(off)} | ${mbs(off)} | ${off.ms.toFixed(0)} |
| on (built-in: ${BUILTIN_PATTERNS.length} patterns: ours, ${GITLEAKS_PATTERNS.length} gitleaks rules, the forms people paste, keyword assignment) | ${eps(on)} | ${mbs(on)} | ${on.ms.toFixed(0)} |

Redaction on costs ${(on.ms / off.ms).toFixed(2)}× the writer's time with it off in this run (the machine is shared: compare the two rows of one run, not runs). Hostile text: 1 MiB of every keyword (${keywords.length}) followed by runs of word characters takes ${(hostileMs / 1000).toFixed(2)} s, best of 3 (test/log/redact-rules.test.ts asserts < 3 s; 53 s before the converter dropped gitleaks' nested leading \`[\\w.-]{0,50}?\`).
<!-- bench:redact:end -->`;

const doc = 'docs/benchmarks.md';
const before = readFileSync(doc, 'utf8');
const next = before.includes('<!-- bench:redact:start -->')
  ? before.replace(/<!-- bench:redact:start -->[\s\S]*<!-- bench:redact:end -->/, section)
  : `${before.trimEnd()}\n\n${section}\n`;
writeFileSync(doc, next);
console.log(section);
if (c.missed.length > 0) console.log(`missed:\n${c.missed.join('\n')}`);
if (c.falsePositives.length > 0) console.log(`false positives:\n${c.falsePositives.join('\n')}`);
