/**
 * The audit digest contract (issue 15, DESIGN §6b): the signed session digest, the public keys, the
 * export bundle's manifest and the offline verifier's findings. CloudTrail's log file integrity
 * validation, made for sessions: each digest lists the chunks accepted since the previous one with their
 * SHA-256, holds the previous digest's hash and signature (a chain), and states when the next is due, so
 * a missing or altered digest, chunk or byte is visible to anyone holding the public key, offline.
 *
 * Every shape here is what goes over the wire and into a bundle; `format` strings version them.
 */
import { z } from 'zod';

/** The `format` of a digest record. */
export const DIGEST_FORMAT = 'hansard.digest.v1';
/** The `format` of a bundle's manifest. */
export const BUNDLE_FORMAT = 'hansard.bundle.v1';
/** The one signature algorithm: Ed25519 (RFC 8032), locally via node:crypto, on AWS a KMS key of spec
 * ECC_NIST_EDWARDS25519 with ED25519_SHA_512 over the raw message; both verify with node:crypto. */
export const SIGNATURE_ALGORITHM = 'ed25519';

const Hex64 = z.string().regex(/^[0-9a-f]{64}$/);
const Iso = z.iso.datetime({ offset: false, precision: 3 });
const Nat = z.int().min(0).max(Number.MAX_SAFE_INTEGER);

/** A key id: `k_` + the first 24 hex digits of the SHA-256 of the key's SPKI DER (`keyIdOf`). */
export const KeyId = z.string().regex(/^k_[0-9a-f]{24}$/);

/** One accepted chunk as a digest lists it. */
export const DigestChunk = z.object({
  w: z.string(),
  offset: Nat,
  length: z.int().min(1),
  sha256: Hex64,
});
export type DigestChunk = z.infer<typeof DigestChunk>;

/** A writer's state as of a digest: its indexed length and the chained digest of those bytes (`nextChain`). */
export const DigestWriter = z.object({
  w: z.string(),
  length: Nat,
  lines: Nat,
  /** chained digest of the chunks of [0, length): GENESIS_CHAIN for length 0 */
  chain: Hex64,
  ended: z.boolean(),
});
export type DigestWriter = z.infer<typeof DigestWriter>;

/** Why a digest was written. */
export const DigestReason = z.enum(['scheduled', 'writer_end', 'export']);
export type DigestReason = z.infer<typeof DigestReason>;

/** A digest record before it is signed: what `signingInput` covers. */
export const DigestRecord = z.object({
  format: z.literal(DIGEST_FORMAT),
  tenant: z.string(),
  sid: z.string(),
  /** 1 for the session's first digest, one more for each after: a gap is a missing digest */
  seq: z.int().min(1),
  /** when it was written (server clock) */
  at: Iso,
  reason: DigestReason,
  /**
   * when the next digest is due at the latest (`at` + the interval, doubled for each digest in a row
   * with no change, at most a day); null when the session is closed (every writer ended) and no digest
   * follows until something is added: a verifier that finds no digest by then reports one missing
   */
  next_due: Iso.nullable(),
  /** the previous digest (seq - 1): its `digestHash` and its signature; null for seq 1 */
  previous: z.object({ seq: z.int().min(1), sha256: Hex64, signature: z.string().min(1) }).nullable(),
  /** every chunk accepted since the previous digest, by writer then offset */
  chunks: z.array(DigestChunk),
  /** every writer of the session as of this digest, by writer id */
  writers: z.array(DigestWriter),
  key_id: KeyId,
  algorithm: z.literal(SIGNATURE_ALGORITHM),
});
export type DigestRecord = z.infer<typeof DigestRecord>;

/** A signed digest: the record and the base64 signature of its `signingInput`. Stored as `canonicalJson`. */
export const SignedDigest = DigestRecord.extend({ signature: z.string().min(1) });
export type SignedDigest = z.infer<typeof SignedDigest>;

/** A public key of the deployment (`GET /v1/keys`, a bundle's `keys/`). */
export const PublicKeyInfo = z.object({
  key_id: KeyId,
  algorithm: z.literal(SIGNATURE_ALGORITHM),
  /** SPKI, PEM */
  public_key: z.string().min(1),
  created_at: Iso,
  /** when it stopped signing (a rotation); it still verifies what it signed */
  retired_at: Iso.nullable(),
});
export type PublicKeyInfo = z.infer<typeof PublicKeyInfo>;

/** `GET /v1/keys`. */
export const KeysAnswer = z.object({ keys: z.array(PublicKeyInfo) });
export type KeysAnswer = z.infer<typeof KeysAnswer>;

/**
 * A bundle's `manifest.json` (`hansard export`): where everything is, unsigned. What it claims is checked
 * against the signed digests: `head` is the digest the export wrote, which covers every byte exported.
 */
export const BundleManifest = z.object({
  format: z.literal(BUNDLE_FORMAT),
  tenant: z.string(),
  sid: z.string(),
  exported_at: Iso,
  /** the digest written for this export: the newest, covering every segment byte in the bundle */
  head: z.object({ seq: z.int().min(1), sha256: Hex64 }),
  /** paths are relative to the bundle's root (`{sid}/` inside the tar) */
  digests: z.array(z.object({ seq: z.int().min(1), path: z.string(), sha256: Hex64 })),
  segments: z.array(z.object({ w: z.string(), path: z.string(), length: Nat, sha256: Hex64 })),
  keys: z.array(z.object({ key_id: KeyId, path: z.string() })),
});
export type BundleManifest = z.infer<typeof BundleManifest>;

/**
 * What `hansard verify --digests` reports (exit 1 when any finding is an error). Each names exactly what
 * happened, with the writer, byte offset, line and digest seq where they apply.
 */
export const AUDIT_FINDING_CODES = {
  chunk_modified:
    'error: bytes of an attested chunk differ from its SHA-256 (the message names the lines of the chunk and any change of length)',
  chunk_deleted: 'error: an attested chunk is gone and the bytes after it moved up',
  chunk_inserted: 'error: bytes no digest attests sit between attested chunks',
  chunks_reordered: "error: attested chunks are present but at each other's offsets",
  chunk_truncated: 'error: the segment ends inside or before an attested chunk',
  segment_missing: 'error: a writer a digest attests has no segment in the bundle',
  bytes_unattested: 'error: bytes after the last attested chunk of a writer (added after the head digest)',
  digest_missing: 'error: a digest seq is absent (a gap, or the head the manifest or cadence expects)',
  digest_bad_signature: "error: a digest's signature does not verify with its key",
  digest_unknown_key:
    'error: a digest is signed by a key that is not trusted (not given or not in the bundle)',
  digest_chain_broken: "error: a digest's `previous` does not match the digest before it",
  digest_invalid:
    'error: a digest file is not a valid digest record, or not its canonical JSON, or holds unsigned fields',
  digest_key_retired:
    "error: a digest is dated after its key's retired_at (GET /v1/keys): a retired key signs nothing new",
  bundle_other_session: 'error: the bundle is of another session or tenant than --sid / --tenant name',
  writer_chain_mismatch: "error: a writer's chained digest in a digest does not match its chunks",
  manifest_mismatch: 'error: the manifest disagrees with the files or the signed digests',
  key_mismatch: "error: a key file's id is not the fingerprint of its key",
  digest_late:
    "warning: a digest came after the previous one's next_due (the service was down, or a digest was withheld)",
  keys_from_bundle:
    'warning: the keys were taken from the bundle itself; pass --public-key with a key you trust',
  at_before_digest:
    'warning: --at is before the newest verified digest: the bundle cannot have been downloaded then; check the time',
} as const;
export type AuditFindingCode = keyof typeof AUDIT_FINDING_CODES;

/** One finding of the offline verifier. */
export const AuditFinding = z.object({
  severity: z.enum(['error', 'warning']),
  code: z.enum(Object.keys(AUDIT_FINDING_CODES) as [AuditFindingCode, ...AuditFindingCode[]]),
  message: z.string(),
  w: z.string().optional(),
  offset: z.int().optional(),
  length: z.int().optional(),
  /** 1-based line in the segment file where it starts */
  line: z.int().optional(),
  /**
   * 1-based line in the segment file (as it is) where the bytes it names end: with `line`, the range a
   * chunk finding covers, since a digest attests a chunk whole and cannot say which line in it changed.
   * Absent when none of them is in the file (a deleted chunk, a segment that ends before a chunk).
   */
  line_end: z.int().optional(),
  /** the digest seq concerned */
  seq: z.int().optional(),
});
export type AuditFinding = z.infer<typeof AuditFinding>;

/** The verifier's answer (`--json`). `ok` is true when no finding is an error. */
export const AuditReport = z.object({
  ok: z.boolean(),
  /** the tenant of the session the bundle attests (its manifest's, which its digests state) */
  tenant: z.string().nullable(),
  sid: z.string().nullable(),
  digests: z.int(),
  chunks: z.int(),
  bytes: z.int(),
  /** the newest verified digest's time: what the bundle proves the session was, as of when */
  as_of: Iso.nullable(),
  findings: z.array(AuditFinding),
});
export type AuditReport = z.infer<typeof AuditReport>;
