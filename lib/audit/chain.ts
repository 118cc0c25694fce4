/**
 * The hashing rules of the audit digests (issue 15, DESIGN §6b): the chained digest of a writer's
 * segment, the canonical bytes and hash of a digest, and the message a signature covers. The verifier
 * and the service both use these functions, so what is signed and what is checked cannot drift apart.
 */
import { createHash, createPublicKey } from 'node:crypto';
import canonicalizeModule from 'canonicalize';
import type { DigestRecord, SignedDigest } from './schemas.js';

// The package is CommonJS (`module.exports = serialize`) but its types declare an ES default export.
const canonicalize = canonicalizeModule as unknown as (input: unknown) => string | undefined;

/** The chained digest of an empty segment (no chunk yet). */
export const GENESIS_CHAIN = '0'.repeat(64);

/**
 * The chained digest after one more chunk: SHA-256 (hex) of `"{prev} {offset} {length} {sha256}"`.
 * Each chunk's hash is chained to the previous, so the writer's index holds one value that commits to
 * every chunk's bytes, position and order.
 * @param prev the chain before the chunk (GENESIS_CHAIN for the first)
 */
export function nextChain(prev: string, offset: number, length: number, sha256: string): string {
  return createHash('sha256').update(`${prev} ${offset} ${length} ${sha256}`).digest('hex');
}

/**
 * RFC 8785 (JCS) canonical JSON of `value`: what a digest is stored as and hashed over, so a verifier
 * that re-parses and re-serialises gets the same bytes.
 * @throws TypeError for a value JSON cannot hold
 */
export function canonicalJson(value: unknown): string {
  const s = canonicalize(value);
  if (s === undefined) throw new TypeError('value cannot be serialised as JSON');
  return s;
}

/**
 * The message a digest's signature covers: `"hansard.digest.v1\n" + SHA-256 hex of the canonical record
 * (without `signature`) + "\n"`, 83 ASCII bytes: short enough for KMS's RAW message type (4,096 bytes).
 */
export function signingInput(record: DigestRecord): Buffer {
  const { signature: _drop, ...rest } = record as DigestRecord & { signature?: string };
  const h = createHash('sha256').update(canonicalJson(rest)).digest('hex');
  return Buffer.from(`${rest.format}\n${h}\n`, 'ascii');
}

/** A signed digest's hash (hex): SHA-256 of its canonical JSON, signature included (`previous.sha256`). */
export function digestHash(digest: SignedDigest): string {
  return createHash('sha256').update(canonicalJson(digest)).digest('hex');
}

/**
 * A public key's id: `k_` + the first 24 hex digits of SHA-256 of its SPKI DER, so an id names exactly
 * one key and a verifier can check a key file against its id.
 * @param publicKey SPKI PEM (or a KeyObject-compatible input)
 * @throws TypeError when it is not a public key
 */
export function keyIdOf(publicKey: string): string {
  const der = createPublicKey(publicKey).export({ type: 'spki', format: 'der' });
  return `k_${createHash('sha256').update(der).digest('hex').slice(0, 24)}`;
}
