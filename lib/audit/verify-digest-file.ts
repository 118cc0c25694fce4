/**
 * Pieces of the offline verifier (issue 15.3, DESIGN §6b) about single digest files and the seqs they
 * cover, split from verify-bundle.ts: that a file is exactly the bytes the service stored (its RFC 8785
 * canonical JSON, nothing unsigned in it), which seqs are missing (as ranges, so the work is bounded by
 * the files present, not by the numbers a bundle claims), and when a key was retired.
 */
import { canonicalJson } from './chain.js';
import type { SignedDigest } from './schemas.js';

/**
 * Why a digest file is not the digest as the service stored it (`canonicalJson(signedDigest)`, no
 * trailing newline: lib/service/digests/write.ts), or null when it is. `raw` is `JSON.parse(bytes)`, `parsed`
 * what `SignedDigest` made of it: a field the schema does not know is dropped by the parse, so it is
 * not signed; duplicate keys (JSON.parse keeps the last), `1.0`, escapes or spacing make the bytes
 * differ from the canonical form, so readers of other kinds could read another digest from them.
 */
export function digestFileProblem(bytes: Uint8Array, raw: unknown, parsed: SignedDigest): string | null {
  const extra = unknownFields(raw, parsed, '');
  if (extra.length > 0) {
    const shown = extra.slice(0, 5).join(', ') + (extra.length > 5 ? `, … (${extra.length} in all)` : '');
    return `it holds field${extra.length === 1 ? '' : 's'} no digest has, which the signature does not cover: ${shown}`;
  }
  if (!Buffer.from(canonicalJson(raw), 'utf8').equals(Buffer.from(bytes))) {
    return 'its bytes are not its canonical JSON (RFC 8785), as the service stores a digest: a duplicate key, a number such as 1.0, an escape or spacing was changed';
  }
  return null;
}

/** The paths of the keys of `raw` that `parsed` (its schema parse) dropped, depth first. */
function unknownFields(raw: unknown, parsed: unknown, at: string): string[] {
  if (Array.isArray(raw) && Array.isArray(parsed))
    return raw.flatMap((r, i) => unknownFields(r, parsed[i], `${at}[${i}]`));
  if (raw === null || parsed === null || typeof raw !== 'object' || typeof parsed !== 'object') return [];
  const out: string[] = [];
  for (const [k, v] of Object.entries(raw)) {
    const path = at === '' ? k : `${at}.${k}`;
    if (!Object.hasOwn(parsed, k)) out.push(path);
    else out.push(...unknownFields(v, (parsed as Record<string, unknown>)[k], path));
  }
  return out;
}

/**
 * The seqs missing from 1 to max(`head`, the largest of `present`), as inclusive ranges `[from, to]`
 * in ascending order: one per gap, so a claimed head of 2^53-1 costs one range, not 2^53 findings.
 * Time and memory are proportional to `present.length`.
 */
export function missingRanges(present: Iterable<number>, head: number): Array<[number, number]> {
  const seqs = [...present].sort((a, b) => a - b);
  const out: Array<[number, number]> = [];
  let next = 1; // the first seq not yet accounted for
  for (const s of seqs) {
    if (s > next) out.push([next, s - 1]);
    next = Math.max(next, s + 1);
  }
  if (head >= next) out.push([next, head]);
  return out;
}

/** A key the verifier trusts: its SPKI PEM and, once rotated out, when (`PublicKeyInfo.retired_at`). */
export interface TrustedKey {
  pem: string;
  retired_at: string | null;
}

/** True when `d` is dated after its key was retired: a retired key signs nothing new. */
export function signedAfterRetirement(d: SignedDigest, key: TrustedKey): boolean {
  return key.retired_at !== null && Date.parse(d.at) > Date.parse(key.retired_at);
}
