// Builds the CLI bundle that bin/hansard runs. Run by `npm ci` (prepare) and `npm run build`.
// Dependencies stay external (they are in node_modules); only our TypeScript is bundled.
// HANSARD_BUILD_OUTDIR builds elsewhere (tests that run the CLI of the current source without touching dist/).
import { build } from 'esbuild';

await build({
  entryPoints: { cli: 'lib/cli/main.ts', index: 'lib/index.ts' },
  outdir: process.env.HANSARD_BUILD_OUTDIR || 'dist',
  bundle: true,
  // Dynamic imports (the server stack of `serve`, SQLite, the AWS SDK) become chunks loaded on use.
  splitting: true,
  chunkNames: 'chunks/[name]-[hash]',
  platform: 'node',
  format: 'esm',
  target: 'node20',
  packages: 'external',
  sourcemap: true,
  jsx: 'automatic',
  jsxImportSource: 'hono/jsx',
  logLevel: 'warning',
});
