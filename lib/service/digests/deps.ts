/**
 * What writing a signed session digest needs (issue 15.2), and how a route gets it: `digestDeps(ctx)`
 * from the request's `ServiceContext` (createApp puts the deployment's `digests`, `signer` and `audit` on
 * it), the digester loop and the scheduled function build one from their stores.
 */
import type { DigestSigner } from '../../audit/signer.js';
import type {
  DigestIndex,
  DigestStore,
  IdempotencyStore,
  SessionIndex,
  WriterStore,
} from '../../store/index.js';
import type { AuditConfig } from '../shared/audit-config.js';
import type { ServiceContext } from '../shared/context.js';
import { AppError } from '../shared/errors.js';

/** The stores, the signer, the clock and the cadence of `writeDigest` / `writeDueDigests`. */
export interface DigestDeps {
  /**
   * the digest heads and due marks, the sessions' bytes and the writers' chunk records; claimed keys for
   * a broken chain's `record.damaged` alert (issue 28)
   */
  state: DigestIndex & SessionIndex & WriterStore & IdempotencyStore;
  digests: DigestStore;
  signer: DigestSigner;
  now: () => Date;
  /** the cadence; what it leaves out takes `DEFAULT_AUDIT` */
  audit?: Partial<AuditConfig> | undefined;
  /** where `writeDueDigests` reports a session it could not attest (one line, no stack); default stderr */
  log?: ((line: string) => void) | undefined;
}

/**
 * The digest dependencies of a request (for `writeDigest` from a route, e.g. the export).
 * @throws AppError `digests_unavailable` (503) when the deployment was started without a digest store or
 *   a signer
 */
export function digestDeps(ctx: ServiceContext): DigestDeps {
  if (!ctx.digests || !ctx.signer) throw unavailable();
  return { state: ctx.state, digests: ctx.digests, signer: ctx.signer, now: ctx.now, audit: ctx.audit };
}

function unavailable(): AppError {
  return new AppError(
    'digests_unavailable',
    'this deployment keeps no signed digests (it was started without a digest store or a signing key): ask the operator',
  );
}

/** A digest store for an app built without one: every use answers 503 `digests_unavailable`. */
export const MISSING_DIGEST_STORE: DigestStore = {
  putDigest: () => Promise.reject(unavailable()),
  getDigest: () => Promise.reject(unavailable()),
  listDigests: () => Promise.reject(unavailable()),
};

/** A signer for an app built without one: every use answers 503 `digests_unavailable`. */
export const MISSING_SIGNER: DigestSigner = {
  current: () => Promise.reject(unavailable()),
  publicKeys: () => Promise.reject(unavailable()),
};
