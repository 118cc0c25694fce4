/**
 * The import graph of the whole tree (lib/, functions/, infra/, harness/, bench/, scripts/, test/) and the
 * rules it must keep (DESIGN §2, issue 9.4, issue 26.4).
 *
 * Imports are read from the source text, so that type-only imports count too (esbuild drops them; a
 * folder loop through types is still a loop): static `import … from` / `export … from` statements
 * (biome puts them at the start of a line), side-effect imports, and `import('…')` outside comments and
 * outside the strings of a line (a test's sample source, an expected text).
 * import-graph.test.ts checks this reading against esbuild's, which sees every import that is not
 * type-only.
 */
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { dirname, join, relative, resolve } from 'node:path';

/** The folders whose modules are checked, relative to the repository root. */
export const SCANNED = ['lib', 'functions', 'infra', 'harness', 'bench', 'scripts', 'test'];

/** One import: `from` and `to` are repository paths (`lib/store/ports.ts`) or a package name. */
export interface Edge {
  from: string;
  /** a repository path, or the package specifier as written (`@aws-sdk/client-s3`) */
  to: string;
  line: number;
  /** whether `to` is a package rather than a file of ours */
  pkg: boolean;
}

/** Every .ts/.tsx/.mjs file under the scanned folders, as repository paths, sorted. */
export function sourceFiles(root: string): string[] {
  const out: string[] = [];
  const walk = (dir: string) => {
    for (const e of readdirSync(join(root, dir), { withFileTypes: true })) {
      const path = `${dir}/${e.name}`;
      // dot folders hold what a run built (bench/.build), not source
      if (e.isDirectory()) {
        if (!e.name.startsWith('.') && e.name !== 'node_modules') walk(path);
      } else if (/\.(tsx?|mjs)$/.test(e.name) && !e.name.endsWith('.d.ts')) out.push(path);
    }
  };
  for (const d of SCANNED) walk(d);
  return out.sort();
}

const STATIC =
  /^(?:import|export)(?:\s+type)?\s+(?:[\w$]+\s*,?\s*)?(?:\{[^}]*\}|\*(?:\s+as\s+[\w$]+)?)?\s*from\s*['"]([^'"]+)['"]/gm;
const SIDE_EFFECT = /^import\s*['"]([^'"]+)['"]/gm;
const DYNAMIC = /\bimport\(\s*(['"`])([^'"`$]+)\1\s*\)/g;

/** Whether `index` of `line` is inside a string literal that starts on that line ('…', "…" or `…`). */
function inString(line: string, index: number): boolean {
  let quote: string | null = null;
  for (let i = 0; i < index; i++) {
    const ch = line[i]!;
    if (quote !== null && ch === '\\') i++;
    else if (quote === null && (ch === "'" || ch === '"' || ch === '`')) quote = ch;
    else if (ch === quote) quote = null;
  }
  return quote !== null;
}

/** The specifiers a module's text imports, with the line of each. */
export function specifiersOf(text: string): { spec: string; line: number }[] {
  const lineAt = (index: number) => text.slice(0, index).split('\n').length;
  const found: { spec: string; line: number }[] = [];
  for (const re of [STATIC, SIDE_EFFECT]) {
    for (const m of text.matchAll(re)) found.push({ spec: m[1]!, line: lineAt(m.index) });
  }
  for (const m of text.matchAll(DYNAMIC)) {
    const start = text.lastIndexOf('\n', m.index) + 1;
    const before = text.slice(start, m.index).trimStart();
    // Docstrings and comments name modules too (`import('./x.js')` in an example): not imports.
    if (before.startsWith('*') || before.startsWith('//') || before.startsWith('/*')) continue;
    // An import written in a string (a test's sample module, an expected text) is no import.
    if (inString(text.slice(start, m.index), m.index - start)) continue;
    found.push({ spec: m[2]!, line: lineAt(m.index) });
  }
  return found.sort((a, b) => a.line - b.line);
}

/**
 * The repository path a relative specifier of `from` names (`./ports.js` → `lib/store/ports.ts`).
 * @throws Error naming the import when no file answers to it
 */
export function resolveSpecifier(root: string, from: string, spec: string): string {
  const base = resolve(root, dirname(from), spec);
  const candidates = [base, base.replace(/\.js$/, '.ts'), base.replace(/\.js$/, '.tsx'), `${base}.ts`];
  const hit = candidates.find((c) => existsSync(c) && !c.endsWith('/'));
  if (!hit) throw new Error(`${from} imports ${spec}, which names no file`);
  return relative(root, hit).split('\\').join('/');
}

/** Every import of every scanned module. */
export function importGraph(root: string): Edge[] {
  const edges: Edge[] = [];
  for (const from of sourceFiles(root)) {
    for (const { spec, line } of specifiersOf(readFileSync(join(root, from), 'utf8'))) {
      const pkg = !spec.startsWith('.');
      edges.push({ from, to: pkg ? spec : resolveSpecifier(root, from, spec), line, pkg });
    }
  }
  return edges;
}

/** Folders of lib/ whose sub-folders are units of their own: the client side's home (DESIGN §2). */
export const NESTED_UNITS: readonly string[] = ['lib/client'];

/**
 * The unit a module belongs to: its folder under lib/ (`lib/store`), or its sub-folder under one of
 * NESTED_UNITS (`lib/client/capture`), a file at lib/'s top (`lib/version.ts`), or a top-level folder
 * (`functions`, `infra`, `harness`, `bench`, `scripts`, `test`).
 */
export function unitOf(path: string): string {
  const parts = path.split('/');
  if (parts[0] !== 'lib') return parts[0]!;
  if (parts.length <= 2) return path;
  const top = `lib/${parts[1]}`;
  return NESTED_UNITS.includes(top) && parts.length > 3 ? `${top}/${parts[2]}` : top;
}

/**
 * The loops of a graph (of units, or of files): each strongly connected set of two or more nodes, sorted.
 */
export function loopsOf(edges: [string, string][]): string[][] {
  const next = new Map<string, Set<string>>();
  for (const [a, b] of edges) {
    if (a === b) continue;
    if (!next.has(a)) next.set(a, new Set());
    if (!next.has(b)) next.set(b, new Set());
    next.get(a)!.add(b);
  }
  // Tarjan's algorithm; the graph has a dozen nodes, recursion is fine.
  let index = 0;
  const idx = new Map<string, number>();
  const low = new Map<string, number>();
  const stack: string[] = [];
  const onStack = new Set<string>();
  const loops: string[][] = [];
  const visit = (v: string) => {
    idx.set(v, index);
    low.set(v, index++);
    stack.push(v);
    onStack.add(v);
    for (const w of next.get(v)!) {
      if (!idx.has(w)) {
        visit(w);
        low.set(v, Math.min(low.get(v)!, low.get(w)!));
      } else if (onStack.has(w)) low.set(v, Math.min(low.get(v)!, idx.get(w)!));
    }
    if (low.get(v) === idx.get(v)) {
      const scc: string[] = [];
      let w: string;
      do {
        w = stack.pop()!;
        onStack.delete(w);
        scc.push(w);
      } while (w !== v);
      if (scc.length > 1) loops.push(scc.sort());
    }
  };
  for (const v of [...next.keys()].sort()) if (!idx.has(v)) visit(v);
  return loops;
}
