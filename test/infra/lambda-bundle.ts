/**
 * A Lambda entry bundled by esbuild as infra/lambda.ts has the stack bundle it (ESM, node22, the AWS SDK
 * bundled too), in memory, with esbuild's metafile naming every module that went in: what
 * bundle-contents.test.ts and stack-dynamo.test.ts read the bundles' contents from.
 */
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { build, type Metafile, type OutputFile } from 'esbuild';

/** The repository root: esbuild's working directory, so the metafile's paths are relative to it. */
export const ROOT = fileURLToPath(new URL('../../', import.meta.url));

/**
 * Bundles `entry` (a path relative to the repository, e.g. `functions/api.ts`) without writing it.
 * @param opts.minify minify (keeping names) as the stack does, for the bundle's real size
 * @throws esbuild's error when the entry does not build
 */
export async function bundleLambda(
  entry: string,
  opts: { minify?: boolean } = {},
): Promise<{ metafile: Metafile; outputFiles: OutputFile[] }> {
  const minify = opts.minify ?? false;
  const r = await build({
    entryPoints: [join(ROOT, entry)],
    absWorkingDir: ROOT,
    bundle: true,
    platform: 'node',
    format: 'esm',
    target: 'node22',
    mainFields: ['module', 'main'],
    ...(minify ? { minify: true, keepNames: true } : {}),
    outdir: 'unused',
    write: false,
    metafile: true,
    logLevel: 'silent',
  });
  return { metafile: r.metafile, outputFiles: r.outputFiles };
}
