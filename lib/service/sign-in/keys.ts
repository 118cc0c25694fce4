/**
 * The board's cookie keys (issue 29 item 3: "keys rotated without signing everyone out"). Time is cut into
 * periods (`SignInConfig.keyPeriodSeconds`, a day by default); each period has its own 256-bit key, made
 * by the first process that needs it and kept as a server secret (`ServerSecrets.serverSecret`: the first
 * write wins, so every process and Lambda container gets the same key), sealed by the deployment's sealer
 * (AES-GCM under a key file locally, KMS on AWS) so that the state store alone never holds a usable key.
 *
 * A cookie is sealed under the current period's key and opens under it or the previous one; a session is
 * renewed (sealed anew under the current key) at least every `renewAfterSeconds`, far less than a period,
 * so rotation signs nobody out, and a key older than two periods opens nothing. Opened keys are kept in
 * memory per state store (a Lambda container opens each once).
 */
import { randomBytes } from 'node:crypto';
import type { ServerSecrets } from '../../store/index.js';
import type { SecretSealer } from '../alerts/deps.js';

/** The sealer's "tenant" for cookie keys: not a tenant name (they never hold `#`), so no tenant's secret opens as one. */
export const KEY_SEAL_CONTEXT = '#board-cookie-keys';
/** The server secret's name of period `n`'s key. */
const secretName = (period: number) => `board-cookie-key/${period}`;

/** A cookie key: its id (the period, in decimal) and its 32 bytes. */
export interface CookieKey {
  kid: string;
  key: Uint8Array;
}

/** What the keys are made and kept with. */
export interface KeyDeps {
  state: ServerSecrets;
  sealer: SecretSealer;
  /** seconds a key is current */
  periodSeconds: number;
}

const opened = new WeakMap<ServerSecrets, Map<number, Promise<Uint8Array>>>();

/** The period `at` falls in. */
export function periodOf(at: Date, periodSeconds: number): number {
  return Math.floor(at.getTime() / 1000 / periodSeconds);
}

/**
 * The key cookies are sealed with at `at`: the current period's, made and stored when this is its first use.
 * @throws what the state store or the sealer throw (a storage fault, KMS refusing): the caller answers 5xx
 */
export async function currentKey(deps: KeyDeps, at: Date): Promise<CookieKey> {
  const period = periodOf(at, deps.periodSeconds);
  return { kid: String(period), key: await periodKey(deps, period) };
}

/**
 * The key with id `kid` if a cookie sealed with it may still open at `at` (the current or the previous
 * period's), else null (an old, future or malformed id: the cookie is refused without a store read).
 */
export async function keyFor(deps: KeyDeps, kid: unknown, at: Date): Promise<Uint8Array | null> {
  if (typeof kid !== 'string' || !/^\d{1,12}$/.test(kid)) return null;
  const period = Number(kid);
  const now = periodOf(at, deps.periodSeconds);
  if (period !== now && period !== now - 1) return null;
  return periodKey(deps, period);
}

function periodKey(deps: KeyDeps, period: number): Promise<Uint8Array> {
  let byPeriod = opened.get(deps.state);
  if (!byPeriod) {
    byPeriod = new Map();
    opened.set(deps.state, byPeriod);
  }
  const hit = byPeriod.get(period);
  if (hit) return hit;
  const made = makeOrRead(deps, period);
  byPeriod.set(period, made);
  // A failure is not kept (the next request tries again); only recent periods are.
  made.catch(() => byPeriod.delete(period));
  for (const p of byPeriod.keys()) if (p < period - 2) byPeriod.delete(p);
  return made;
}

async function makeOrRead(deps: KeyDeps, period: number): Promise<Uint8Array> {
  const candidate = await deps.sealer.seal(KEY_SEAL_CONTEXT, randomBytes(32).toString('base64url'));
  const stored = await deps.state.serverSecret(secretName(period), candidate);
  const key = Buffer.from(await deps.sealer.open(KEY_SEAL_CONTEXT, stored), 'base64url');
  if (key.length !== 32) throw new Error(`the stored cookie key of period ${period} is not 32 bytes`);
  return new Uint8Array(key);
}
