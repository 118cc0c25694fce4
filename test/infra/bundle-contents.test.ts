/**
 * What the Lambda bundles hold (issue 9.2): esbuild bundles each entry as infra/lambda.ts has the stack
 * bundle it (ESM, node22, minified, the AWS SDK left to the runtime) and its metafile lists every module
 * that went in. The local deployment's wiring and adapters (SQLite through better-sqlite3, a native
 * addon that would not even load on Lambda; the filesystem segment store; node-server) must not be among
 * them, not even as a module tree-shaken to nothing. test/infra/stack.test.ts checks the same of the
 * bundles `cdk synth` writes, through their source maps.
 */

import { gzipSync } from 'node:zlib';
import { beforeAll, describe, expect, it } from 'vitest';
import { bundleLambda } from './lambda-bundle.js';

/** Modules of the local deployment: none may be in a Lambda bundle. */
const LOCAL_ONLY = [
  /(^|\/)node_modules\/better-sqlite3\//,
  /(^|\/)node_modules\/bindings\//,
  /(^|\/)node_modules\/@hono\/node-server\//,
  /^lib\/store\/sqlite-state-store\.ts$/,
  /^lib\/store\/fs-segment-store\.ts$/,
  /^lib\/deploy\/local\.ts$/,
  /^lib\/deploy\/local-stores\.ts$/,
  /^lib\/ratelimit\/memory\.ts$/,
];

const ENTRIES = ['functions/api.ts', 'functions/replay.ts', 'functions/digest.ts'];

interface Bundle {
  /** every module esbuild read for the bundle, as paths relative to the repository */
  inputs: string[];
  bytes: number;
  gzipBytes: number;
}

async function bundle(entry: string): Promise<Bundle> {
  const r = await bundleLambda(entry, { minify: true });
  const js = r.outputFiles.find((f) => f.path.endsWith('.js'))!;
  return {
    inputs: Object.keys(r.metafile.inputs),
    bytes: js.contents.length,
    gzipBytes: gzipSync(js.contents).length,
  };
}

describe('the Lambda bundles', () => {
  const bundles = new Map<string, Bundle>();
  beforeAll(async () => {
    for (const e of ENTRIES) bundles.set(e, await bundle(e));
  }, 60_000);

  for (const entry of ENTRIES) {
    it(`${entry} holds nothing of the local deployment (SQLite, better-sqlite3, node-server)`, () => {
      const b = bundles.get(entry)!;
      console.log(`${entry}: ${b.bytes} bytes minified, ${b.gzipBytes} gzipped, ${b.inputs.length} modules`);
      // The AWS wiring is there, so an empty or broken bundle cannot pass.
      expect(b.inputs).toContain(
        entry === 'functions/digest.ts' ? 'lib/deploy/aws-stores.ts' : 'lib/deploy/aws.ts',
      );
      expect(b.inputs).toContain('lib/store/dynamo-state-store.ts');
      expect(b.inputs.filter((i) => LOCAL_ONLY.some((re) => re.test(i)))).toEqual([]);
    });
  }
});
