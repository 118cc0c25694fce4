/**
 * The tamper suite (issue 15, Done when): a bundle built from scratch (test/support/audit-bundle.ts) is
 * altered the way an attacker would (the manifest re-made to match, as packBundle writes it) and
 * `hansard verify --digests` must exit 1 naming exactly what happened: code, writer, offset, line, seq.
 * An untouched bundle verifies clean.
 */
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { beforeAll, describe, expect, it } from 'vitest';
import { canonicalJson } from '../../lib/audit/chain.js';
import type { AuditFinding, AuditReport, SignedDigest } from '../../lib/audit/schemas.js';
import { signDigest } from '../../lib/audit/signature.js';
import {
  buildSession,
  makeKey,
  partsOf,
  type TestChunk,
  type TestSession,
  writeBundle,
} from '../support/audit-bundle.js';
import { runHansard } from '../support/cli.js';
import { tmpDirs } from '../support/tmp.js';

const tmp = tmpDirs('hansard-tamper-');
let s: TestSession;
let dir: string;
let pem: string;
let w0: string;
let c: TestChunk[]; // writer 0's chunks: seqs 1, 1, 2, 2, 3, 3

beforeAll(async () => {
  s = await buildSession();
  dir = tmp.make();
  pem = join(dir, 'trusted.pem');
  writeFileSync(pem, s.key.info.public_key);
  w0 = [...s.segments.keys()][0]!;
  c = s.chunks.filter((x) => x.w === w0);
});

let n = 0;
async function verify(
  parts: Parameters<typeof writeBundle>[0],
  args: string[] = ['--public-key', pem],
): Promise<{ code: number; report: AuditReport; text: string }> {
  const file = await writeBundle(parts, join(dir, `b${n++}.tar`));
  const j = await runHansard(['verify', '--digests', file, ...args, '--json'], { cwd: dir });
  const t = await runHansard(['verify', '--digests', file, ...args], { cwd: dir });
  expect(t.code).toBe(j.code);
  return { code: j.code, report: JSON.parse(j.out) as AuditReport, text: t.out };
}

/** writer 0's segment rebuilt from pieces. */
function w0As(...pieces: Buffer[]): Map<string, Buffer> {
  return new Map([...s.segments].map(([w, b]) => [w, w === w0 ? Buffer.concat(pieces) : b]));
}
const seg = () => s.segments.get(w0)!;
const bytesOf = (x: TestChunk) => seg().subarray(x.offset, x.offset + x.length);
const linesIn = (b: Buffer) => b.toString().split('\n').length - 1;
const codes = (r: AuditReport) => r.findings.map((f) => f.code);
const only = (r: AuditReport, code: AuditFinding['code']) => r.findings.filter((f) => f.code === code);

describe('hansard verify --digests, tamper suite', () => {
  it('an untouched bundle verifies clean (exit 0) and says what it proved', async () => {
    const r = await verify(partsOf(s));
    expect(r.code).toBe(0);
    expect(r.report.findings).toEqual([]);
    expect(r.report).toMatchObject({ ok: true, sid: s.sid, digests: 4, chunks: 12 });
    const bytes = [...s.segments.values()].reduce((a, b) => a + b.length, 0);
    expect(r.text).toBe(
      `verified: 4 digests, 12 chunks, ${bytes} bytes as of 2026-11-30T10:15:00.000Z; session ${s.sid} of tenant ${s.tenant}\n`,
    );
    expect(r.report.tenant).toBe(s.tenant);
  });

  it('a writer with no bytes yet, exported with an empty segment, verifies clean', async () => {
    const e = await buildSession({ emptyWriter: true, key: s.key });
    const r = await verify(partsOf(e));
    expect(r.report.findings).toEqual([]);
    expect(r.code).toBe(0);
  });

  it('modify one byte: chunk_modified names the chunk', async () => {
    const b = Buffer.from(seg());
    const at = c[2]!.offset + 40;
    b[at] = b[at] === 0x41 ? 0x42 : 0x41;
    const r = await verify(partsOf(s, { segments: w0As(b) }));
    expect(r.code).toBe(1);
    expect(r.report.findings).toEqual([
      expect.objectContaining({
        code: 'chunk_modified',
        w: w0,
        offset: c[2]!.offset,
        line: c[2]!.line,
        seq: 2,
      }),
    ]);
    expect(r.text).toMatch(
      new RegExp(
        `^error\\s+chunk_modified\\s+${w0} digest 2 offset ${c[2]!.offset} line ${c[2]!.line}: `,
        'm',
      ),
    );
    expect(r.text).toMatch(/^NOT verified: 1 error; 4 digests/m);
  });

  it('delete a chunk: chunk_deleted where its bytes were', async () => {
    const b = seg();
    const r = await verify(
      partsOf(s, { segments: w0As(b.subarray(0, c[2]!.offset), b.subarray(c[3]!.offset)) }),
    );
    expect(r.code).toBe(1);
    expect(r.report.findings).toEqual([
      expect.objectContaining({
        code: 'chunk_deleted',
        w: w0,
        offset: c[2]!.offset,
        line: c[2]!.line,
        seq: 2,
        length: c[2]!.length,
      }),
    ]);
  });

  it('swap two chunks: chunks_reordered names the one found after its successor', async () => {
    const b = seg();
    const r = await verify(
      partsOf(s, {
        segments: w0As(b.subarray(0, c[2]!.offset), bytesOf(c[3]!), bytesOf(c[2]!), b.subarray(c[4]!.offset)),
      }),
    );
    expect(r.code).toBe(1);
    expect(r.report.findings).toEqual([
      expect.objectContaining({
        code: 'chunks_reordered',
        w: w0,
        offset: c[2]!.offset + c[3]!.length,
        line: c[2]!.line + linesIn(bytesOf(c[3]!)),
        seq: 2,
      }),
    ]);
    expect(r.report.findings[0]!.message).toContain(`belongs at offset ${c[2]!.offset} (line ${c[2]!.line})`);
  });

  it('insert a forged chunk: chunk_inserted with its offset, length and line', async () => {
    const forged = Buffer.from(`${JSON.stringify({ v: 3, w: w0, text: 'I never said this' })}\n`);
    const b = seg();
    const r = await verify(
      partsOf(s, { segments: w0As(b.subarray(0, c[3]!.offset), forged, b.subarray(c[3]!.offset)) }),
    );
    expect(r.code).toBe(1);
    expect(r.report.findings).toEqual([
      expect.objectContaining({
        code: 'chunk_inserted',
        w: w0,
        offset: c[3]!.offset,
        length: forged.length,
        line: c[3]!.line,
        seq: 2,
      }),
    ]);
  });

  it('truncate the newest chunk: chunk_truncated inside it', async () => {
    const last = c[5]!;
    const r = await verify(partsOf(s, { segments: w0As(seg().subarray(0, last.offset + 10)) }));
    expect(r.code).toBe(1);
    expect(r.report.findings).toEqual([
      expect.objectContaining({
        code: 'chunk_truncated',
        w: w0,
        offset: last.offset,
        line: last.line,
        seq: 3,
      }),
    ]);
    expect(r.report.findings[0]!.message).toContain(`10 of its ${last.length} bytes are left`);
  });

  it('delete the newest digest: digest_missing for the head the manifest names', async () => {
    const r = await verify(partsOf(s, { digests: s.digests.slice(0, 3), head: s.digests[3] }));
    expect(r.code).toBe(1);
    expect(r.report.findings).toEqual([expect.objectContaining({ code: 'digest_missing', seq: 4 })]);
  });

  it('delete the newest digest and re-make the manifest: the cadence finds it missing by next_due', async () => {
    const parts = partsOf(s, { digests: s.digests.slice(0, 3), head: s.digests[2] });
    const late = await verify(parts, ['--public-key', pem, '--at', '2026-11-30T11:30:00Z']);
    expect(late.code).toBe(1);
    expect(late.report.findings).toEqual([expect.objectContaining({ code: 'digest_missing', seq: 4 })]);
    expect(late.report.findings[0]!.message).toContain('expected a digest by 2026-11-30T11:10:00.000Z');
    // within the cadence the truncated chain is indistinguishable from an earlier export (docs/audit.md)
    expect((await verify(parts)).code).toBe(0);
  });

  it('delete a middle digest: digest_missing names its seq, nothing else', async () => {
    const r = await verify(partsOf(s, { digests: s.digests.filter((d) => d.seq !== 2) }));
    expect(r.code).toBe(1);
    expect(r.report.findings).toEqual([expect.objectContaining({ code: 'digest_missing', seq: 2 })]);
  });

  it('replace a digest re-signed with another key: unknown key with the trusted key, chain broken without', async () => {
    const mallory = makeKey();
    const { signature: _s, ...record } = s.digests[1]!;
    const forged = await signDigest({ ...record, reason: 'writer_end' }, mallory.signing);
    const digests = s.digests.map((d) => (d.seq === 2 ? forged : d));
    const parts = partsOf(s, { digests, keys: [s.key.info, mallory.info] });
    const trusted = await verify(parts);
    expect(trusted.code).toBe(1);
    expect(trusted.report.findings).toEqual([
      expect.objectContaining({ code: 'digest_unknown_key', seq: 2 }),
      expect.objectContaining({ code: 'digest_chain_broken', seq: 3 }),
    ]);
    expect(trusted.report.as_of).toBe(s.digests[3]!.at);
    const headForged = await signDigest({ ...s.digests[3]!, reason: 'scheduled' }, mallory.signing);
    const newest = await verify(
      partsOf(s, { digests: [...s.digests.slice(0, 3), headForged], head: headForged }),
    );
    expect(newest.report.as_of).toBe(s.digests[2]!.at);
    const bundleKeys = await verify(parts, []);
    expect(bundleKeys.code).toBe(1);
    expect(codes(bundleKeys.report).sort()).toEqual(['digest_chain_broken', 'keys_from_bundle']);
    expect(only(bundleKeys.report, 'digest_chain_broken')[0]).toMatchObject({ seq: 3 });
  });

  it('edit a digest without re-signing: digest_bad_signature, and the next one no longer chains', async () => {
    const edited: SignedDigest = { ...s.digests[1]!, at: '2026-11-30T10:05:01.000Z' };
    const r = await verify(partsOf(s, { digests: s.digests.map((d) => (d.seq === 2 ? edited : d)) }));
    expect(r.code).toBe(1);
    expect(r.report.findings).toEqual([
      expect.objectContaining({ code: 'digest_bad_signature', seq: 2 }),
      expect.objectContaining({ code: 'digest_chain_broken', seq: 3 }),
    ]);
  });

  it('a digest that is not a digest: digest_invalid naming its seq', async () => {
    const digests = [...s.digests.slice(0, 3), { seq: 4, bytes: Buffer.from(canonicalJson({ seq: 4 })) }];
    const r = await verify(partsOf(s, { digests }));
    expect(r.code).toBe(1);
    expect(only(r.report, 'digest_invalid')).toEqual([expect.objectContaining({ seq: 4 })]);
  });

  it('bytes appended after the head digest: bytes_unattested', async () => {
    const extra = Buffer.from('{"v":3,"text":"added later"}\n');
    const r = await verify(partsOf(s, { segments: w0As(seg(), extra) }));
    expect(r.code).toBe(1);
    expect(r.report.findings).toEqual([
      expect.objectContaining({
        code: 'bytes_unattested',
        w: w0,
        offset: seg().length,
        length: extra.length,
        line: c[5]!.line + linesIn(bytesOf(c[5]!)),
      }),
    ]);
  });

  it('a signed digest whose writer chain or chunk offsets do not add up: writer_chain_mismatch', async () => {
    const { signature: _s, ...record } = s.digests[1]!;
    const wrongChain = await signDigest(
      { ...record, writers: record.writers.map((x) => (x.w === w0 ? { ...x, chain: 'f'.repeat(64) } : x)) },
      s.key.signing,
    );
    const r = await verify(partsOf(s, { digests: s.digests.map((d) => (d.seq === 2 ? wrongChain : d)) }));
    expect(r.code).toBe(1);
    expect(only(r.report, 'writer_chain_mismatch')).toEqual([expect.objectContaining({ w: w0, seq: 2 })]);
    const gap = await signDigest(
      {
        ...record,
        chunks: record.chunks.map((x) =>
          x.w === w0 && x.offset === c[3]!.offset ? { ...x, offset: x.offset + 1 } : x,
        ),
      },
      s.key.signing,
    );
    const g = await verify(partsOf(s, { digests: s.digests.map((d) => (d.seq === 2 ? gap : d)) }));
    expect(g.code).toBe(1);
    expect(only(g.report, 'writer_chain_mismatch')[0]).toMatchObject({
      w: w0,
      seq: 2,
      offset: c[3]!.offset + 1,
    });
  });

  it('a segment left out: segment_missing', async () => {
    const segments = new Map([...s.segments].filter(([w]) => w !== w0));
    const r = await verify(partsOf(s, { segments }));
    expect(r.code).toBe(1);
    expect(r.report.findings).toEqual([expect.objectContaining({ code: 'segment_missing', w: w0, seq: 3 })]);
  });
});
