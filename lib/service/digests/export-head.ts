/**
 * Which digest an export bundle ends with (issue 15.3, docs/audit.md "Large sessions on AWS"): one
 * written for it now (`POST /v1/sessions/{sid}/digests`, or the export itself where the deployment
 * signs), a stored one named by `?head=N`, or, where the deployment cannot sign (the AWS replay function,
 * whose URL is public and whose role has no kms:Sign), the newest stored one. Splitting the write from
 * the download lets the API sign and the streaming replay function send a bundle of up to 200 MB (Lambda's streamed-response limit).
 */
import { digestHash } from '../../audit/chain.js';
import type { DigestWriter } from '../../audit/schemas.js';
import { SignedDigest } from '../../audit/schemas.js';
import { requireScope, requireSessionAccess, type ServiceContext } from '../shared/context.js';
import { AppError, notFound } from '../shared/errors.js';
import { digestDeps, MISSING_DIGEST_STORE } from './deps.js';
import { type ExportHeadWrite, writeExportDigest } from './write.js';

/** How many times an export tries to write its own digest when other processes keep writing first. */
const WRITE_ATTEMPTS = 3;

/** What `POST /v1/sessions/{sid}/digests` answers: the digest now at the session's head. */
export interface ExportDigest {
  seq: number;
  /** `digestHash` of it, lowercase hex */
  sha256: string;
  /** its `at` (ISO 8601) */
  at: string;
  /** true: signed by this call (201); false: the existing head, which already covers the session (200) */
  fresh: boolean;
}

/** The digest a bundle ends with: its seq and hash, and the writers' lengths it attests. */
export interface BundleHead {
  seq: number;
  sha256: string;
  writers: DigestWriter[];
}

/**
 * The head an export ends with (`writeExportDigest`): a digest with reason `export` written now when
 * the session has none, changed since its head, or its head is older than `exportMinAgeSeconds`; else
 * the head as it is (`fresh: false`). When other processes keep writing its next digest first, the
 * stored head is the answer (written just now, by someone else). The caller must have checked access
 * (`checkExport`).
 * @throws AppError `not_found` (the session is gone); `digests_unavailable` / `signing_unavailable`
 *   (503) when the deployment cannot sign; `storage_layout` (500); the stores' errors
 */
export async function writeExportHead(ctx: ServiceContext, sid: string): Promise<ExportHeadWrite> {
  const deps = digestDeps(ctx);
  for (let i = 0; i < WRITE_ATTEMPTS; i++) {
    const written = await writeExportDigest(deps, ctx.tenant, sid);
    if (written) return written;
  }
  const head = await ctx.state.getDigestHead(ctx.tenant, sid);
  if (!head) throw notFound('session');
  return { head, fresh: false };
}

/**
 * `POST /v1/sessions/{sid}/digests`: checks access as an export does, writes an `export` digest when it
 * adds something (`writeExportHead`) and answers the head's seq, hash, time and whether it is new;
 * `GET …/export?head={seq}` then bundles exactly up to it.
 * @throws AppError `forbidden` (scope `read`); `not_found` for a missing session, another tenant's or
 *   another than a session-bound token's; as `writeExportHead`
 */
export async function createExportDigest(ctx: ServiceContext, sid: string): Promise<ExportDigest> {
  requireScope(ctx, 'read');
  requireSessionAccess(ctx, sid);
  if (!(await ctx.state.getSession(ctx.tenant, sid))) throw notFound('session');
  const { head, fresh } = await writeExportHead(ctx, sid);
  return { seq: head.seq, sha256: head.sha256, at: head.at, fresh };
}

/**
 * The head of the bundle of session `sid`: digest `head` when given (written earlier, nothing is
 * written now), else `writeExportHead` where the deployment signs (a digest written now, or the head
 * when it already covers every chunk stored and is young), else the newest stored one.
 * @throws AppError `digest_not_found` (404) when digest `head` is not stored; `no_digest` (409) when the
 *   deployment cannot sign and the session has no digest yet; as `writeExportHead`
 */
export async function bundleHead(ctx: ServiceContext, sid: string, head?: number): Promise<BundleHead> {
  if (head !== undefined) return storedDigest(ctx, sid, head);
  if (ctx.signer?.signs !== false) return (await writeExportHead(ctx, sid)).head;
  const stored = await ctx.state.getDigestHead(ctx.tenant, sid);
  if (!stored) {
    throw new AppError(
      'no_digest',
      `session ${sid} has no signed digest yet and this URL cannot sign one: POST /v1/sessions/${sid}/digests on the API URL first, then ask for …/export?head=<its seq> here (hansard export --replay-url does both)`,
      { sid },
    );
  }
  return stored;
}

/** Digest `seq` as stored, when the head has reached it. @throws AppError `digest_not_found` */
async function storedDigest(ctx: ServiceContext, sid: string, seq: number): Promise<BundleHead> {
  const missing = () =>
    new AppError(
      'digest_not_found',
      `session ${sid} has no digest ${seq}: POST /v1/sessions/${sid}/digests writes one and answers its seq`,
      { sid, seq },
    );
  // A digest past the head is one a crashed writer left (not yet adopted): not part of the chain yet.
  const head = await ctx.state.getDigestHead(ctx.tenant, sid);
  if (!head || head.seq < seq) throw missing();
  const bytes = await (ctx.digests ?? MISSING_DIGEST_STORE).getDigest(ctx.tenant, sid, seq);
  if (!bytes) throw missing();
  let digest: SignedDigest;
  try {
    digest = SignedDigest.parse(JSON.parse(new TextDecoder().decode(bytes)));
  } catch (err) {
    throw new AppError(
      'storage_layout',
      `digest ${seq} of session ${sid} is stored but is not a valid digest record, see docs/operations.md`,
      { sid, seq },
      { cause: err },
    );
  }
  return { seq: digest.seq, sha256: digestHash(digest), writers: digest.writers };
}
