/**
 * Targets' signing secrets (issue 28 item 3): `whsec_` + base64 of 32 random bytes, as the Standard
 * Webhooks specification describes (24 to 64 bytes). Made when a target is added and at each rotation,
 * answered once, stored sealed (deps.ts `SecretSealer`). After a rotation the previous secret signs too
 * until its grace ends, so a receiver can switch at its own pace: every delivery meanwhile carries both
 * signatures.
 */
import { randomBytes } from 'node:crypto';
import type { AlertTarget, SealedSecret } from '../../store/index.js';
import type { SecretSealer } from './deps.js';

/** A rotation's default grace: the previous secret signs for a day more. */
export const DEFAULT_GRACE_SECONDS = 86_400;

/** A new secret, in the clear. */
export function newSecret(): string {
  return `whsec_${randomBytes(32).toString('base64')}`;
}

/** The secrets that sign now, in the clear: the current one, then the previous while its grace lasts. */
export async function openSecrets(sealer: SecretSealer, target: AlertTarget, now: Date): Promise<string[]> {
  const live = target.secrets.filter((s) => s.until === null || Date.parse(s.until) > now.getTime());
  return Promise.all(live.map((s) => sealer.open(target.tenant, s.sealed)));
}

/**
 * The secrets of a rotation: `fresh` sealed as the current one, the current one kept until `now + grace`
 * (an older previous one goes).
 */
export async function rotated(
  sealer: SecretSealer,
  target: AlertTarget,
  fresh: string,
  now: Date,
  graceSeconds: number,
): Promise<SealedSecret[]> {
  const current = target.secrets.find((s) => s.until === null) ?? target.secrets[0]!;
  const until = new Date(now.getTime() + graceSeconds * 1000).toISOString();
  const out: SealedSecret[] = [{ sealed: await sealer.seal(target.tenant, fresh), until: null }];
  if (graceSeconds > 0) out.push({ sealed: current.sealed, until });
  return out;
}
