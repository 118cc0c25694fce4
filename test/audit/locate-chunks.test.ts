/**
 * The chunk locator (lib/audit/locate-chunks.ts) on real segment files: several differences in one
 * segment each named at the right offset and line, and its cost: a big clean segment verifies at
 * about the speed of hashing it, and a difference in it is found without a quadratic search.
 */
import { createHash } from 'node:crypto';
import { createReadStream, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { type AttestedChunk, type LocateOptions, locateChunks } from '../../lib/audit/locate-chunks.js';
import { tmpDirs } from '../support/tmp.js';

const tmp = tmpDirs('hansard-locate-');
const sha = (b: Buffer) => createHash('sha256').update(b).digest('hex');

/** `n` chunks of `lines(i)` lines each, every line `width` bytes; with each chunk's start line. */
function segment(n: number, lines: (i: number) => number, width = 60) {
  const bufs: Buffer[] = [];
  const chunks: Array<AttestedChunk & { line: number; bytes: Buffer }> = [];
  let offset = 0;
  let line = 1;
  for (let i = 0; i < n; i++) {
    let t = '';
    for (let l = 0; l < lines(i); l++) {
      const head = `{"chunk":${i},"line":${l},"pad":"`;
      t += `${head}${'abcdefghij'.repeat(width).slice(0, Math.max(1, width - head.length - 3))}"}\n`;
    }
    const bytes = Buffer.from(t);
    chunks.push({
      offset,
      length: bytes.length,
      sha256: sha(bytes),
      seq: 1 + Math.floor(i / 4),
      line,
      bytes,
    });
    bufs.push(bytes);
    offset += bytes.length;
    line += lines(i);
  }
  return { bytes: Buffer.concat(bufs), chunks };
}

async function locate(file: Buffer, chunks: AttestedChunk[], opts?: LocateOptions) {
  const path = join(tmp.make(), 'w_x.jsonl');
  writeFileSync(path, file);
  return locateChunks(path, 'w_x', chunks, opts);
}

describe('locateChunks', () => {
  it('names a modification, a deletion and an insertion in one segment, each at its place', async () => {
    const { chunks } = segment(12, (i) => 1 + (i % 3));
    const forged = Buffer.from('{"forged":true}\n');
    const modified = Buffer.from(chunks[1]!.bytes);
    modified[5] = 0x58;
    const file = Buffer.concat([
      chunks[0]!.bytes,
      modified,
      ...chunks.slice(2, 5).map((c) => c.bytes),
      // chunk 5 deleted
      ...chunks.slice(6, 9).map((c) => c.bytes),
      forged,
      ...chunks.slice(9).map((c) => c.bytes),
    ]);
    const r = await locate(file, chunks);
    const c = chunks;
    const shift5 = c[5]!.length;
    expect(
      r.findings.map(({ code, offset, line, seq, length }) => ({ code, offset, line, seq, length })),
    ).toEqual([
      { code: 'chunk_modified', offset: c[1]!.offset, line: c[1]!.line, seq: 1, length: c[1]!.length },
      { code: 'chunk_deleted', offset: c[5]!.offset, line: c[5]!.line, seq: 2, length: c[5]!.length },
      {
        code: 'chunk_inserted',
        offset: c[9]!.offset - shift5,
        line: c[9]!.line - 3,
        seq: 3,
        length: forged.length,
      },
    ]);
    expect(r.size).toBe(file.length);
    expect(r.sha256).toBe(sha(file));
  });

  it('two equal-length chunks swapped, two chunks deleted in a row, an edit that changes a length', async () => {
    const { chunks: c } = segment(10, () => 2);
    const longer = Buffer.from(c[8]!.bytes.toString().replace('"line":0', '"line":0,"x":1'));
    const file = Buffer.concat([
      c[0]!.bytes,
      c[2]!.bytes,
      c[1]!.bytes,
      c[3]!.bytes,
      // 4 and 5 deleted
      c[6]!.bytes,
      c[7]!.bytes,
      longer,
      c[9]!.bytes,
    ]);
    const r = await locate(file, c);
    expect(r.findings.map((f) => [f.code, f.offset, f.line])).toEqual([
      ['chunks_reordered', c[2]!.offset, c[2]!.line],
      ['chunk_deleted', c[4]!.offset, c[4]!.line],
      ['chunk_deleted', c[4]!.offset, c[4]!.line],
      ['chunk_modified', c[8]!.offset - c[4]!.length - c[5]!.length, c[8]!.line - 4],
    ]);
    expect(r.findings[1]!.message).toContain(`offset ${c[4]!.offset} (`);
    expect(r.findings[2]!.message).toContain(`offset ${c[5]!.offset} (`);
    expect(r.findings[3]!.message).toContain(
      `now ${longer.length} bytes where ${c[8]!.length} were attested`,
    );
  });

  it('two insertions: each found at its line start (the end-aligned guess is off by the later one)', async () => {
    const { chunks: c } = segment(10, (i) => 1 + (i % 2));
    const one = Buffer.from('{"forged":1}\n');
    const two = Buffer.from('{"forged":2,"more":"xxxxxxxxxxxxxxxxxxxxxxxxxxx"}\n');
    const file = Buffer.concat([
      ...c.slice(0, 3).map((x) => x.bytes),
      one,
      ...c.slice(3, 8).map((x) => x.bytes),
      two,
      ...c.slice(8).map((x) => x.bytes),
    ]);
    const r = await locate(file, c);
    expect(r.findings.map((f) => [f.code, f.offset, f.line, f.length, f.seq])).toEqual([
      ['chunk_inserted', c[3]!.offset, c[3]!.line, one.length, 1],
      ['chunk_inserted', c[8]!.offset + one.length, c[8]!.line + 1, two.length, 3],
    ]);
  });

  it('a segment cut at a chunk boundary, and an empty one: every chunk after the cut is truncated', async () => {
    const { chunks: c, bytes } = segment(5, () => 2);
    const cut = await locate(bytes.subarray(0, c[3]!.offset), c);
    expect(cut.findings.map((f) => [f.code, f.offset, f.seq])).toEqual([
      ['chunk_truncated', c[3]!.offset, 1],
      ['chunk_truncated', c[3]!.offset, 2],
    ]);
    expect(cut.findings[0]!.message).toContain('the segment ends before the chunk attested at offset');
    const empty = await locate(Buffer.alloc(0), c);
    expect(empty.findings.map((f) => f.code)).toEqual(Array(5).fill('chunk_truncated'));
  });

  it('a 64 MiB clean segment verifies at about hashing speed; an insertion in it is found fast', async () => {
    const { chunks, bytes } = segment(16, () => 4 * 1024 * 16, 64); // 16 chunks of 4 MiB, 64-byte lines
    const path = join(tmp.make(), 'w_big.jsonl');
    writeFileSync(path, bytes);
    let t = performance.now();
    const h = createHash('sha256');
    for await (const b of createReadStream(path)) h.update(b as Buffer);
    h.digest();
    const hashMs = performance.now() - t;
    t = performance.now();
    const clean = await locateChunks(path, 'w_big', chunks);
    const cleanMs = performance.now() - t;
    expect(clean.findings).toEqual([]);
    const forged = Buffer.from('{"forged":true}\n');
    const at = chunks[2]!.offset + 64 * 1000; // inside chunk 2, at a line start
    writeFileSync(path, Buffer.concat([bytes.subarray(0, at), forged, bytes.subarray(at)]));
    t = performance.now();
    const tampered = await locateChunks(path, 'w_big', chunks);
    const tamperedMs = performance.now() - t;
    expect(tampered.findings.map((f) => [f.code, f.offset])).toEqual([['chunk_modified', chunks[2]!.offset]]);
    console.log(
      `64 MiB: sha256 ${hashMs.toFixed(0)} ms, clean verify ${cleanMs.toFixed(0)} ms (x${(cleanMs / hashMs).toFixed(2)}), one insertion ${tamperedMs.toFixed(0)} ms`,
    );
    expect(cleanMs / hashMs).toBeLessThan(3.5);
    expect(tamperedMs / hashMs).toBeLessThan(8);
  }, 60_000);
});

/** A file of `n` chunks from `make(i)`, the chunks attested, and the file written. */
function chunked(make: (i: number) => string, n: number) {
  const parts = Array.from({ length: n }, (_, i) => Buffer.from(make(i)));
  let offset = 0;
  let line = 1;
  const chunks = parts.map((bytes, i) => {
    const c = { offset, length: bytes.length, sha256: sha(bytes), seq: 1 + (i >> 4), line, bytes };
    offset += bytes.length;
    line += bytes.toString().split('\n').length - 1;
    return c;
  });
  return { bytes: Buffer.concat(parts), chunks };
}

/** Runs the locator with a budget of `perByte` × the file size and its work counted. */
async function counted(file: Buffer, chunks: AttestedChunk[], perByte = 4) {
  const stats = { hashedBytes: 0, reads: 0 };
  const budget = perByte * file.length;
  const r = await locate(file, chunks, { stats, budget });
  // the in-order walk hashes each byte at most once; everything else comes out of the budget
  expect(stats.hashedBytes).toBeGreaterThan(0);
  expect(stats.hashedBytes).toBeLessThanOrEqual(file.length + budget);
  expect(stats.reads).toBeLessThan(64 + 4 * chunks.length + file.length / 4096);
  if (r.findings.length === 0) expect(r.sha256).toBe(sha(file)); // clean only when it is byte for byte
  return { ...r, stats, brief: r.findings.map((f) => [f.code, f.offset, f.line]) };
}

describe('locateChunks on adversarial tampering: right answer, bounded work (counted, not timed)', () => {
  const N = 2000; // one 100-byte line per chunk, as hooks upload: 200 KB
  const line = (i: number) => `{"v":3,"i":${String(i).padStart(6, '0')},"t":"${'x'.repeat(72)}"}\n`;
  const { bytes, chunks: c } = chunked(line, N);

  it('every chunk edited in place (same length): each one chunk_modified where it is', async () => {
    const r = await counted(Buffer.from(bytes.toString().replaceAll('"v":3', '"v":4')), c);
    expect(r.brief).toEqual(c.map((x) => ['chunk_modified', x.offset, x.line]));
  });

  it('one line inserted at the start (every chunk shifted): one chunk_inserted', async () => {
    const forged = Buffer.from('{"forged":true}\n');
    const r = await counted(Buffer.concat([forged, bytes]), c);
    expect(r.brief).toEqual([['chunk_inserted', 0, 1]]);
  });

  it('a line inserted before every tenth chunk: each insertion named at its offset and line', async () => {
    const forged = Buffer.from('{"forged":true}\n');
    const parts: Buffer[] = [];
    const want: unknown[] = [];
    let shift = 0;
    for (const [i, x] of c.entries()) {
      if (i % 10 === 5) {
        want.push(['chunk_inserted', x.offset + shift, x.line + shift / forged.length]);
        parts.push(forged);
        shift += forged.length;
      }
      parts.push(x.bytes);
    }
    const r = await counted(Buffer.concat(parts), c);
    expect(r.brief).toEqual(want);
  });

  it('the chunks in reverse order: not verified, every finding inside the file', async () => {
    const file = Buffer.concat([...c].reverse().map((x) => x.bytes));
    const r = await counted(file, c);
    expect(r.findings.length).toBeGreaterThan(0);
    expect(r.findings.some((f) => f.code === 'chunks_reordered' || f.code === 'chunk_deleted')).toBe(true);
    for (const f of r.findings) {
      expect(f.offset!).toBeLessThanOrEqual(file.length);
      // what is named as in the file lies in it (a deleted or truncated chunk has its attested length)
      if (f.code !== 'chunk_deleted' && f.code !== 'chunk_truncated')
        expect(f.offset! + f.length!).toBeLessThanOrEqual(file.length);
    }
  });

  it('one huge line (every newline made a space): each chunk chunk_modified, on line 1', async () => {
    const r = await counted(Buffer.from(bytes.toString().replaceAll('\n', ' ')), c);
    expect(r.brief).toEqual(c.map((x) => ['chunk_modified', x.offset, 1]));
  });

  it('a million 2-byte lines, 1,000 chunks: a shift is found; every line edited is named per chunk', async () => {
    const tiny = chunked((i) => `${i}\n${'a\n'.repeat(999)}`, 1000);
    const shifted = await counted(Buffer.concat([Buffer.from('x\n'), tiny.bytes]), tiny.chunks);
    expect(shifted.brief).toEqual([['chunk_inserted', 0, 1]]);
    const edited = await counted(Buffer.from(tiny.bytes.toString().replaceAll('a', 'b')), tiny.chunks);
    expect(edited.brief).toEqual(tiny.chunks.map((x) => ['chunk_modified', x.offset, x.line]));
  }, 30_000);

  it('when the budget runs out after an insertion, the rest of the segment is one finding, not silence', async () => {
    const forged = Buffer.from('{"forged":true}\n');
    const file = Buffer.concat([forged, bytes]);
    const r = await counted(file, c, 0.5);
    expect(r.brief[0]).toEqual(['chunk_inserted', 0, 1]);
    expect(r.findings).toHaveLength(2);
    const rest = r.findings[1]!;
    expect(rest).toMatchObject({ code: 'chunk_modified' });
    expect(rest.offset! + rest.length!).toBe(file.length);
    expect(rest.message).toContain('work budget');
  });
});
