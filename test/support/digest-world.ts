/**
 * A deployment's stores with a fixed clock, for the signed-digest suites (test/service/digests*.test.ts):
 * `local` (FsSegmentStore, SqliteStateStore, FsDigestStore in a temp data directory) or `aws`
 * (S3SegmentStore and S3DigestStore on s3rver, DynamoStateStore on DynamoDB Local), a LocalKeyring, and
 * ingest through the real `ingestChunk`. Chunks are lines of a segment the library writer wrote.
 */
import { mkdtempSync } from 'node:fs';
import { join } from 'node:path';
import type { DynamoLocal } from '../../harness/dynamodb-local.js';
import type { LocalS3 } from '../../harness/s3rver.js';
import { LocalKeyring } from '../../lib/audit/local-keyring.js';
import { SignedDigest } from '../../lib/audit/schemas.js';
import type { DigestSigner } from '../../lib/audit/signer.js';
import type { DigestDeps } from '../../lib/service/digests/write.js';
import { ingestChunk } from '../../lib/service/ingest/ingest-chunk.js';
import type { AuditConfig } from '../../lib/service/shared/audit-config.js';
import type { ServiceContext } from '../../lib/service/shared/context.js';
import { DynamoStateStore } from '../../lib/store/dynamo/state-store.js';
import { FsDigestStore } from '../../lib/store/fs/digest-store.js';
import { FsSegmentStore } from '../../lib/store/fs/segment-store.js';
import type { Stores } from '../../lib/store/index.js';
import { S3DigestStore } from '../../lib/store/s3/digest-store.js';
import { S3SegmentStore } from '../../lib/store/s3/segment-store.js';
import { SqliteStateStore } from '../../lib/store/sqlite/state-store.js';
import { tokenRecord } from '../store/contract/records.js';
import { type LocalSegment, writeSession } from './segments.js';

export const TENANT = 'acme';
/** The worlds' clock starts here (ms). */
export const T0 = Date.parse('2026-12-01T00:00:00.000Z');

export interface DigestWorld {
  stores: Stores;
  keyring: LocalKeyring;
  /** the data directory (local) or a scratch directory (aws) */
  dir: string;
  /** aws: the bucket and the table the stores use */
  aws?: { bucket: string; table: string };
  clock: { t: number };
  now: () => Date;
  /** what the digester logged */
  logs: string[];
  /** the deps of writeDigest over these stores (`signer` defaults to the keyring) */
  deps(o?: { audit?: Partial<AuditConfig>; signer?: DigestSigner }): DigestDeps;
  /** `ingestChunk` of `lines` of `seg` (by index, end exclusive) at the offset they start at */
  ingest(seg: LocalSegment, from: number, to: number): ReturnType<typeof ingestChunk>;
  /** a new session segment (writer.start … writer.end unless `open`) in a fresh directory */
  segment(o?: { sid?: string; open?: boolean; agent?: string }): LocalSegment;
  /** the stored digests of a session, parsed, by seq */
  stored(sid: string): Promise<SignedDigest[]>;
  close(): Promise<void>;
}

/** Local stores in `root/<fresh>`. */
export function localWorld(root: string): DigestWorld {
  const dir = mkdtempSync(join(root, 'data-'));
  const stores: Stores = {
    segments: new FsSegmentStore(dir),
    state: new SqliteStateStore(join(dir, 'state.sqlite')),
    digests: new FsDigestStore(dir),
  };
  return world(stores, dir);
}

/** AWS stores: a fresh table on DynamoDB Local and a fresh bucket on s3rver. */
export async function awsWorld(root: string, dynamo: DynamoLocal, s3: LocalS3): Promise<DigestWorld> {
  const dir = mkdtempSync(join(root, 'aws-'));
  const bucket = await s3.createBucket();
  const client = s3.client();
  const table = await dynamo.freshTable();
  const stores: Stores = {
    segments: new S3SegmentStore({ client, bucket }),
    state: new DynamoStateStore({ tableName: table, client: dynamo.client }),
    digests: new S3DigestStore({ client, bucket, listPageSize: 2 }),
  };
  return { ...world(stores, dir), aws: { bucket, table } };
}

function world(stores: Stores, dir: string): DigestWorld {
  const clock = { t: T0 };
  const now = () => new Date(clock.t);
  const keyring = LocalKeyring.open(dir, now).keyring;
  const logs: string[] = [];
  const ctx: ServiceContext = {
    tenant: TENANT,
    caller: tokenRecord(TENANT, { scopes: ['ingest', 'read'] }),
    segments: stores.segments,
    state: stores.state,
    now,
  };
  let n = 0;
  return {
    stores,
    keyring,
    dir,
    clock,
    now,
    logs,
    deps: (o = {}) => ({
      state: stores.state,
      digests: stores.digests,
      signer: o.signer ?? keyring,
      now,
      audit: o.audit,
      log: (line) => logs.push(line),
    }),
    ingest(seg, from, to) {
      const offset = seg.lines.slice(0, from).reduce((s, l) => s + l.length, 0);
      const body = Buffer.concat(seg.lines.slice(from, to));
      return ingestChunk({ ctx, input: { sid: seg.sid, w: seg.w, offset, body } });
    },
    segment(o = {}) {
      return writeSession(mkdtempSync(join(dir, `s${++n}-`)), o);
    },
    async stored(sid) {
      const out: SignedDigest[] = [];
      for (const seq of await stores.digests.listDigests(TENANT, sid)) {
        const bytes = (await stores.digests.getDigest(TENANT, sid, seq))!;
        out.push(SignedDigest.parse(JSON.parse(Buffer.from(bytes).toString('utf8'))));
      }
      return out;
    },
    close: () => stores.state.close(),
  };
}
