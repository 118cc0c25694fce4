/**
 * The offline verifier (issue 15.3, DESIGN §6b): checks an export bundle with nothing but the bundle and
 * the keys the auditor trusts. Every digest's signature and the chain of `previous`, the seqs (a gap is a
 * missing digest) and the cadence (`next_due`), every writer's chunks tiling its segment with the chain
 * each digest states, and every chunk's bytes in the segment files (locate-chunks.ts). The manifest is
 * unsigned: it is only checked against the files and the signed digests.
 */
import { createHash } from 'node:crypto';
import { createReadStream } from 'node:fs';
import { readFile, stat } from 'node:fs/promises';
import { join } from 'node:path';
import { digestPath, type OpenedBundle, openBundle } from './bundle.js';
import { digestHash, signingInput } from './chain.js';
import { locateChunks } from './locate-chunks.js';
import {
  AUDIT_FINDING_CODES,
  type AuditFinding,
  type AuditFindingCode,
  type AuditReport,
  BundleManifest,
  type PublicKeyInfo,
  SignedDigest,
} from './schemas.js';
import { verifySignature } from './signature.js';
import { timeFindings } from './verify-cadence.js';
import { digestFileProblem, missingRanges, signedAfterRetirement } from './verify-digest-file.js';
import { bundleKeysOf, keysToCheckWith, listFiles, notTrustedBecause } from './verify-keys.js';
import { tileWriters } from './verify-writers.js';

/** What the auditor brings: the keys they trust (PublicKeyInfo or SPKI PEM), and "as of when". */
export interface VerifyBundleOptions {
  /**
   * without them (undefined) the bundle's own keys are used, with the `keys_from_bundle` warning; an
   * empty array trusts no key (every digest is `digest_unknown_key`), never the bundle's; a
   * PublicKeyInfo's `retired_at` is kept: a digest it signed dated after it is `digest_key_retired`
   */
  trustedKeys?: Array<PublicKeyInfo | string>;
  /** the time the cadence is checked at (a digest due before it must be there); default exported_at */
  at?: Date;
  /**
   * the session the auditor asked for: a bundle of another is `bundle_other_session`. A sid only with
   * its tenant: sids are chosen by the uploader and unique only within a tenant (issue 15 attack 2)
   */
  expect?: { tenant: string; sid?: string };
}

type Finding = Omit<AuditFinding, 'severity'> & { severity?: AuditFinding['severity'] };

/**
 * Verifies a bundle: an `OpenedBundle`, or a path (opened with `openBundle` and closed afterwards).
 * Answers the report; `ok` is false when any finding is an error.
 * @throws BundleError when a path given is not a bundle at all (no manifest.json, not a tar)
 * @throws TypeError when a trusted key is not a public key, or is a private key
 */
export async function verifyBundle(
  bundle: OpenedBundle | string,
  opts: VerifyBundleOptions = {},
): Promise<AuditReport> {
  if (typeof bundle === 'string') {
    const opened = await openBundle(bundle);
    try {
      return await verifyBundle(opened, opts);
    } finally {
      await opened.close();
    }
  }
  const root = bundle.root;
  const findings: AuditFinding[] = [];
  const add = (code: AuditFindingCode, f: Omit<Finding, 'code'>) =>
    findings.push({
      severity: f.severity ?? (AUDIT_FINDING_CODES[code].startsWith('warning:') ? 'warning' : 'error'),
      code,
      ...f,
    } as AuditFinding);

  // The manifest: a claim about the files, checked against them.
  let manifest: BundleManifest | null = null;
  try {
    const parsed = BundleManifest.safeParse(JSON.parse(await readFile(join(root, 'manifest.json'), 'utf8')));
    if (parsed.success) manifest = parsed.data;
    else
      add('manifest_mismatch', {
        message: `manifest.json is not a ${'hansard.bundle.v1'} manifest: ${parsed.error.issues[0]?.message}`,
      });
  } catch (err) {
    add('manifest_mismatch', { message: `manifest.json does not parse: ${(err as Error).message}` });
  }

  // Keys: the bundle's checked against their ids; the auditor's, when given, used as given (verify-keys.ts)
  const bundleKeys = await bundleKeysOf(root, manifest, add);
  const trusted = keysToCheckWith(opts.trustedKeys, bundleKeys, add);

  // Digests: parse, belong to this session, signature, seqs, chain, cadence.
  const names = (await listFiles(join(root, 'digests'))).filter((n) => n.endsWith('.json'));
  const fileSeqs = new Map<number, string>();
  for (const n of names) {
    const m = /^(\d{9})\.json$/.exec(n);
    if (m) fileSeqs.set(Number(m[1]), n);
    else add('digest_invalid', { message: `digests/${n} is not named as a digest ({seq:09}.json)` });
  }
  const tenant = manifest?.tenant;
  const sid = manifest?.sid;
  const valid = new Map<number, SignedDigest>();
  const signed: SignedDigest[] = []; // those whose signature verified with a trusted key
  const fileSha = new Map<number, string>();
  for (const [seq, n] of [...fileSeqs].sort((a, b) => a[0] - b[0])) {
    const bytes = await readFile(join(root, 'digests', n));
    fileSha.set(seq, createHash('sha256').update(bytes).digest('hex'));
    let raw: unknown;
    try {
      raw = JSON.parse(bytes.toString('utf8'));
    } catch {
      add('digest_invalid', { seq, message: `digests/${n} is not JSON` });
      continue;
    }
    const parsed = SignedDigest.safeParse(raw);
    if (!parsed.success) {
      const issue = parsed.error.issues[0];
      add('digest_invalid', {
        seq,
        message: `digests/${n} is not a digest record: ${issue?.path.join('.')}: ${issue?.message}`,
      });
      continue;
    }
    const d = parsed.data;
    const problem = digestFileProblem(bytes, raw, d);
    if (problem !== null) {
      add('digest_invalid', { seq, message: `digests/${n} is not the digest as signed: ${problem}` });
      continue;
    }
    if (d.seq !== seq) {
      add('digest_invalid', { seq, message: `digests/${n} holds digest seq ${d.seq}` });
      continue;
    }
    if ((tenant !== undefined && d.tenant !== tenant) || (sid !== undefined && d.sid !== sid)) {
      add('digest_invalid', {
        seq,
        message: `digest seq ${seq} is of ${d.tenant}/${d.sid}, not of this bundle's ${tenant}/${sid}`,
      });
      continue;
    }
    const key = trusted.get(d.key_id);
    if (key === undefined) {
      add('digest_unknown_key', {
        seq,
        message: `digest seq ${seq} is signed by key ${d.key_id}, which is ${notTrustedBecause(opts.trustedKeys, trusted)}`,
      });
    } else if (!verifySignature(key.pem, signingInput(d), d.signature)) {
      add('digest_bad_signature', {
        seq,
        message: `digest seq ${seq}'s signature does not verify with key ${d.key_id}: it was altered after signing`,
      });
    } else if (signedAfterRetirement(d, key)) {
      add('digest_key_retired', {
        seq,
        message: `digest seq ${seq} is dated ${d.at}, after its key ${d.key_id} was retired (${key.retired_at}): a retired key signs nothing new, so whoever still holds it wrote this one`,
      });
    } else signed.push(d);
    valid.set(seq, d);
  }

  const headSeq = manifest?.head.seq ?? 0;
  // one finding per gap: a head of 2^53-1 is one range, not 2^53 findings (that ran out of memory)
  for (const [from, to] of missingRanges(fileSeqs.keys(), headSeq)) {
    const head = to === headSeq ? `, up to the head the manifest names,` : '';
    add('digest_missing', {
      seq: from,
      message:
        from === to
          ? to === headSeq
            ? `digest seq ${to}, the head the manifest names, is not in the bundle`
            : `digest seq ${to} is not in the bundle (seqs must run from 1 without a gap)`
          : `digests ${from}–${to}${head} are missing (${to - from + 1} seqs; they must run from 1 without a gap)`,
    });
  }
  if (manifest) {
    const head = valid.get(headSeq);
    if (head && digestHash(head) !== manifest.head.sha256) {
      add('manifest_mismatch', {
        seq: headSeq,
        message: `the manifest's head sha256 is not the hash of digest seq ${headSeq}`,
      });
    }
    for (const s of fileSeqs.keys())
      if (s > headSeq)
        add('manifest_mismatch', {
          seq: s,
          message: `digest seq ${s} is newer than the manifest's head (seq ${headSeq})`,
        });
    const listed = new Map(manifest.digests.map((x) => [x.seq, x]));
    for (const [s, sha] of fileSha) {
      const e = listed.get(s);
      if (!e) add('manifest_mismatch', { seq: s, message: `digest seq ${s} is not in the manifest` });
      else if (e.path !== digestPath(s) || e.sha256 !== sha)
        add('manifest_mismatch', {
          seq: s,
          message: `the manifest's entry for digest seq ${s} does not match digests/${fileSeqs.get(s)}`,
        });
    }
  }
  const ordered = [...valid.values()].sort((a, b) => a.seq - b.seq);
  for (const d of ordered) {
    const prev = valid.get(d.seq - 1);
    if (d.seq === 1 ? d.previous !== null : d.previous === null || d.previous.seq !== d.seq - 1) {
      add('digest_chain_broken', {
        seq: d.seq,
        message: `digest seq ${d.seq}'s previous is ${d.previous ? `seq ${d.previous.seq}` : 'none'}, not seq ${d.seq - 1}`,
      });
    } else if (
      prev &&
      d.previous &&
      (d.previous.sha256 !== digestHash(prev) || d.previous.signature !== prev.signature)
    ) {
      add('digest_chain_broken', {
        seq: d.seq,
        message: `digest seq ${d.seq}'s previous does not match digest seq ${prev.seq} in the bundle: that one was replaced or re-signed`,
      });
    }
    if (prev?.next_due && d.at > prev.next_due) {
      add('digest_late', {
        seq: d.seq,
        message: `digest seq ${d.seq} was written at ${d.at}, after seq ${prev.seq}'s next_due ${prev.next_due}`,
      });
    }
  }
  const asOf = opts.at ?? (manifest ? new Date(manifest.exported_at) : new Date());
  findings.push(...timeFindings(ordered, signed, asOf, opts.at));

  // Writers and segments.
  const tiled = tileWriters(ordered);
  findings.push(...tiled.findings);
  const segFiles = (await listFiles(join(root, 'segments'))).filter((n) => n.endsWith('.jsonl'));
  const segInfo = new Map<string, { size: number; sha256: string }>();
  let chunkCount = 0;
  let bytes = 0;
  for (const [w, chunks] of [...tiled.writers].sort((a, b) => (a[0] < b[0] ? -1 : 1))) {
    const attested = chunks.filter((c) => c.sha256 !== '');
    chunkCount += attested.length;
    bytes += attested.reduce((s, c) => s + c.length, 0);
    const path = join(root, 'segments', `${w}.jsonl`);
    // a writer with no bytes yet may be exported with an empty segment, or none
    if (chunks.length === 0 && !segFiles.includes(`${w}.jsonl`)) continue;
    if (!segFiles.includes(`${w}.jsonl`)) {
      add('segment_missing', {
        w,
        seq: chunks.at(-1)?.seq,
        message: `writer ${w} has attested chunks but no segments/${w}.jsonl in the bundle`,
      });
      continue;
    }
    const r = await locateChunks(path, w, chunks);
    segInfo.set(w, { size: r.size, sha256: r.sha256 });
    findings.push(...r.findings);
  }
  for (const n of segFiles) {
    const w = n.slice(0, -'.jsonl'.length);
    if (tiled.writers.has(w)) continue;
    const size = (await stat(join(root, 'segments', n))).size;
    segInfo.set(w, { size, sha256: await fileSha256(join(root, 'segments', n)) });
    if (size > 0)
      add('bytes_unattested', {
        w,
        offset: 0,
        length: size,
        line: 1,
        message: `segments/${n}: no digest attests writer ${w}; all ${size} bytes are unattested`,
      });
  }
  if (manifest) {
    const listed = new Set<string>();
    for (const s of manifest.segments) {
      listed.add(s.w);
      const got = segInfo.get(s.w);
      if (s.path !== `segments/${s.w}.jsonl` || !got)
        add('manifest_mismatch', {
          w: s.w,
          message: `the manifest lists ${s.path}, which the bundle does not hold`,
        });
      else if (got.size !== s.length || got.sha256 !== s.sha256)
        add('manifest_mismatch', {
          w: s.w,
          message:
            got.size === s.length
              ? `segments/${s.w}.jsonl: its SHA-256 differs from the manifest's (both ${s.length} bytes)`
              : `segments/${s.w}.jsonl is ${got.size} bytes, not the ${s.length} the manifest states`,
        });
    }
    for (const w of segInfo.keys())
      if (!listed.has(w))
        add('manifest_mismatch', { w, message: `segments/${w}.jsonl is not in the manifest` });
  }

  // which session the bundle attests: the manifest's, which every valid digest was checked against
  const isSid = sid ?? ordered[0]?.sid ?? null;
  const isTenant = tenant ?? ordered[0]?.tenant ?? null;
  const want: { tenant?: string; sid?: string } = opts.expect ?? {};
  if (
    (want.sid !== undefined && want.sid !== isSid) ||
    (want.tenant !== undefined && want.tenant !== isTenant)
  ) {
    add('bundle_other_session', {
      message: `the bundle is of session ${isSid ?? '(none named)'} of tenant ${isTenant ?? '(none named)'}, not of ${want.sid ?? 'the session'}${want.tenant !== undefined ? ` of tenant ${want.tenant}` : ''} you asked for`,
    });
  }

  return {
    ok: !findings.some((f) => f.severity === 'error'),
    tenant: isTenant,
    sid: isSid,
    digests: ordered.length,
    chunks: chunkCount,
    bytes,
    // what the bundle proves, as of when: the newest digest a trusted key signed
    as_of: signed.reduce<string | null>((a, d) => (a === null || d.at > a ? d.at : a), null),
    findings,
  };
}

async function fileSha256(path: string): Promise<string> {
  const h = createHash('sha256');
  for await (const part of createReadStream(path)) h.update(part as Buffer);
  return h.digest('hex');
}
