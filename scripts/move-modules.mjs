#!/usr/bin/env node
// Moves modules and rewrites every reference to them, as one commit that holds the move and nothing else
// (issue 26: "moves in their own commits, no behaviour change in them").
//
//   node scripts/move-modules.mjs -m "commit message" old/path.ts=new/path.ts [old2=new2 …]
//   node scripts/move-modules.mjs -m "…" --dir lib/harness=lib/importers      (every file under a folder)
//   add --dry-run to print what would change without touching anything.
//
// What it rewrites, in every .ts/.tsx/.mts/.mjs/.cjs/.js file of lib, test, bench, harness, scripts, functions, infra
// and docs/examples (and in the moved files themselves):
//   - relative string literals ('./x.js', '../log/y.ts') that resolve to a moved file: import, export,
//     import(), vi.mock(), new URL(…, import.meta.url);
// and, in those files plus docs/*.md, README.md, package.json and the stryker configs:
//   - repository paths written out (`lib/log/evidence.ts`, `lib/harness/`), with or without extension.
// Both the working tree and the index get the same rewrite, so the commit holds the move alone even when
// other people have uncommitted edits in the same files (their edits stay in the working tree).
import { execFileSync } from 'node:child_process';
import {
  existsSync,
  mkdirSync,
  readdirSync,
  readFileSync,
  renameSync,
  statSync,
  writeFileSync,
} from 'node:fs';
import { dirname, join, posix, relative } from 'node:path';

const ROOT = execFileSync('git', ['rev-parse', '--show-toplevel'], { encoding: 'utf8' }).trim();
const git = (...args) => execFileSync('git', args, { cwd: ROOT, encoding: 'utf8' });

const argv = process.argv.slice(2);
let message = null;
let dry = false;
const pairs = [];
for (let i = 0; i < argv.length; i++) {
  const a = argv[i];
  if (a === '-m') message = argv[++i];
  else if (a === '--dry-run') dry = true;
  else if (a === '--dir') {
    const [from, to] = argv[++i].replace(/\/+$/, '').split('=');
    const files = git('ls-files', '--', from).split('\n').filter(Boolean);
    for (const f of files) pairs.push([f, to + f.slice(from.length)]);
  } else if (a.includes('=')) pairs.push(a.split('='));
  else {
    console.error(`move-modules: not a move "${a}" (old=new)`);
    process.exit(2);
  }
}
if (!message || pairs.length === 0) {
  console.error(
    'usage: node scripts/move-modules.mjs -m "message" old=new [--dir oldDir=newDir] [--dry-run]',
  );
  process.exit(2);
}
const moves = new Map(pairs.map(([a, b]) => [posix.normalize(a), posix.normalize(b)]));
for (const [from, to] of moves) {
  if (!existsSync(join(ROOT, from))) throw new Error(`move-modules: ${from} does not exist`);
  if (existsSync(join(ROOT, to))) throw new Error(`move-modules: ${to} exists already`);
}

const CODE = /\.(ts|tsx|mts|mjs|cjs|js)$/;
const SCANNED = ['lib', 'test', 'bench', 'harness', 'scripts', 'functions', 'infra', 'docs/examples'];
const TEXT_EXTRA = ['README.md', 'package.json', 'stryker.config.json', 'vitest.config.ts', 'biome.json'];

function walk(dir, out) {
  const abs = join(ROOT, dir);
  if (!existsSync(abs)) return out;
  for (const e of readdirSync(abs, { withFileTypes: true })) {
    if (e.name === 'node_modules' || e.name.startsWith('.') || e.name === 'fixtures') continue;
    const p = `${dir}/${e.name}`;
    if (e.isDirectory()) walk(p, out);
    else out.push(p);
  }
  return out;
}
const codeFiles = SCANNED.flatMap((d) => walk(d, [])).filter(
  (f) => CODE.test(f) && f !== 'scripts/move-modules.mjs',
);
const docFiles = [
  ...walk('docs', []).filter((f) => f.endsWith('.md')),
  ...TEXT_EXTRA.filter((f) => existsSync(join(ROOT, f))),
];

/** The repository file a relative specifier written in `file` names, or null. */
function resolveSpec(file, spec) {
  const base = posix.normalize(posix.join(posix.dirname(file), spec));
  const stems = [base];
  const m = /\.(js|mjs|cjs|jsx)$/.exec(base);
  if (m) stems.push(base.slice(0, -m[0].length));
  const candidates = [base];
  for (const s of stems) for (const ext of ['.ts', '.tsx', '.mts', '.mjs', '.js']) candidates.push(s + ext);
  candidates.push(`${base}/index.ts`);
  for (const c of candidates) if (moves.has(c) || existsSync(join(ROOT, c))) return c;
  return null;
}

/** The specifier to write in `file` (at its new place) for the repository file `target`, keeping `spec`'s form. */
function specFor(file, target, spec) {
  let rel = posix.relative(posix.dirname(file), target);
  if (!rel.startsWith('.')) rel = `./${rel}`;
  const ext = /\.[a-z]+$/.exec(spec)?.[0];
  const tExt = /\.[a-z]+$/.exec(target)?.[0];
  if (spec.endsWith('/index.js') || spec.endsWith('/index.ts')) return rel.replace(/\.tsx?$/, ext);
  if (!ext) return rel.replace(/\.(tsx?|mts|mjs|js)$/, '');
  if (ext === tExt) return rel;
  // './x.js' written for x.ts stays a .js specifier
  return rel.replace(/\.(tsx?|mts)$/, ext);
}

const LITERAL = /(['"`])(\.{1,2}\/[^'"`\n]*)\1/g;
const pathPatterns = [...moves].map(([from, to]) => {
  const stem = from.replace(/\.(tsx?|mts|mjs|js)$/, '');
  const toStem = to.replace(/\.(tsx?|mts|mjs|js)$/, '');
  const esc = stem.replace(/[.*+?^${}()|[\]\\/]/g, '\\$&');
  // lib/log/evidence, lib/log/evidence.ts, lib/log/evidence.js: not lib/log/evidence-match
  return { re: new RegExp(`(?<![\\w./-])${esc}(\\.(?:tsx?|mts|mjs|js))?(?![\\w-])`, 'g'), toStem, to };
});

/** The rewritten text of `file` (whose place after the move is `at`), given its text before. */
function rewrite(file, at, text) {
  let out = text;
  if (CODE.test(file)) {
    out = out.replace(LITERAL, (whole, q, spec) => {
      const target = resolveSpec(file, spec);
      if (target === null) return whole;
      const newTarget = moves.get(target) ?? target;
      if (newTarget === target && at === file) return whole;
      return `${q}${specFor(at, newTarget, spec)}${q}`;
    });
  }
  for (const p of pathPatterns) out = out.replace(p.re, (_w, ext) => (ext ? p.toStem + ext : p.toStem));
  return out;
}

const tracked = new Set(git('ls-files').split('\n').filter(Boolean));
const changed = [];
for (const file of [...new Set([...codeFiles, ...docFiles])]) {
  const at = moves.get(file) ?? file;
  const disk = readFileSync(join(ROOT, file), 'utf8');
  const next = rewrite(file, at, disk);
  let indexNext = null;
  if (tracked.has(file)) {
    let indexText;
    try {
      indexText = git('show', `:${file}`);
    } catch {
      indexText = null;
    }
    if (indexText !== null) {
      const r = rewrite(file, at, indexText);
      if (r !== indexText) indexNext = r;
    }
  }
  if (next !== disk || indexNext !== null || at !== file) changed.push({ file, at, disk, next, indexNext });
}

for (const c of changed) {
  const verb = c.at !== c.file ? `move ${c.file} -> ${c.at}` : `edit ${c.file}`;
  console.log(`${verb}${c.next !== c.disk ? '' : ' (no text change)'}`);
  if (dry && process.env.MOVE_DIFF) {
    const a = c.disk.split('\n');
    const b = c.next.split('\n');
    for (let i = 0; i < Math.max(a.length, b.length); i++)
      if (a[i] !== b[i]) console.log(`  - ${a[i]}\n  + ${b[i]}`);
  }
}
if (dry) process.exit(0);

for (const c of changed) {
  if (c.at !== c.file) {
    mkdirSync(join(ROOT, dirname(c.at)), { recursive: true });
    if (tracked.has(c.file)) git('mv', c.file, c.at);
    else renameSync(join(ROOT, c.file), join(ROOT, c.at));
  }
  if (c.next !== c.disk) writeFileSync(join(ROOT, c.at), c.next);
  if (c.indexNext !== null) {
    const sha = execFileSync('git', ['hash-object', '-w', '--stdin'], {
      cwd: ROOT,
      input: c.indexNext,
      encoding: 'utf8',
    }).trim();
    const mode = (statSync(join(ROOT, c.at)).mode & 0o111) !== 0 ? '100755' : '100644';
    git('update-index', '--cacheinfo', `${mode},${sha},${c.at}`);
  }
}
// Empty folders left behind are not tracked by git; remove them from the working tree.
for (const from of moves.keys()) {
  let d = dirname(join(ROOT, from));
  while (d.startsWith(join(ROOT, 'lib')) || d.startsWith(join(ROOT, 'test'))) {
    try {
      if (readdirSync(d).length > 0) break;
      execFileSync('rmdir', [d]);
    } catch {
      break;
    }
    d = dirname(d);
  }
}
git('commit', '-q', '-m', message);
console.log(git('log', '--oneline', '-1').trim());
console.log(
  `moved ${moves.size} file(s), rewrote references in ${changed.filter((c) => c.next !== c.disk).length}`,
);
void relative;
