/**
 * Attack 4 on compaction (issue 17.2): what the compactor's role (infra/compaction.ts, infra/lambda.ts
 * bindCompaction) and every other role of the stack must never be able to do to the segments bucket:
 * delete for good (a version, which a delete marker does not), shorten the 30 days that deleted chunk
 * objects are kept (lifecycle, versioning, policy, Object Lock), or delete a digest or an object of
 * another prefix. The IAM patterns are matched as IAM matches them (`*` spans `/`) against keys the
 * code makes, including tenant names with `-` (the character the run pattern hinges on).
 */
import { App } from 'aws-cdk-lib';
import { Template } from 'aws-cdk-lib/assertions';
import { beforeAll, describe, expect, it } from 'vitest';
import { COMPACTED_OBJECTS, DIGEST_OBJECTS, WRITER_OBJECTS } from '../../infra/lambda.js';
import { HansardStack } from '../../infra/stack.js';
import { newId } from '../../lib/log/index.js';
import { digestName } from '../../lib/store/keys.js';
import { chunkObjectKey, compactedObjectKey } from '../../lib/store/s3/segment-objects.js';
import { iamMatches } from '../support/template-text.js';

// biome-ignore lint/suspicious/noExplicitAny: CloudFormation JSON, read field by field
type Json = Record<string, any>;
let t: Template;

beforeAll(() => {
  const app = new App({ context: { 'aws:cdk:bundling-stacks': [] } });
  t = Template.fromStack(new HansardStack(app, 'Attack4Grants'));
}, 120_000);

/** Every action any policy of the stack (identity or bucket policy) allows. */
function allowedActions(): string[] {
  const out = new Set<string>();
  for (const type of ['AWS::IAM::Policy', 'AWS::IAM::ManagedPolicy', 'AWS::IAM::Role']) {
    for (const r of Object.values(t.findResources(type))) {
      const docs: Json[] = [];
      const props = r.Properties as Json;
      if (props.PolicyDocument) docs.push(props.PolicyDocument);
      for (const p of props.Policies ?? []) docs.push(p.PolicyDocument);
      for (const d of docs) {
        for (const s of d.Statement as Json[]) {
          if (s.Effect !== 'Allow') continue;
          for (const a of [s.Action].flat() as string[]) out.add(a);
        }
      }
    }
  }
  return [...out].sort();
}

describe("the compactor's grants and what no role may do", () => {
  it('held: no role may delete a version, bypass retention, or change lifecycle, versioning, policy or lock', () => {
    const actions = allowedActions();
    expect(actions).toContain('s3:DeleteObject');
    expect(actions).toContain('s3:PutObject');
    const never = [
      's3:DeleteObjectVersion',
      's3:BypassGovernanceRetention',
      's3:PutLifecycleConfiguration',
      's3:PutBucketVersioning',
      's3:PutBucketPolicy',
      's3:DeleteBucketPolicy',
      's3:PutObjectRetention',
      's3:PutObjectLegalHold',
      's3:PutBucketObjectLockConfiguration',
      's3:DeleteBucket',
    ];
    for (const a of actions) {
      for (const n of never) expect(iamMatches(a, n), `${a} allows ${n}`).toBe(false);
    }
  });

  it('held: the delete pattern takes no digest, replay, marker or plain key; the put pattern no chunk, of any tenant name', () => {
    for (const tenant of ['acme', 'a-b', 'w-1', 'x-', '0-0-0']) {
      const key = { tenant, sid: newId('s'), w: newId('w') };
      const run = compactedObjectKey(key, 0, 4096);
      const chunk = chunkObjectKey(key, 4096);
      const digest = `tenants/${tenant}/sessions/${key.sid}/digests/${digestName(1)}`;
      expect(iamMatches(WRITER_OBJECTS, run)).toBe(true);
      expect(iamMatches(WRITER_OBJECTS, chunk)).toBe(true);
      expect(iamMatches(COMPACTED_OBJECTS, run)).toBe(true);
      expect(iamMatches(COMPACTED_OBJECTS, chunk), chunk).toBe(false);
      for (const other of [
        digest,
        `replays/${tenant}/${key.sid}/raw.jsonl`,
        `replays/${tenant}/${key.sid}/raw.building`,
        `plain/${key.sid}/${key.w}.jsonl`,
        `tenants/${tenant}/sessions/${key.sid}/digests/${digestName(2)}.jsonl`.replace(
          '.json.jsonl',
          '.json',
        ),
      ]) {
        expect(iamMatches(WRITER_OBJECTS, other), other).toBe(false);
        expect(iamMatches(COMPACTED_OBJECTS, other), other).toBe(false);
      }
      expect(iamMatches(DIGEST_OBJECTS, digest)).toBe(true);
    }
  });
});
