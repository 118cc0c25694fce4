/**
 * The board's sealed cookies (issue 29 item 3: "a signed, encrypted cookie", no server-side store): a JWE
 * in compact form (`jose`), `dir` + `A256GCM` under a cookie key of ./keys.ts. AES-GCM is authenticated
 * encryption: a cookie nobody with the key made fails to open, so it is signed and encrypted at once. The
 * protected header (authenticated too) names the key (`kid`) and what the cookie is for (`typ`: `session`
 * or `flow`), so a sign-in flow's cookie never opens as a session.
 *
 * Payloads are checked with zod after opening: a cookie from an older build that does not match is
 * treated as absent (signed out), never half-read.
 */
import { CompactEncrypt, compactDecrypt, decodeProtectedHeader } from 'jose';
import { z } from 'zod';
import { EmailAddress } from '../../contract/sign-in.js';
import { currentKey, type KeyDeps, keyFor } from './keys.js';

/** The session cookie's name (the link-token cookie is `hansard_board`, lib/http/auth.ts). */
export const SESSION_COOKIE = 'hansard_session';
/** The sign-in flow's cookie: state, nonce and PKCE verifier between /login/oidc and its callback. */
export const FLOW_COOKIE = 'hansard_oidc_flow';

/** Longest cookie value set, in characters: browsers keep at least 4,096 bytes per cookie with its name. */
export const MAX_COOKIE_CHARS = 3800;
/** Most bytes of group names a session keeps (JSON): a person in hundreds of groups keeps those that matter. */
export const GROUPS_BUDGET = 1500;

/** A signed-in browser's session (what the cookie holds; times in seconds since the epoch). */
export const SessionClaims = z.strictObject({
  v: z.literal(1),
  /** the session's id: 16 random bytes, base64url; secret (keys the board's form tokens) */
  sid: z.string().regex(/^[A-Za-z0-9_-]{22}$/),
  tenant: z.string().min(1).max(63),
  /** the tenant's sign-in settings' `generation` it was made under: settings removed or moved end it */
  gen: z.string().max(64),
  /** the provider's issuer and the person's subject there: who signed in */
  iss: z.string().max(512),
  sub: z.string().min(1).max(255),
  email: EmailAddress,
  name: z.string().max(200).nullable(),
  /** the groups the provider named at sign-in (cut to `GROUPS_BUDGET`: those the role map names first) */
  groups: z.array(z.string().max(256)).max(200),
  /** when they signed in at the provider */
  auth_time: z.int(),
  /** when this cookie was issued (sign-in or renewal) */
  iat: z.int(),
  /** when it stops opening, unless renewed before */
  exp: z.int(),
});
export type SessionClaims = z.infer<typeof SessionClaims>;

/** A sign-in under way (the flow cookie; ten minutes). */
export const FlowClaims = z.strictObject({
  v: z.literal(1),
  tenant: z.string().min(1).max(63),
  /** the issuer and client the flow began with: a callback after the settings changed starts again */
  iss: z.string().max(512),
  client_id: z.string().max(256),
  state: z.string().max(128),
  nonce: z.string().max(128),
  verifier: z.string().max(128),
  /** the board path to go back to (checked by `safeNext` before it was put here) */
  next: z.string().max(2048),
  exp: z.int(),
});
export type FlowClaims = z.infer<typeof FlowClaims>;

type Purpose = 'session' | 'flow';
const SCHEMAS = { session: SessionClaims, flow: FlowClaims } as const;

/**
 * `claims` sealed for `purpose` under the key current at `now`.
 * @throws Error when the sealed cookie would be longer than `MAX_COOKIE_CHARS` (the caller keeps claims small)
 * @throws what ./keys.ts throws (the key could not be made or read)
 */
export async function sealCookie(
  deps: KeyDeps,
  purpose: Purpose,
  claims: SessionClaims | FlowClaims,
  now: Date,
): Promise<string> {
  const { kid, key } = await currentKey(deps, now);
  const jwe = await new CompactEncrypt(new TextEncoder().encode(JSON.stringify(claims)))
    .setProtectedHeader({ alg: 'dir', enc: 'A256GCM', kid, typ: purpose })
    .encrypt(key);
  if (jwe.length > MAX_COOKIE_CHARS)
    throw new Error(`a ${purpose} cookie of ${jwe.length} characters is too long`);
  return jwe;
}

/**
 * The claims of cookie `value` if it was sealed for `purpose` under a key that still opens at `now` and is
 * not expired (`exp` after `now`); else null (absent, altered, another purpose's, an old key's, expired,
 * or from a build with another shape). Never throws for a bad cookie.
 * @throws what ./keys.ts throws (the key could not be read: a storage or KMS fault, not the cookie's)
 */
export async function openCookie<P extends Purpose>(
  deps: KeyDeps,
  purpose: P,
  value: string | undefined,
  now: Date,
): Promise<z.infer<(typeof SCHEMAS)[P]> | null> {
  if (!value || value.length > MAX_COOKIE_CHARS) return null;
  let header: ReturnType<typeof decodeProtectedHeader>;
  try {
    header = decodeProtectedHeader(value);
  } catch {
    return null;
  }
  if (header.typ !== purpose || header.alg !== 'dir' || header.enc !== 'A256GCM') return null;
  const key = await keyFor(deps, header.kid, now);
  if (!key) return null;
  let plain: Uint8Array;
  try {
    ({ plaintext: plain } = await compactDecrypt(value, key, {
      keyManagementAlgorithms: ['dir'],
      contentEncryptionAlgorithms: ['A256GCM'],
    }));
  } catch {
    return null;
  }
  let json: unknown;
  try {
    json = JSON.parse(new TextDecoder().decode(plain));
  } catch {
    return null;
  }
  const parsed = SCHEMAS[purpose].safeParse(json);
  if (!parsed.success) return null;
  if (parsed.data.exp * 1000 <= now.getTime()) return null;
  return parsed.data as z.infer<(typeof SCHEMAS)[P]>;
}

/**
 * The groups a session keeps of `groups`: those `mapped` names first (they decide the role), then the
 * rest, while their JSON fits `GROUPS_BUDGET` bytes. Keeping the unmapped ones too lets a role map
 * changed later apply at the next request without signing in again, as far as they fit.
 */
export function keptGroups(groups: readonly string[], mapped: ReadonlySet<string>): string[] {
  const ordered = [...groups.filter((g) => mapped.has(g)), ...groups.filter((g) => !mapped.has(g))];
  const kept: string[] = [];
  let bytes = 2;
  for (const g of ordered) {
    if (g.length > 256) continue;
    const cost = Buffer.byteLength(JSON.stringify(g)) + 1;
    if (bytes + cost > GROUPS_BUDGET || kept.length >= 200) break;
    kept.push(g);
    bytes += cost;
  }
  return kept;
}
