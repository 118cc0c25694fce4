/**
 * The offline verifier's checks against time (issue 15.3, DESIGN §6b), out of verify-bundle.ts: a
 * digest due by the time given and not in the bundle (`digest_missing`: newer digests may have been
 * deleted), and a time given that is before the newest verified digest (`at_before_digest`: the bundle
 * cannot have been downloaded then, so the cadence check above proves nothing).
 */
import type { AuditFinding, SignedDigest } from './schemas.js';

/** How the cadence's `digest_missing` message starts (the verdict's hint tells it from a gap by it). */
const CADENCE_MISSING = 'expected a digest by ';

/**
 * The findings of time: `digest_missing` when the newest digest's `next_due` is before `asOf`, and when
 * `given` (the auditor's --at) is before the newest digest a trusted key signed, `at_before_digest`.
 * @param ordered the valid digests by seq
 * @param signed those whose signature verified with a trusted key
 * @param asOf --at, else the manifest's exported_at
 */
export function timeFindings(
  ordered: SignedDigest[],
  signed: SignedDigest[],
  asOf: Date,
  given: Date | undefined,
): AuditFinding[] {
  const out: AuditFinding[] = [];
  const newest = ordered.at(-1);
  if (newest?.next_due && Date.parse(newest.next_due) < asOf.getTime()) {
    out.push({
      severity: 'error',
      code: 'digest_missing',
      seq: newest.seq + 1,
      message: `${CADENCE_MISSING}${newest.next_due} (after seq ${newest.seq}); none in the bundle as of ${asOf.toISOString()}: newer digests may have been deleted`,
    });
  }
  const verified = signed.reduce<SignedDigest | undefined>((a, d) => (!a || d.at > a.at ? d : a), undefined);
  if (given && verified && given.getTime() < Date.parse(verified.at)) {
    out.push({
      severity: 'warning',
      code: 'at_before_digest',
      seq: verified.seq,
      message: `--at ${given.toISOString()} is before the newest digest (seq ${verified.seq}, ${verified.at}): the bundle cannot have been downloaded then; check the time (and its offset: Z is UTC)`,
    });
  }
  return out;
}

/** Whether `f` is the cadence's `digest_missing` (a digest due by --at), not a gap in the seqs. */
export function isCadenceMissing(f: AuditFinding): boolean {
  return f.code === 'digest_missing' && f.message.startsWith(CADENCE_MISSING);
}
