/**
 * What the Lambda bundles hold (issue 9.2): esbuild bundles each entry as infra/lambda.ts has the stack
 * bundle it (ESM, node22, minified, the AWS SDK bundled) and its metafile lists every module that went
 * in. The local deployment's wiring and adapters (SQLite through better-sqlite3, a native addon that
 * would not even load on Lambda; the filesystem segment store; node-server) must not be among them, not
 * even as a module tree-shaken to nothing. The AWS SDK must be (issue 17.5): the copy the tests ran, with
 * the conditional-write headers the S3 stores rely on, not whatever the Lambda runtime carries. And no
 * function reaches PostgreSQL but through the RDS Data API (issue 30): `pg` and its runner
 * (lib/store/postgres/pg-runner.ts) are in no bundle, not even the search indexer's.
 * test/infra/stack.test.ts checks the same of the bundles `cdk synth` writes, through their source maps.
 */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';

import { gzipSync } from 'node:zlib';
import { beforeAll, describe, expect, it } from 'vitest';
import { bundleLambda, ROOT } from './lambda-bundle.js';

/** Modules of the local deployment: none may be in a Lambda bundle. */
const LOCAL_ONLY = [
  /(^|\/)node_modules\/better-sqlite3\//,
  /(^|\/)node_modules\/bindings\//,
  /(^|\/)node_modules\/@hono\/node-server\//,
  /^lib\/store\/sqlite\//,
  /^lib\/store\/fs\//,
  /^lib\/deploy\/local\.ts$/,
  /^lib\/deploy\/local-stores\.ts$/,
  /^lib\/ratelimit\/memory\.ts$/,
];

/** What reaches PostgreSQL over the network itself: the functions use the Data API (HTTPS and IAM) only. */
const PG_DIRECT = [/(^|\/)node_modules\/pg(-[a-z]+)?\//, /^lib\/store\/postgres\/pg-runner\.ts$/];

const ENTRIES = [
  'functions/api.ts',
  'functions/replay.ts',
  'functions/digest.ts',
  'functions/compact.ts',
  'functions/search.ts',
];

interface Bundle {
  /** every module esbuild read for the bundle, as paths relative to the repository */
  inputs: string[];
  /** the modules with bytes in the output */
  used: string[];
  /** modules left out of the bundle for the runtime to provide */
  externals: string[];
  code: string;
  bytes: number;
  gzipBytes: number;
}

/** The AWS SDK packages our code imports (each function bundles those it uses). */
const SDK = [
  '@aws-sdk/client-s3',
  '@aws-sdk/client-dynamodb',
  '@aws-sdk/lib-dynamodb',
  '@aws-sdk/client-kms',
  '@aws-sdk/client-rds-data',
  '@aws-sdk/client-secrets-manager',
];

const versionOf = (file: string) =>
  (JSON.parse(readFileSync(join(ROOT, file), 'utf8')) as { version: string }).version;

async function bundle(entry: string): Promise<Bundle> {
  const r = await bundleLambda(entry, { minify: true });
  const js = r.outputFiles.find((f) => f.path.endsWith('.js'))!;
  const inputs = Object.values(r.metafile.inputs);
  return {
    inputs: Object.keys(r.metafile.inputs),
    used: Object.values(r.metafile.outputs).flatMap((o) =>
      Object.entries(o.inputs)
        .filter(([, i]) => i.bytesInOutput > 0)
        .map(([path]) => path),
    ),
    externals: [...new Set(inputs.flatMap((i) => i.imports.filter((x) => x.external).map((x) => x.path)))],
    code: js.text,
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
      const wiring: Record<string, string> = {
        'functions/digest.ts': 'lib/deploy/aws-stores.ts',
        'functions/compact.ts': 'lib/deploy/aws-compaction.ts',
        'functions/search.ts': 'lib/deploy/aws-search.ts',
      };
      expect(b.inputs).toContain(wiring[entry] ?? 'lib/deploy/aws.ts');
      expect(b.inputs).toContain('lib/store/dynamo/state-store.ts');
      expect(b.inputs.filter((i) => LOCAL_ONLY.some((re) => re.test(i)))).toEqual([]);
    });
  }

  for (const entry of ENTRIES) {
    it(`${entry} holds no pg: PostgreSQL only through the RDS Data API`, () => {
      const b = bundles.get(entry)!;
      expect(b.inputs.filter((i) => PG_DIRECT.some((re) => re.test(i)))).toEqual([]);
      expect(b.externals.filter((x) => x === 'pg' || x.startsWith('pg/'))).toEqual([]);
    });
  }

  it('the search bundles reach the index through the Data API runner, and only the indexer reads a secret itself', () => {
    for (const entry of ['functions/api.ts', 'functions/search.ts']) {
      expect(bundles.get(entry)!.inputs, entry).toContain('lib/store/postgres/data-api-runner.ts');
    }
    const secrets = (entry: string) =>
      bundles.get(entry)!.used.some((p) => p.startsWith('node_modules/@aws-sdk/client-secrets-manager/'));
    expect(secrets('functions/search.ts')).toBe(true);
    expect(secrets('functions/api.ts')).toBe(false);
  });

  for (const entry of ENTRIES) {
    it(`${entry} bundles the AWS SDK the tests ran (no @aws-sdk import left to the runtime)`, () => {
      const b = bundles.get(entry)!;
      expect(b.externals.filter((x) => x.startsWith('@aws-sdk/') || x.startsWith('@smithy/'))).toEqual([]);
      // Every function reads S3 and DynamoDB; the one installed copy of each went in.
      for (const pkg of ['@aws-sdk/client-s3', '@aws-sdk/client-dynamodb']) {
        expect(
          b.used.some((p) => p.startsWith(`node_modules/${pkg}/`)),
          pkg,
        ).toBe(true);
      }
      for (const pkg of SDK.filter((p) => b.inputs.some((i) => i.startsWith(`node_modules/${p}/`)))) {
        // package.json pins it exactly, and that is the copy esbuild read (and the tests import).
        const pinned = (
          JSON.parse(readFileSync(join(ROOT, 'package.json'), 'utf8')) as {
            dependencies: Record<string, string>;
          }
        ).dependencies[pkg];
        expect(versionOf(`node_modules/${pkg}/package.json`), pkg).toBe(pinned);
      }
      // The conditional-put header is the bundled PutObject's: an SDK without it would drop IfNoneMatch.
      expect(b.code).toContain('If-None-Match');
      expect(b.code).toContain('If-Match');
    });
  }
});
