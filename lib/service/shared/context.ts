/**
 * What every verb runs with (STYLE §1): the caller's tenant and token, the stores, and the clock.
 */
import type { DigestSigner } from '../../audit/signer.js';
import type { Limits } from '../../contract/limits.js';
import type { Scope } from '../../contract/scopes.js';
import type { DigestStore, SegmentStore, StateStore, TokenRecord } from '../../store/index.js';
import type { AlertConfig, SecretSealer } from '../alerts/deps.js';
import type { SearchDeps } from '../search/deps.js';
import type { SignedInPerson, SignInServiceDeps } from '../sign-in/deps.js';
import type { AuditConfig } from './audit-config.js';
import { AppError, notFound } from './errors.js';
import type { LargeReplays } from './replay-ports.js';

export interface ServiceDeps {
  segments: SegmentStore;
  state: StateStore;
  /** the clock; tests fix it */
  now?: () => Date;
  /** the deployment's limits; what it leaves out takes `DEFAULT_LIMITS` */
  limits?: Partial<Limits>;
  /** the signed session digests (issue 15.2); without it a digest write answers 503 `digests_unavailable` */
  digests?: DigestStore;
  /** the deployment's signing key(s) (lib/audit/local-keyring.ts, kms-signer.ts); as `digests` */
  signer?: DigestSigner;
  /** the digest cadence; what it leaves out takes `DEFAULT_AUDIT` (lib/service/shared/audit-config.ts) */
  audit?: Partial<AuditConfig>;
  /** replays of sessions over a size answered with a stored copy (issue 17.2); none: every size streams */
  largeReplays?: LargeReplays | null;
  /** alert targets' sealer and the deployment's alert rules (issue 28); none: `/v1/alerts` answers 503 */
  alerts?: AlertServiceDeps | null;
  /** team sign-in's sealer and settings (issue 29); none: OIDC sign-in answers 503, link tokens still work */
  signIn?: SignInServiceDeps | null;
  /** the search engine and the local indexing queue (issue 30); none: `/v1/search` answers 503 */
  search?: SearchDeps | null;
}

/** What the alert verbs need beyond the stores (issue 28; lib/service/alerts/deps.ts). */
export interface AlertServiceDeps {
  sealer: SecretSealer;
  config: AlertConfig;
}

export interface ServiceContext {
  tenant: string;
  caller: TokenRecord;
  segments: SegmentStore;
  state: StateStore;
  now: () => Date;
  /** the deployment's limits (`resolveLimits` fills in the defaults) */
  limits?: Partial<Limits>;
  /** the signed digests, the signer and their cadence (`ServiceDeps`); `digestDeps(ctx)` reads them */
  digests?: DigestStore;
  signer?: DigestSigner;
  audit?: Partial<AuditConfig>;
  /** as `ServiceDeps.largeReplays` */
  largeReplays?: LargeReplays | null;
  /** as `ServiceDeps.alerts` */
  alerts?: AlertServiceDeps | null;
  /** as `ServiceDeps.signIn` */
  signIn?: SignInServiceDeps | null;
  /** as `ServiceDeps.search` */
  search?: SearchDeps | null;
  /**
   * the person signed in (a board session from OIDC, issue 29); absent or null for a token. `caller` is
   * then the person's stand-in token record: their role's scopes, never bound to a session.
   */
  person?: SignedInPerson | null;
}

/**
 * @throws AppError `forbidden` unless the caller has one of `scopes` (`admin` is not a superset); its
 *   details name the scopes `required` and the ones the caller's own token `has`, so a client can say
 *   which token to use instead
 */
export function requireScope(ctx: ServiceContext, ...scopes: Scope[]): void {
  if (!scopes.some((s) => ctx.caller.scopes.includes(s))) {
    const has = ctx.caller.scopes;
    throw new AppError(
      'forbidden',
      `this token lacks the ${scopes.join(' or ')} scope (it has ${has.join(', ') || 'none'}): use a token with ${scopes.join(' or ')}`,
      { required: scopes, has },
    );
  }
}

/**
 * A session-bound token may touch only its own session; for any other it answers as if the session did
 * not exist, so a harness token cannot probe which sessions exist.
 * @throws AppError `not_found`
 */
export function requireSessionAccess(ctx: ServiceContext, sid: string): void {
  if (ctx.caller.session !== null && ctx.caller.session !== sid) throw notFound('session');
}

export function isoNow(ctx: { now: () => Date }): string {
  return ctx.now().toISOString();
}
