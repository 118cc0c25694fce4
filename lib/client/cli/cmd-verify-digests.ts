/**
 * `hansard verify --digests FILE|DIR [--public-key KEY]... [--at ISO] [--sid SID] [--tenant T]
 * [--max-bytes N] [--max-entries N] [--json]` (issue 15.3, DESIGN §6b):
 * checks an export bundle offline with lib/audit/verify-bundle.ts. Exit 0 when no finding is an error
 * (warnings allowed), 1 when any is, 2 when the bundle or a key cannot be read or --sid comes without
 * --tenant (sids are client-chosen, unique only within a tenant: docs/audit.md "Verify").
 */
import { readFileSync } from 'node:fs';
import { readFile } from 'node:fs/promises';
import { join, resolve } from 'node:path';
import { BundleError, type ExtractLimits, openBundle } from '../../audit/bundle.js';
import { keyIdOf } from '../../audit/chain.js';
import { KeysAnswer, PublicKeyInfo } from '../../audit/schemas.js';
import { verifyBundle } from '../../audit/verify-bundle.js';
import { PRIVATE_PEM } from '../../audit/verify-keys.js';
import { escapeControl } from '../../log/format/escape.js';
import { ExitError, UsageError } from '../api/errors.js';
import { type Io, printJson } from '../api/io.js';
import { reportHints, reportLines } from './verify-digests-text.js';

/** What `hansard verify --help` says about --digests: what is checked, and an example. */
export const VERIFY_DIGESTS_HELP = `
Verifying an export bundle offline (--digests):
  hansard export s_… --out s.tar.gz                      on a machine that can reach the server
  curl -s $HANSARD_URL/v1/keys > keys.json               the deployment's public keys, from a source you trust
  hansard verify --digests s.tar.gz --public-key keys.json --tenant T --sid s_…

  Checked, with no server: every digest's Ed25519 signature by a key you trust; the chain (each digest
  holds the previous one's hash and signature) and the seqs from 1 without a gap; the cadence (a digest
  missing by its predecessor's next_due); each writer's chunks and chained digest; and every chunk's
  SHA-256 in the segment files: a chunk modified, deleted, inserted, reordered or truncated, and bytes
  no digest attests, are named by writer, byte offset, line and digest seq.
  FILE is a .tar or .tar.gz bundle, or DIR the extracted bundle. --public-key takes a PEM file, the JSON
  of GET /v1/keys, or one key's JSON, and can be repeated; a file with no public key, a private key or a
  key_id that is not its key's is refused (exit 2); without --public-key the bundle's own keys are used
  (a warning: whoever altered the bundle could have replaced them). --at ISO (with Z or an offset)
  checks the cadence as of that time (default: the export's time). --tenant T --sid SID names the
  session you asked for: a bundle of another is an error (bundle_other_session); --sid needs --tenant
  (session ids are unique only within a tenant; exit 2 without it); the closing line names the
  bundle's session and tenant. A .tar/.tar.gz is extracted to a temporary directory, at
  most 100× a .tar.gz's size and 64 GiB (--max-bytes 200GiB or HANSARD_VERIFY_MAX_BYTES to raise it)
  and 1,000,000 entries (--max-entries). Exit 0 verified (warnings allowed), 1 not verified, 2 the
  bundle or a key cannot be read.`;

/**
 * Reads the keys of one --public-key file: a PEM (answered as the PEM string), `{keys: [...]}` (GET
 * /v1/keys) or one PublicKeyInfo (answered as the records, so each key's `retired_at` is kept: the
 * verifier refuses a digest a key signed after it). A relative `path` is read from `cwd`, named as given.
 * @throws UsageError when the file is unreadable, empty, holds no public key (`{"keys":[]}` included:
 *   a key file given must never fall back to the bundle's keys), holds a private key (never quoted),
 *   or labels a key with a `key_id` that is not its fingerprint
 */
export function readTrustedKeys(path: string, cwd = '.'): Array<PublicKeyInfo | string> {
  let text: string;
  try {
    text = readFileSync(resolve(cwd, path), 'utf8');
  } catch (err) {
    throw new UsageError(
      `cannot read the public key ${path}: ${(err as NodeJS.ErrnoException).code ?? (err as Error).message}`,
    );
  }
  if (text.trim() === '')
    throw new UsageError(`${path} is empty: pass the deployment's public keys (GET /v1/keys)`);
  // checked on the raw text first: a private key inside JSON is refused just the same
  if (PRIVATE_PEM.test(text))
    throw new UsageError(`${path} holds a private key: pass the public key (GET /v1/keys)`);
  let keys: Array<PublicKeyInfo | string>;
  if (!text.trimStart().startsWith('{') && text.includes('-----BEGIN')) keys = [text];
  else {
    let json: unknown;
    try {
      json = JSON.parse(text);
    } catch {
      throw new UsageError(
        `${path} is neither a PEM public key nor JSON (GET /v1/keys, or one key's record)`,
      );
    }
    const many = KeysAnswer.safeParse(json);
    const one = PublicKeyInfo.safeParse(json);
    if (many.success) keys = many.data.keys;
    else if (one.success) keys = [one.data];
    else
      throw new UsageError(
        `${path} is JSON but neither GET /v1/keys' answer ({"keys":[…]}) nor one key's record`,
      );
  }
  if (keys.length === 0)
    throw new UsageError(`no public key in ${path}: pass the deployment's keys (GET /v1/keys)`);
  for (const k of keys) {
    let id: string;
    try {
      id = keyIdOf(typeof k === 'string' ? k : k.public_key);
    } catch {
      throw new UsageError(`${path} holds something that is not a public key`);
    }
    // Refused, not warned: ids are fingerprints, so GET /v1/keys never answers a mismatch; one means
    // the trust file was edited or mixed up, and findings would name a key by a label that is not it.
    if (typeof k !== 'string' && k.key_id !== id)
      throw new UsageError(
        `${path} labels a key ${k.key_id}, but that key's fingerprint is ${id}: the file was edited or mixed up; fetch the keys again (GET /v1/keys)`,
      );
  }
  return keys;
}

const UNITS: Record<string, number> = { '': 1, b: 1, k: 1024, kib: 1024, m: 1024 ** 2, mib: 1024 ** 2 };
UNITS.g = UNITS.gib = 1024 ** 3;
UNITS.t = UNITS.tib = 1024 ** 4;

/**
 * A byte count as --max-bytes takes it: a whole number, optionally with a binary unit (K/KiB, M/MiB,
 * G/GiB, T/TiB; case-insensitive), e.g. `200GiB`.
 * @throws UsageError naming `what` when it is not one
 */
export function parseByteCount(text: string, what: string): number {
  const m = /^\s*(\d+)\s*([a-z]*)\s*$/i.exec(text);
  const unit = m ? UNITS[m[2]!.toLowerCase()] : undefined;
  const n = m && unit !== undefined ? Number(m[1]) * unit : Number.NaN;
  if (!Number.isSafeInteger(n) || n < 1)
    throw new UsageError(`${what} ${text} is not a size in bytes (e.g. 200GiB, 500M or 1073741824)`);
  return n;
}

/**
 * Runs the check and prints it (stdout: the findings and the verdict, or the report with --json; stderr:
 * what to do next when not verified); throws ExitError(1) when not verified, UsageError (2) when unreadable.
 */
export async function verifyDigests(
  io: Io,
  path: string,
  o: {
    publicKey?: string[];
    at?: string;
    json?: boolean;
    maxBytes?: string;
    maxEntries?: string;
    sid?: string;
    tenant?: string;
  },
): Promise<void> {
  // undefined when none is passed (the bundle's keys, with a warning); never [] from a file given
  const trustedKeys = o.publicKey?.flatMap((p) => readTrustedKeys(p, io.cwd));
  let at: Date | undefined;
  if (o.at !== undefined) {
    at = new Date(o.at);
    if (!/^\d{4}-\d\d-\d\dT/.test(o.at) || Number.isNaN(at.getTime())) {
      throw new UsageError(`--at ${o.at} is not an ISO time (e.g. 2026-12-01T06:00:00Z)`);
    }
    // without an offset Date reads it in this machine's time zone: an auditor elsewhere gets another time
    if (!/(Z|[+-]\d\d:?\d\d)$/i.test(o.at)) {
      throw new UsageError(
        `--at ${o.at} has no time zone: add Z for UTC (e.g. ${o.at}Z) or the offset it was taken in (e.g. +01:00)`,
      );
    }
  }
  const limits: ExtractLimits = {};
  const maxBytes = o.maxBytes ?? io.env.HANSARD_VERIFY_MAX_BYTES;
  if (maxBytes !== undefined && maxBytes !== '')
    limits.maxBytes = parseByteCount(
      maxBytes,
      o.maxBytes !== undefined ? '--max-bytes' : 'HANSARD_VERIFY_MAX_BYTES',
    );
  if (o.maxEntries !== undefined) {
    if (!/^\d+$/.test(o.maxEntries) || Number(o.maxEntries) < 1)
      throw new UsageError(`--max-entries ${o.maxEntries} is not a whole number from 1`);
    limits.maxEntries = Number(o.maxEntries);
  }
  let bundle: Awaited<ReturnType<typeof openBundle>>;
  try {
    bundle = await openBundle(path, limits);
  } catch (err) {
    if (err instanceof BundleError) throw new UsageError(err.message);
    throw err;
  }
  let report: Awaited<ReturnType<typeof verifyBundle>>;
  try {
    // Session ids are chosen by the uploader, so another tenant of the deployment can hold a session
    // under the same sid, signed by the same key: a sid alone names no one session (issue 15 attack 2).
    if (o.sid !== undefined && o.tenant === undefined) {
      const claimed = await claimedTenant(bundle.root);
      throw new UsageError(
        `--sid needs --tenant: session ids are unique only within a tenant, and another tenant's session can carry the same id; pass --tenant with the tenant whose session you asked for${claimed !== null ? ` (the bundle says it is of tenant ${claimed})` : ''}`,
      );
    }
    const expect =
      o.tenant !== undefined
        ? { tenant: o.tenant, ...(o.sid !== undefined ? { sid: o.sid } : {}) }
        : undefined;
    report = await verifyBundle(bundle, {
      ...(trustedKeys ? { trustedKeys } : {}),
      ...(expect ? { expect } : {}),
      ...(at ? { at } : {}),
    });
  } finally {
    await bundle.close();
  }
  if (o.json) printJson(io, report);
  else for (const line of reportLines(report)) io.stdout.write(`${line}\n`);
  for (const hint of reportHints(report)) io.stderr.write(`${hint}\n`);
  if (!report.ok) throw new ExitError(1);
}

/** The tenant a bundle's manifest.json states (unverified: only quoted to the auditor), or null. */
async function claimedTenant(root: string): Promise<string | null> {
  try {
    const m: unknown = JSON.parse(await readFile(join(root, 'manifest.json'), 'utf8'));
    const t = (m as { tenant?: unknown } | null)?.tenant;
    // a bundle is untrusted input: quoted escaped, and only when it looks like a name
    return typeof t === 'string' && t.length <= 200 ? escapeControl(t) : null;
  } catch {
    return null;
  }
}
