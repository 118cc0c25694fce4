/**
 * The AWS deployment's stores and signer alone (DESIGN §1, §2 `lib/deploy`): the SDK clients, the S3
 * segment and digest stores and the DynamoDB state store over them, the KMS digest signer. lib/deploy/aws.ts
 * re-exports all of it and adds the app; the digest function (functions/digest.ts) imports this module
 * only, so its bundle holds no app, routes or rate limiter (as local-stores.ts is to local.ts).
 */
import { DynamoDBClient } from '@aws-sdk/client-dynamodb';
import type { KMSClient } from '@aws-sdk/client-kms';
import { S3Client } from '@aws-sdk/client-s3';
import { KmsSigner, kmsClient, type RetiredKmsKey } from '../audit/kms-signer.js';
import { type DigestSigner, publicKeysOnly } from '../audit/signer.js';
import type { DigestDeps } from '../service/digests/deps.js';
import { type DueDigestsResult, writeDueDigests } from '../service/digests/write.js';
import type { AuditConfig } from '../service/shared/audit-config.js';
import { DynamoStateStore } from '../store/dynamo/state-store.js';
import type { StateStore, Stores } from '../store/index.js';
import { S3DigestStore } from '../store/s3/digest-store.js';
import { S3SegmentStore } from '../store/s3/segment-store.js';

/** The SDK clients of a deployment, made once (per Lambda cold start) and reused by every request. */
export interface AwsClients {
  s3: S3Client;
  dynamodb: DynamoDBClient;
  /** the KMS client of the digest signing key (issue 15.2); absent where nothing signs */
  kms?: KMSClient | undefined;
}

/**
 * How long an SDK request may take before it fails (issue 17.5): without these the SDK waits for ever on
 * a connection that hangs, and a Lambda request ends only at its own timeout, with nothing logged of why.
 * `connectionTimeoutMs` bounds the TCP/TLS connect, `requestTimeoutMs` the time until the response's
 * headers (the request body included: a 4 MiB PUT), `socketTimeoutMs` any silence of the socket after
 * that (a response body that stops); `maxAttempts` counts the first try (the SDK retries a timeout, a
 * throttle and a 5xx with backoff). @smithy/node-http-handler's `NodeHttpHandlerOptions`, by value.
 */
export interface SdkTimeouts {
  /** ms to open a connection */
  connectionTimeoutMs: number;
  /** ms from sending a request to its response's headers */
  requestTimeoutMs: number;
  /** ms a socket may stay silent while a response body is read */
  socketTimeoutMs: number;
  /** tries of one request, the first included */
  maxAttempts: number;
}

/**
 * DynamoDB: single-digit ms in the region, so 1 s to connect and 3 s per try; 3 tries stay well inside
 * the API function's 29 s even for the few requests one route makes in a row.
 */
export const DYNAMODB_TIMEOUTS: SdkTimeouts = {
  connectionTimeoutMs: 1_000,
  requestTimeoutMs: 3_000,
  socketTimeoutMs: 3_000,
  maxAttempts: 3,
};

/**
 * S3: a PUT carries up to 4 MiB (MAX_CHUNK_BYTES on AWS) and a GET up to an 8 MiB window
 * (lib/store/s3/segment-read.ts), tens of ms at Lambda's bandwidth; 8 s leaves room for a slow one, and
 * 3 tries of it still end inside the API function's 29 s.
 */
export const S3_TIMEOUTS: SdkTimeouts = {
  connectionTimeoutMs: 2_000,
  requestTimeoutMs: 8_000,
  socketTimeoutMs: 8_000,
  maxAttempts: 3,
};

export interface AwsClientOptions {
  region: string;
  /** an S3 endpoint other than AWS's, e.g. an emulator's (then path-style addressing, which they need) */
  s3Endpoint?: string | undefined;
  /** a DynamoDB endpoint other than AWS's, e.g. DynamoDB Local's `http://127.0.0.1:8000` */
  dynamodbEndpoint?: string | undefined;
  /** a KMS endpoint other than AWS's (tests) */
  kmsEndpoint?: string | undefined;
  /** the S3 client's timeouts; default `S3_TIMEOUTS` */
  s3Timeouts?: SdkTimeouts | undefined;
  /** the DynamoDB client's timeouts; default `DYNAMODB_TIMEOUTS` */
  dynamodbTimeouts?: SdkTimeouts | undefined;
}

/** The SDK client options of `t` (the request handler is built by the client from them). */
export function sdkTimeoutOptions(t: SdkTimeouts) {
  return {
    maxAttempts: t.maxAttempts,
    requestHandler: {
      connectionTimeout: t.connectionTimeoutMs,
      requestTimeout: t.requestTimeoutMs,
      // Without it a request over `requestTimeout` is only logged as a warning and goes on waiting.
      throwOnRequestTimeout: true,
      socketTimeout: t.socketTimeoutMs,
    },
  };
}

/** Clients for `o.region`, or for the emulators the endpoints name, each with its timeouts. */
export function createAwsClients(o: AwsClientOptions): AwsClients {
  return {
    s3: new S3Client({
      region: o.region,
      ...sdkTimeoutOptions(o.s3Timeouts ?? S3_TIMEOUTS),
      ...(o.s3Endpoint ? { endpoint: o.s3Endpoint, forcePathStyle: true } : {}),
    }),
    dynamodb: new DynamoDBClient({
      region: o.region,
      ...sdkTimeoutOptions(o.dynamodbTimeouts ?? DYNAMODB_TIMEOUTS),
      ...(o.dynamodbEndpoint ? { endpoint: o.dynamodbEndpoint } : {}),
    }),
    // Short timeouts: a digest that cannot be signed fails in seconds and is tried at the next pass.
    kms: kmsClient(o.region, o.kmsEndpoint),
  };
}

export interface KmsSigningOptions {
  /** the client of the key's region */
  kms: KMSClient;
  /** the current signing key's ARN (`SIGNING_KEY_ARN`) */
  keyArn: string;
  /** the keys it replaced, still served (`RETIRED_SIGNING_KEYS`) */
  retired?: RetiredKmsKey[] | undefined;
}

/** The AWS deployment's digest signer: the KMS Ed25519 key (lib/audit/kms-signer.ts). */
export function openKmsSigner(o: KmsSigningOptions): DigestSigner {
  return new KmsSigner({ keyId: o.keyArn, retired: o.retired, client: o.kms });
}

/**
 * The KMS key's public keys alone (`publicKeysOnly`): for the replay function, which bundles stored
 * digests and may only GetPublicKey/DescribeKey (never kms:Sign: its URL is public).
 */
export function openKmsPublicKeys(o: KmsSigningOptions): DigestSigner {
  return publicKeysOnly(openKmsSigner(o));
}

export interface AwsDigestOptions {
  clients: AwsClients;
  bucket: string;
  table: string;
  signer: DigestSigner;
  audit?: Partial<AuditConfig> | undefined;
  /** where a session's failed digest goes (one line) */
  log: (line: string) => void;
  now?: (() => Date) | undefined;
  /** wraps the state store (the digest function: one answering only what its role allows) */
  wrapState?: ((state: StateStore) => StateStore) | undefined;
}

/**
 * What the scheduled digest function (functions/digest.ts) runs `writeDueDigests` with: the S3 digests
 * and the DynamoDB state over the given clients, and the signer.
 */
export function awsDigestDeps(o: AwsDigestOptions): DigestDeps {
  const stores = openAwsStores({
    s3: o.clients.s3,
    bucket: o.bucket,
    dynamo: o.clients.dynamodb,
    table: o.table,
    // Its role reads and writes the digests' objects only, without s3:ListBucket (infra/lambda.ts).
    canList: false,
  });
  return {
    state: o.wrapState ? o.wrapState(stores.state) : stores.state,
    digests: stores.digests,
    signer: o.signer,
    now: o.now ?? (() => new Date()),
    audit: o.audit,
    log: o.log,
  };
}

export interface AwsStoresOptions {
  /** an S3 client for the bucket's region (path-style for emulators) */
  s3: S3Client;
  /** the segment bucket */
  bucket: string;
  /** see `S3SegmentStore`: when unacknowledged bytes may be replaced (default 5 minutes) */
  staleAfterMs?: number;
  /** a DynamoDB client for the state table's region (the store leaves it open on `close()`) */
  dynamo: DynamoDBClient;
  /** the state table (lib/store/dynamo/schema.ts) */
  table: string;
  /**
   * whether the role may list the bucket (default true); false makes a 403 on a digest read mean
   * "absent" (`S3DigestStoreOptions.forbiddenMeansAbsent`)
   */
  canList?: boolean;
}

/** The AWS stores: S3 segments, S3 digests (in the segments bucket) and DynamoDB state, over the caller's clients. */
export function openAwsStores(opts: AwsStoresOptions): Stores {
  return {
    segments: new S3SegmentStore({
      client: opts.s3,
      bucket: opts.bucket,
      ...(opts.staleAfterMs !== undefined ? { staleAfterMs: opts.staleAfterMs } : {}),
    }),
    state: new DynamoStateStore({ tableName: opts.table, client: opts.dynamo }),
    // under each session's prefix of the segments bucket (issue 15)
    digests: new S3DigestStore({
      client: opts.s3,
      bucket: opts.bucket,
      forbiddenMeansAbsent: opts.canList === false,
    }),
  };
}

/**
 * One run of the AWS digester (functions/digest.ts): `writeDueDigests` at the clock's now over
 * `awsDigestDeps(o)`, at most `limit` sessions.
 */
export function awsDigester(o: AwsDigestOptions & { limit: number }): () => Promise<DueDigestsResult> {
  const deps = awsDigestDeps(o);
  return () => writeDueDigests(deps, deps.now(), o.limit);
}
