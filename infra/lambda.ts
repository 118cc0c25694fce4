/**
 * `HansardFunction`: the one Lambda construct of the stack (STYLE §11), a `NodejsFunction` with our
 * defaults, and the `bind…` helpers that grant a function exactly the data access it needs and set the
 * environment variable naming the resource, in one call.
 *
 * Defaults: Node.js 22 on ARM64 (Graviton, cheaper per GB-second), bundled locally by esbuild (no
 * Docker) into one minified ESM file with a `createRequire` banner (so bundled CommonJS dependencies can
 * still `require` Node built-ins) and a source map; the AWS SDK v3 is bundled too, the version the tests
 * ran (package-lock.json), never the runtime's copy. Each function gets its own role and its own log
 * group with a retention, and the role may write only to that log group: no
 * `AWSLambdaBasicExecutionRole` and its `*` resource.
 */
import { fileURLToPath } from 'node:url';
import { type Duration, RemovalPolicy } from 'aws-cdk-lib';
import type { ITable } from 'aws-cdk-lib/aws-dynamodb';
import { PolicyStatement, Role, ServicePrincipal } from 'aws-cdk-lib/aws-iam';
import type { IKey } from 'aws-cdk-lib/aws-kms';
import { Architecture, Runtime } from 'aws-cdk-lib/aws-lambda';
import { NodejsFunction, OutputFormat } from 'aws-cdk-lib/aws-lambda-nodejs';
import { LogGroup, RetentionDays } from 'aws-cdk-lib/aws-logs';
import type { IBucket } from 'aws-cdk-lib/aws-s3';
import type { Construct } from 'constructs';
import { type DynamoAccess, READ_ACTIONS } from '../lib/store/dynamo/access.js';
import { BUILD_MARKER_SUFFIX, REPLAY_PREFIX } from '../lib/store/keys.js';

/** The repository root: esbuild's working directory and the root of the dependency lock file. */
const REPO_ROOT = fileURLToPath(new URL('..', import.meta.url));

/**
 * The npm files the board's pages load (lib/board/assets.ts `VENDOR_ASSETS`, whose test checks the two
 * lists agree), copied beside each bundle into `board-assets/`.
 */
export const BOARD_ASSET_FILES = ['htmx.org/dist/htmx.min.js', 'htmx-ext-sse/dist/sse.min.js'] as const;

/** Every segment object lives under this prefix (DESIGN §5); functions may touch nothing else. */
export const SEGMENT_PREFIX = 'tenants/';
/** The signed digests' objects (issue 15.2, lib/store/s3/digest-store.ts `digestPrefix`) as an IAM pattern. */
export const DIGEST_OBJECTS = 'tenants/*/sessions/*/digests/*';
/**
 * A writer's objects, chunks and compacted runs (lib/store/s3/segment-store.ts `chunkObjectKey`,
 * `compactedObjectKey`), as an IAM pattern: what the compactor may delete.
 */
export const WRITER_OBJECTS = 'tenants/*/sessions/*/w_*/*.jsonl';
/** Compacted runs, `…/{w}/{start:015}-{end:015}.jsonl`: what the compactor may put. */
export const COMPACTED_OBJECTS = 'tenants/*/sessions/*/w_*/*-*.jsonl';

/**
 * ESM bundles have no `require`; CommonJS dependencies bundled into them (and esbuild's own `__require`
 * shim) need one for Node built-ins.
 */
export const ESM_REQUIRE_BANNER =
  "import { createRequire as __hansardCreateRequire } from 'node:module'; const require = __hansardCreateRequire(import.meta.url);";

export interface HansardFunctionProps {
  /** the entry module, relative to the repository root, e.g. `functions/api.ts`; it exports `handler` */
  entry: string;
  description: string;
  timeout: Duration;
  /** MB; CPU scales with it */
  memorySize?: number;
  logRetention?: RetentionDays;
  /** `LOG_LEVEL` of the function (functions/config.ts) */
  logLevel?: string;
  /** cap on concurrent executions, taken from the account's pool; none by default */
  reservedConcurrentExecutions?: number;
}

/** What a function may ask of the digest signing key. */
export type SigningAction = 'kms:Sign' | 'kms:GetPublicKey' | 'kms:DescribeKey';

/** Data access a function is bound with (to the bucket). */
export type DataAccess = 'read' | 'readwrite';

export class HansardFunction extends NodejsFunction {
  /** the function's own log group (retention set, removed with the stack: logs are not the record) */
  readonly logs: LogGroup;

  constructor(scope: Construct, id: string, props: HansardFunctionProps) {
    const logs = new LogGroup(scope, `${id}Logs`, {
      retention: props.logRetention ?? RetentionDays.ONE_MONTH,
      removalPolicy: RemovalPolicy.DESTROY,
    });
    const role = new Role(scope, `${id}Role`, {
      assumedBy: new ServicePrincipal('lambda.amazonaws.com'),
      description: `${props.description}: writes its own logs; data access granted by bind helpers`,
    });
    super(scope, id, {
      entry: `${REPO_ROOT}${props.entry}`,
      handler: 'handler',
      description: props.description,
      runtime: Runtime.NODEJS_22_X,
      architecture: Architecture.ARM_64,
      memorySize: props.memorySize ?? 1024,
      timeout: props.timeout,
      reservedConcurrentExecutions: props.reservedConcurrentExecutions,
      role,
      logGroup: logs,
      projectRoot: REPO_ROOT,
      depsLockFilePath: `${REPO_ROOT}package-lock.json`,
      environment: {
        LOG_LEVEL: props.logLevel ?? 'INFO',
        NODE_OPTIONS: '--enable-source-maps',
      },
      bundling: {
        format: OutputFormat.ESM,
        target: 'node22',
        mainFields: ['module', 'main'],
        banner: ESM_REQUIRE_BANNER,
        // The SDK of package-lock.json, not the runtime's (issue 17.5): a runtime copy older than the
        // tested one could drop IfNoneMatch/IfMatch silently and overwrite a chunk. ~0.5 MB a bundle.
        bundleAwsSDK: true,
        minify: true,
        sourceMap: true,
        sourcesContent: false,
        keepNames: true,
        forceDockerBundling: false,
        // The board's scripts (lib/board/assets.ts): the bundle has no node_modules, so they go beside it,
        // where the pages' asset route looks when the package cannot be resolved.
        commandHooks: {
          beforeBundling: () => [],
          beforeInstall: () => [],
          afterBundling: (inputDir: string, outputDir: string) => [
            `mkdir -p "${outputDir}/board-assets"`,
            ...BOARD_ASSET_FILES.map(
              (f) => `cp "${inputDir}/node_modules/${f}" "${outputDir}/board-assets/"`,
            ),
          ],
        },
      },
    });
    this.logs = logs;
    logs.grantWrite(role);
  }

  /**
   * Sets `BUCKET_NAME` and grants the segment objects under `tenants/` and nothing else of the bucket:
   * `s3:GetObject` (and `s3:PutObject` for `readwrite`) on `arn:…:bucket/tenants/*`, and `s3:ListBucket`
   * on the bucket only for listings whose prefix is under `tenants/`. No delete: chunks are never
   * overwritten or removed by the service (DESIGN §5).
   */
  bindBucket(bucket: IBucket, access: DataAccess): void {
    this.addEnvironment('BUCKET_NAME', bucket.bucketName);
    this.addToRolePolicy(
      new PolicyStatement({
        sid: 'SegmentObjects',
        actions: access === 'readwrite' ? ['s3:GetObject', 's3:PutObject'] : ['s3:GetObject'],
        resources: [bucket.arnForObjects(`${SEGMENT_PREFIX}*`)],
      }),
    );
    this.addToRolePolicy(
      new PolicyStatement({
        sid: 'SegmentListing',
        actions: ['s3:ListBucket'],
        resources: [bucket.bucketArn],
        conditions: { StringLike: { 's3:prefix': [`${SEGMENT_PREFIX}*`] } },
      }),
    );
  }

  /**
   * Grants the stored replays under `replays/` (issue 17.2, lib/store/s3/replay-archive.ts): `markers`
   * (the API, which hands out copies and starts builds): `s3:GetObject` on `replays/*` (the HEAD of a copy
   * and the presigned GET it signs, the HEAD of a marker) and `s3:PutObject` on the build markers
   * `replays/*.building` only; `copies` (the replay function, the builder): `s3:GetObject`,
   * `s3:PutObject` and `s3:AbortMultipartUpload` on `replays/*` (a copy is a multipart upload, aborted
   * when its merge fails). No listing: a missing key answers 403, which the archive reads as absent.
   */
  bindStoredReplays(bucket: IBucket, access: 'markers' | 'copies'): void {
    this.addEnvironment('BUCKET_NAME', bucket.bucketName);
    const all = bucket.arnForObjects(`${REPLAY_PREFIX}*`);
    if (access === 'markers') {
      this.addToRolePolicy(
        new PolicyStatement({ sid: 'StoredReplayReads', actions: ['s3:GetObject'], resources: [all] }),
      );
      this.addToRolePolicy(
        new PolicyStatement({
          sid: 'StoredReplayBuildMarkers',
          actions: ['s3:PutObject'],
          resources: [bucket.arnForObjects(`${REPLAY_PREFIX}*${BUILD_MARKER_SUFFIX}`)],
        }),
      );
      return;
    }
    this.addToRolePolicy(
      new PolicyStatement({
        sid: 'StoredReplays',
        actions: ['s3:AbortMultipartUpload', 's3:GetObject', 's3:PutObject'],
        resources: [all],
      }),
    );
  }

  /**
   * Sets `BUCKET_NAME` and grants what the compactor (issue 17.2, lib/store/s3/compaction.ts) sends:
   * `s3:GetObject` on the segment objects and `s3:ListBucket` under `tenants/` (as `bindBucket` 'read'),
   * `s3:PutObject` on compacted runs only (`COMPACTED_OBJECTS`) and `s3:DeleteObject` on writers' objects
   * only (`WRITER_OBJECTS`: chunk objects and runs, never a digest). No other role may delete.
   */
  bindCompaction(bucket: IBucket): void {
    this.bindBucket(bucket, 'read');
    this.addToRolePolicy(
      new PolicyStatement({
        sid: 'CompactedRuns',
        actions: ['s3:PutObject'],
        resources: [bucket.arnForObjects(COMPACTED_OBJECTS)],
      }),
    );
    this.addToRolePolicy(
      new PolicyStatement({
        sid: 'CompactedChunks',
        actions: ['s3:DeleteObject'],
        resources: [bucket.arnForObjects(WRITER_OBJECTS)],
      }),
    );
  }

  /**
   * Sets `BUCKET_NAME` and grants the signed digests' objects only (`DIGEST_OBJECTS`):
   * `s3:GetObject` and `s3:PutObject` (a create-only put, and the read that compares a conflicting one
   * and adopts a digest a crash left behind). For a function that touches no segment: the digester.
   */
  bindDigests(bucket: IBucket): void {
    this.addEnvironment('BUCKET_NAME', bucket.bucketName);
    this.addToRolePolicy(
      new PolicyStatement({
        sid: 'DigestObjects',
        actions: ['s3:GetObject', 's3:PutObject'],
        resources: [bucket.arnForObjects(DIGEST_OBJECTS)],
      }),
    );
  }

  /**
   * Sets `SIGNING_KEY_ARN` and grants `actions` (of `kms:Sign`, `kms:GetPublicKey`, `kms:DescribeKey`)
   * on the digest signing key alone.
   */
  bindSigningKey(key: IKey, actions: readonly SigningAction[]): void {
    this.addEnvironment('SIGNING_KEY_ARN', key.keyArn);
    this.addToRolePolicy(
      new PolicyStatement({
        sid: 'DigestSigningKey',
        actions: [...actions].sort(),
        resources: [key.keyArn],
      }),
    );
  }

  /**
   * Sets `TABLE_NAME` and grants exactly the requests `access` lists (what the function's code sends,
   * `functions/access.ts`): its read actions (`GetItem`, `Query`) on the table and on each index it
   * queries, without a key condition; each write action only on items whose partition key starts with one
   * of the prefixes declared for it (`ForAllValues:StringLike` on `dynamodb:LeadingKeys`, e.g. `RL#*`).
   * Items of a `TransactWriteItems` are authorized as their own Put/Update, so they need nothing more. No
   * table administration, no `Scan`, no `*`.
   */
  bindTable(table: ITable, access: readonly DynamoAccess[]): void {
    this.addEnvironment('TABLE_NAME', table.tableName);
    const reads = access.filter((a) => READ_ACTIONS.includes(a.action));
    const writes = access.filter((a) => !READ_ACTIONS.includes(a.action));
    const tableReads = unique(reads.filter((a) => !a.index).map((a) => `dynamodb:${a.action}`));
    if (tableReads.length > 0) {
      this.addToRolePolicy(
        new PolicyStatement({ sid: 'StateReads', actions: tableReads, resources: [table.tableArn] }),
      );
    }
    const indexes = unique(reads.flatMap((a) => (a.index ? [a.index] : [])));
    if (indexes.length > 0) {
      this.addToRolePolicy(
        new PolicyStatement({
          sid: 'StateIndexReads',
          actions: ['dynamodb:Query'],
          resources: indexes.map((i) => `${table.tableArn}/index/${i}`),
        }),
      );
    }
    for (const action of unique(writes.map((a) => a.action))) {
      const prefixes = unique(writes.filter((a) => a.action === action).map((a) => `${a.pk}*`));
      this.addToRolePolicy(
        new PolicyStatement({
          sid: `State${action}`,
          actions: [`dynamodb:${action}`],
          resources: [table.tableArn],
          conditions: { 'ForAllValues:StringLike': { 'dynamodb:LeadingKeys': prefixes } },
        }),
      );
    }
  }
}

/** The distinct values, sorted (so that the template does not change with the declarations' order). */
function unique<T extends string>(values: T[]): T[] {
  return [...new Set(values)].sort();
}
