// Builds the CLI bundle that bin/hansard runs. Run by `npm ci` (prepare) and `npm run build`.
// Dependencies stay external (they are in node_modules); only our TypeScript is bundled.
// HANSARD_BUILD_OUTDIR builds elsewhere (tests that run the CLI of the current source without touching dist/).
import { createRequire } from 'node:module';
import { join } from 'node:path';
import { build } from 'esbuild';

// A dependency's JSON data (unhomoglyph's confusables table, lib/log/format/text-normal.ts) is bundled, not left
// external: esbuild 0.28 drops the `with { type: 'json' }` attribute from an external import, and Node 20
// then refuses to load the CLI (ERR_IMPORT_ASSERTION_TYPE_MISSING).
const bundleDependencyJson = {
  name: 'bundle-dependency-json',
  setup(b) {
    b.onResolve({ filter: /^[^./].*\.json$/ }, (args) => ({
      path: createRequire(join(args.resolveDir, 'noop.js')).resolve(args.path),
    }));
  },
};

await build({
  entryPoints: { cli: 'lib/client/cli/main.ts', index: 'lib/index.ts' },
  outdir: process.env.HANSARD_BUILD_OUTDIR || 'dist',
  bundle: true,
  // Dynamic imports (the server stack of `serve`, SQLite, the AWS SDK) become chunks loaded on use.
  splitting: true,
  chunkNames: 'chunks/[name]-[hash]',
  platform: 'node',
  format: 'esm',
  target: 'node20',
  packages: 'external',
  plugins: [bundleDependencyJson],
  sourcemap: true,
  jsx: 'automatic',
  jsxImportSource: 'hono/jsx',
  logLevel: 'warning',
});

// `hansard hook …` (issue 11): its own bundle, dependencies included (zod, proper-lockfile, ulid), minified,
// CommonJS so that dist/hook.cjs (lib/client/capture/hook-loader.ts) can run it through V8's code cache: a hook
// runs on every tool call, and compiling this bundle is most of its cost after Node's start.
// bin/hansard loads dist/hook.cjs.
const hookBuild = {
  outdir: process.env.HANSARD_BUILD_OUTDIR || 'dist',
  bundle: true,
  platform: 'node',
  format: 'cjs',
  outExtension: { '.js': '.cjs' },
  target: 'node20',
  external: ['better-sqlite3', '@aws-sdk/*'],
  logLevel: 'warning',
};
await build({
  ...hookBuild,
  entryPoints: { 'hook-bundle': 'lib/client/capture/hook-entry.ts' },
  minify: true,
  sourcemap: true,
});
await build({
  ...hookBuild,
  entryPoints: { hook: 'lib/client/capture/hook-loader.ts' },
  // Off only in the build bench/hook.ts measures the watchdog's cost against (issue 25 item 1).
  define: { HANSARD_HOOK_WATCHDOG: process.env.HANSARD_BUILD_NO_WATCHDOG ? 'false' : 'true' },
});
// The rescuer the hook's supervisor runs after it killed a blocked hook (issue 25 item 1), only then.
await build({
  ...hookBuild,
  entryPoints: { 'hook-watchdog': 'lib/client/capture/hook-watchdog-entry.ts' },
  minify: true,
});

// `hansard mcp serve` (issue 12): its own bundle too, dependencies included (the MCP SDK, zod, ajv),
// minified: an MCP client waits for its `initialize` answer at every start. bin/hansard runs it.
await build({
  entryPoints: { mcp: 'lib/client/mcp/mcp-entry.ts' },
  outdir: process.env.HANSARD_BUILD_OUTDIR || 'dist',
  bundle: true,
  splitting: true,
  chunkNames: 'mcp-chunks/[name]-[hash]',
  platform: 'node',
  format: 'esm',
  target: 'node20',
  minify: true,
  external: ['better-sqlite3', '@aws-sdk/*'],
  // ajv and others are CommonJS and require node builtins: give the ESM bundle a `require`.
  banner: {
    js: "import { createRequire as __hansardRequire } from 'node:module'; const require = __hansardRequire(import.meta.url);",
  },
  sourcemap: true,
  logLevel: 'warning',
});
