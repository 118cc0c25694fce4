/**
 * What `hansard verify --digests` prints in a terminal (issue 15.3): one line per finding, the verdict
 * naming what was verified as of when, and, when not verified, what to do next by kind of finding.
 * A bundle is untrusted input: every line goes through escapeControl.
 */
import type { AuditFindingCode, AuditReport } from '../../audit/schemas.js';
import { isCadenceMissing } from '../../audit/verify-cadence.js';
import { escapeControl } from '../../log/format/escape.js';

/** Findings that mean the bundle was altered after signing (or signed by whoever should not have). */
const TAMPERING = new Set<AuditFindingCode>([
  'chunk_modified',
  'chunk_deleted',
  'chunk_inserted',
  'chunks_reordered',
  'chunk_truncated',
  'segment_missing',
  'bytes_unattested',
  'digest_missing',
  'digest_bad_signature',
  'digest_chain_broken',
  'digest_invalid',
  'digest_key_retired',
  'writer_chain_mismatch',
  'manifest_mismatch',
  'key_mismatch',
]);

/** The lines for stdout: each finding, then the verdict. */
export function reportLines(report: AuditReport): string[] {
  const lines = report.findings.map((f) => {
    const where = [
      f.w,
      f.seq !== undefined ? `digest ${f.seq}` : undefined,
      f.offset !== undefined ? `offset ${f.offset}` : undefined,
      f.line !== undefined ? `line ${f.line}` : undefined,
    ]
      .filter((x) => x !== undefined)
      .join(' ');
    return `${f.severity.padEnd(7)}  ${f.code.padEnd(22)}  ${where || 'bundle'}: ${f.message}`;
  });
  const errors = report.findings.filter((f) => f.severity === 'error').length;
  const n = (k: number, word: string) => `${k} ${word}${k === 1 ? '' : 's'}`;
  // "as of" only names a digest a trusted key signed; with none, say so rather than "as of no digest"
  const asOf = report.as_of !== null ? ` as of ${report.as_of}` : '; no digest verified';
  // the session is named: a bundle of another session verifies just as well (--sid checks it)
  const what = `${n(report.digests, 'digest')}, ${n(report.chunks, 'chunk')}, ${report.bytes} bytes${asOf}; session ${report.sid ?? '(none named)'} of tenant ${report.tenant ?? '(none named)'}`;
  lines.push(report.ok ? `verified: ${what}` : `NOT verified: ${n(errors, 'error')}; ${what}`);
  return lines.map(escapeControl);
}

/** What to do next when not verified, one `hint:` line per kind of finding (for stderr); none when ok. */
export function reportHints(report: AuditReport): string[] {
  if (report.ok) return [];
  const errors = report.findings.filter((f) => f.severity === 'error');
  const hints: string[] = [];
  const unknown = errors.filter((f) => f.code === 'digest_unknown_key');
  if (unknown.length > 0)
    hints.push(
      "fetch the deployment's current keys again (GET /v1/keys) and pass them with --public-key; if the key is still unknown the bundle was not signed by this deployment",
    );
  if (errors.some(isCadenceMissing))
    hints.push('if you downloaded the bundle earlier, pass that time with --at');
  if (errors.some((f) => TAMPERING.has(f.code) && !isCadenceMissing(f)))
    hints.push('keep this bundle as evidence and export the session again to compare');
  if (errors.some((f) => f.code === 'bundle_other_session'))
    hints.push('check --sid and --tenant, or export the session you meant (hansard export SID --out FILE)');
  return hints.map((h) => `hint: ${h}`);
}
