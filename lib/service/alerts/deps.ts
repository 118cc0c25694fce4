/**
 * What the alerts' service runs with (issue 28): the state store, the sealer of targets' secrets, the
 * clock, and the deployment's rules for target addresses. The local server (lib/deploy/local-serve.ts)
 * and the AWS delivery function (lib/deploy/aws-alerts.ts) build it.
 */
import type { SegmentStore, StateStore } from '../../store/index.js';

/**
 * Seals and opens targets' signing secrets (issue 28 item 6: stored encrypted, never in logs): AES-256-GCM
 * under a key file of the data directory locally (lib/deploy/local-sealer.ts), KMS on AWS
 * (lib/deploy/aws-sealer.ts). The tenant is bound to the sealed text (GCM's associated data, KMS's
 * encryption context), so one tenant's sealed secret never opens as another's.
 */
export interface SecretSealer {
  /** @returns an opaque string to store */
  seal(tenant: string, plain: string): Promise<string>;
  /** @throws when `sealed` was not sealed for `tenant` by this deployment's key */
  open(tenant: string, sealed: string): Promise<string>;
}

/** The deployment's settings for alerts. */
export interface AlertConfig {
  /**
   * Targets may be loopback, link-local or private addresses (`hansard serve --allow-private-alert-targets`;
   * tests). Off by default: such a target is refused when added and at every delivery.
   */
  allowPrivateTargets: boolean;
  /** the board's origin (`https://board.example.com`), for the links in events; null: relative paths */
  boardOrigin: string | null;
  /** one attempt's time limit, ms (default 10,000) */
  timeoutMs: number;
  /** how long a delivery is retried before its dead letter, ms (default a day) */
  retryForMs: number;
}

export const DEFAULT_ALERT_CONFIG: AlertConfig = {
  allowPrivateTargets: false,
  boardOrigin: null,
  timeoutMs: 10_000,
  retryForMs: 86_400_000,
};

/** What the alert service and worker run with. */
export interface AlertDeps {
  state: StateStore;
  /** the segments, read to check a report's claims against the transcript (`claim.unsupported`) */
  segments: SegmentStore;
  sealer: SecretSealer;
  now: () => Date;
  config: AlertConfig;
}
