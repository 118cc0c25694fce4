/**
 * The architecture test (issue 9.4, 26.4): the import graph of the whole tree (lib/, functions/, infra/,
 * harness/, bench/, scripts/, test/) keeps the rules of DESIGN §2 (test/architecture/rules.ts): lib/log
 * imports nothing of ours, the service only the store's ports, adapters only ports and key layouts and are
 * imported by lib/deploy alone, lib/board nothing of lib/http, lib/deploy is imported only by
 * lib/client/cli and functions/, nothing imports test/ and bench/ nothing of it; no folders import each
 * other in a loop, no files in a circle, and no allowed arrow is left that no import uses. A broken rule
 * fails with one line per offending import, naming file, line, target and rule.
 *
 * The graph is read from the source text (type-only imports count); a first test checks that reading
 * against esbuild's, so an import the regexes miss fails here rather than slipping past the rules.
 */
import { join, relative } from 'node:path';
import { fileURLToPath } from 'node:url';
import { build } from 'esbuild';
import { describe, expect, it } from 'vitest';
import {
  type Edge,
  importGraph,
  loopsOf,
  resolveSpecifier,
  sourceFiles,
  specifiersOf,
  unitOf,
} from './import-graph.js';
import { MAY_IMPORT, unusedArrows, violations } from './rules.js';

const ROOT = fileURLToPath(new URL('../../', import.meta.url));
const files = sourceFiles(ROOT);
const edges = importGraph(ROOT);
const ours = edges.filter((e) => !e.pkg);

/**
 * What esbuild sees each module import (type-only imports are gone by then), as `from -> to`. Every
 * import is recorded and left external, so each module is read on its own: nothing is linked.
 */
async function esbuildImports(): Promise<Set<string>> {
  const seen = new Set<string>();
  await build({
    entryPoints: files.map((f) => join(ROOT, f)),
    absWorkingDir: ROOT,
    bundle: true,
    platform: 'node',
    format: 'esm',
    jsx: 'automatic',
    jsxImportSource: 'hono/jsx',
    outdir: 'unused',
    write: false,
    logLevel: 'silent',
    plugins: [
      {
        name: 'record-imports',
        setup(b) {
          b.onResolve({ filter: /.*/ }, (args) => {
            if (args.kind === 'entry-point') return undefined;
            const from = relative(ROOT, args.importer).split('\\').join('/');
            const pkg = !args.path.startsWith('.');
            seen.add(`${from} -> ${pkg ? args.path : resolveSpecifier(ROOT, from, args.path)}`);
            return { path: args.path, external: true };
          });
        },
      },
    ],
  });
  return seen;
}

describe('the import graph', () => {
  it('is read completely: every import esbuild finds is in it', async () => {
    expect(files.length).toBeGreaterThan(80);
    const read = new Set(edges.map((e) => `${e.from} -> ${e.to}`));
    // The JSX transform imports its runtime itself; the source never names it.
    const missed = [...(await esbuildImports())].filter(
      (i) => !read.has(i) && !i.endsWith(' -> hono/jsx/jsx-runtime'),
    );
    expect(missed).toEqual([]);
  });

  it('reads static, multi-line, re-export, side-effect and dynamic imports, and skips comments and strings', () => {
    const text = [
      "import type { A } from './a.js';",
      'import {',
      '  b,',
      '  type C,',
      "} from '../b.js';",
      "export * from './c.js';",
      "export { d } from './d.js';",
      "import './e.js';",
      "import X, { y } from 'pkg';",
      ' * const { x } = await import("./in-a-docstring.js");',
      "  const { f } = await import('./f.js');",
      "export const g = 'from \\'./not-an-import.js\\'';",
      '  expect(bin).toContain("import(\'./in-a-string.js\')");',
      '  const { h } = await import(`./h.js`);',
    ].join('\n');
    expect(specifiersOf(text).map((s) => `${s.line}:${s.spec}`)).toEqual([
      '1:./a.js',
      '2:../b.js',
      '6:./c.js',
      '7:./d.js',
      '8:./e.js',
      '9:pkg',
      '11:./f.js',
      '14:./h.js',
    ]);
  });

  it('keeps the rules of DESIGN §2', () => {
    expect(violations(edges, files)).toEqual([]);
  });

  it('has no loops between folders', () => {
    const units = ours.map((e) => [unitOf(e.from), unitOf(e.to)] as [string, string]);
    const loops = loopsOf(units).map((loop) => {
      // One import per step of the loop, so that the message says where to cut it.
      const steps = ours.filter((e) => loop.includes(unitOf(e.from)) && loop.includes(unitOf(e.to)));
      const across = steps.filter((e) => unitOf(e.from) !== unitOf(e.to));
      return `${loop.join(' <-> ')}: ${across.map((e) => `${e.from}:${e.line} -> ${e.to}`).join('; ')}`;
    });
    expect(loops).toEqual([]);
    // The allowed imports themselves form no loop, so no set of allowed imports can make one.
    const allowed = Object.entries(MAY_IMPORT).flatMap(([u, to]) =>
      to.map((t) => [u, t] as [string, string]),
    );
    expect(loopsOf(allowed)).toEqual([]);
  });

  it('has no circle between files (of one folder or of any)', () => {
    const circles = loopsOf(ours.map((e) => [e.from, e.to] as [string, string])).map((circle) => {
      const steps = ours.filter((e) => circle.includes(e.from) && circle.includes(e.to));
      return `${steps.map((e) => `${e.from}:${e.line} -> ${e.to}`).join('; ')}: move the shared piece down`;
    });
    expect(circles).toEqual([]);
  });

  it('allows no arrow that no import uses (MAY_IMPORT is no looser than the code)', () => {
    expect(unusedArrows(edges)).toEqual([]);
  });
});

describe('the rules catch what they are for', () => {
  const edge = (from: string, to: string): Edge => ({
    from,
    to,
    line: 1,
    pkg: !to.includes('/') || to.startsWith('@'),
  });
  const cases: [string, Edge, RegExp][] = [
    [
      'lib/log importing ours',
      edge('lib/log/write/writer.ts', 'lib/store/ports.ts'),
      /lib\/log imports nothing of ours/,
    ],
    [
      'the service importing an adapter',
      edge('lib/service/x.ts', 'lib/store/sqlite/state-store.ts'),
      /store ports only/,
    ],
    [
      'the service importing the wiring',
      edge('lib/service/x.ts', 'lib/deploy/local.ts'),
      /lib\/service may import only/,
    ],
    [
      'an adapter importing the service',
      edge('lib/store/fs/segment-store.ts', 'lib/service/shared/errors.ts'),
      /an adapter imports only/,
    ],
    [
      'an adapter importing another',
      edge('lib/store/s3/segment-store.ts', 'lib/store/fs/segment-store.ts'),
      /lib\/deploy only/,
    ],
    [
      'the store barrel exporting an adapter',
      edge('lib/store/index.ts', 'lib/store/sqlite/state-store.ts'),
      /a port imports only/,
    ],
    [
      "lib/http importing the store's errors (the service translates them)",
      edge('lib/http/errors.ts', 'lib/store/errors.ts'),
      /lib\/http may import only/,
    ],
    ['lib/http importing an adapter', edge('lib/http/app.ts', 'lib/ratelimit/memory.ts'), /lib\/deploy only/],
    [
      'lib/board importing lib/http',
      edge('lib/board/pages.tsx', 'lib/http/auth.ts'),
      /lib\/board may import only/,
    ],
    [
      'lib/http importing the wiring',
      edge('lib/http/app.ts', 'lib/deploy/aws.ts'),
      /imported only by lib\/client\/cli/,
    ],
    [
      'better-sqlite3 outside its adapter',
      edge('lib/http/app.ts', 'better-sqlite3'),
      /only lib\/store\/sqlite\/state-store.ts and lib\/store\/sqlite\/advance.ts import better-sqlite3/,
    ],
    [
      'node-server in a Lambda function',
      edge('functions/app.ts', '@hono/node-server'),
      /only lib\/deploy\/local.ts imports @hono\/node-server/,
    ],
    [
      'a Lambda entry point importing the app past lib/deploy',
      edge('functions/app.ts', 'lib/http/routes/index.ts'),
      /functions may import only lib\/deploy \(/,
    ],
    [
      'a Lambda entry point importing an adapter',
      edge('functions/access.ts', 'lib/ratelimit/dynamo.ts'),
      /lib\/deploy only/,
    ],
    ['the AWS SDK in the service', edge('lib/service/x.ts', '@aws-sdk/client-s3'), /import the AWS SDK/],
    [
      'the stores-only module importing the app',
      edge('lib/deploy/local-stores.ts', 'lib/http/app.ts'),
      /local stores alone/,
    ],
    [
      'tenant create loading the whole local wiring',
      edge('lib/client/cli/cmd-tenant.ts', 'lib/deploy/local.ts'),
      /the tenant commands open them through it/,
    ],
    [
      "the tenant commands' store access loading the whole local wiring",
      edge('lib/deploy/tenant-admin.ts', 'lib/deploy/local.ts'),
      /the tenant commands open them through it/,
    ],
    [
      'the HTTP client importing the command (lib/client/* are units of their own)',
      edge('lib/client/api/upload.ts', 'lib/client/cli/main.ts'),
      /lib\/client\/api may import only/,
    ],
    [
      'the client side importing the service',
      edge('lib/client/mcp/tools.ts', 'lib/service/status/get.ts'),
      /client side never imports the server's service or store/,
    ],
    [
      'lib importing a test helper',
      edge('lib/service/x.ts', 'test/support/http.ts'),
      /lib\/service may import only/,
    ],
    [
      'lib importing harness/',
      edge('lib/deploy/local.ts', 'harness/s3rver.ts'),
      /lib\/deploy may import only/,
    ],
    [
      'a benchmark importing test/support',
      edge('bench/hook.ts', 'test/support/cli.ts'),
      /bench may import only harness/,
    ],
    ['harness/ importing test/', edge('harness/s3rver.ts', 'test/support/tmp.ts'), /harness may import only/],
    [
      'harness/ importing bench/',
      edge('harness/serve-process.ts', 'bench/serve.ts'),
      /harness may import only/,
    ],
    [
      'a script importing test/',
      edge('scripts/screenshots.ts', 'test/support/http.ts'),
      /scripts may import only/,
    ],
    [
      'a test importing scripts/ (not an arrow any test uses)',
      edge('test/scripts/x.test.ts', 'scripts/board-demo.ts'),
      /test may import only/,
    ],
    [
      'the CLI importing the store',
      edge('lib/client/cli/cmd-tenant.ts', 'lib/store/index.ts'),
      /client side never imports the server's service or store/,
    ],
  ];
  for (const [name, e, says] of cases) {
    it(name, () => {
      const found = violations([e], []);
      expect(found.length, `no rule caught ${e.from} -> ${e.to}`).toBeGreaterThan(0);
      expect(found.join('\n')).toMatch(says);
      expect(found[0]).toMatch(new RegExp(`^${e.from}:1 imports ${e.to.replace(/[.*/]/g, '\\$&')}: `));
    });
  }

  it('a module of lib/store without a role', () => {
    expect(violations([], ['lib/store/redis/state-store.ts', 'lib/store/tokens.ts'])).toEqual([
      expect.stringMatching(/^lib\/store\/redis\/state-store.ts has no role/),
    ]);
  });

  it('a circle between files of one folder', () => {
    expect(
      loopsOf([
        ['lib/http/auth.ts', 'lib/http/openapi.ts'],
        ['lib/http/openapi.ts', 'lib/http/route.ts'],
        ['lib/http/route.ts', 'lib/http/auth.ts'],
        ['lib/http/app.ts', 'lib/http/auth.ts'],
      ]),
    ).toEqual([['lib/http/auth.ts', 'lib/http/openapi.ts', 'lib/http/route.ts']]);
  });

  it('an allowed arrow that no import uses', () => {
    const used = [edge('bench/hook.ts', 'harness/serve-process.ts')];
    expect(unusedArrows(used, { bench: ['harness', 'lib/log'], harness: [] })).toEqual(['bench -> lib/log']);
  });

  it('a test helper outside lib may open an adapter; a module that ships may not', () => {
    expect(violations([edge('harness/s3-replay-world.ts', 'lib/store/dynamo/state-store.ts')], [])).toEqual(
      [],
    );
    expect(violations([edge('test/support/x.ts', 'better-sqlite3')], [])).toEqual([]);
    expect(violations([edge('lib/http/app.ts', 'lib/store/dynamo/state-store.ts')], []).join('\n')).toMatch(
      /lib\/deploy only/,
    );
  });

  it('a loop between two folders', () => {
    expect(
      loopsOf([
        ['lib/http', 'lib/board'],
        ['lib/board', 'lib/http'],
        ['lib/board', 'lib/service'],
      ]),
    ).toEqual([['lib/board', 'lib/http']]);
  });
});
