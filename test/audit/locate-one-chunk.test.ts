/**
 * issue 15, a newcomer's report: a writer whose data is one attested chunk (26 lines, 7,570 bytes).
 * A digest hashes a chunk whole, so the locator cannot know which line in it changed: each finding
 * names the chunk's line range as it is in the file (`line`…`line_end`), never one line it does not
 * know, and never calls an edit a truncation or an append without saying the alternative.
 */
import { createHash } from 'node:crypto';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { locateChunks } from '../../lib/audit/locate-chunks.js';
import { tmpDirs } from '../support/tmp.js';

const tmp = tmpDirs('hansard-one-chunk-');
const sha = (b: Buffer) => createHash('sha256').update(b).digest('hex');

/** 26 JSONL lines, 7,570 bytes in all (the newcomer's file), as one chunk of digest seq 1. */
const lines = Array.from({ length: 26 }, (_, i) => {
  const head = `{"v":3,"i":${String(i + 1).padStart(2, '0')},"text":"`;
  const width = i < 4 ? 292 : 291; // 4 × 292 + 22 × 291 = 7,570
  return `${head}${'x'.repeat(width - head.length - 3)}"}\n`;
});
const original = Buffer.from(lines.join(''));
const chunk = { offset: 0, length: original.length, sha256: sha(original), seq: 1 };

async function locate(file: Buffer) {
  const path = join(tmp.make(), 'w_one.jsonl');
  writeFileSync(path, file);
  const r = await locateChunks(path, 'w_one', [chunk]);
  return {
    brief: r.findings.map(({ code, offset, length, line, line_end }) => ({
      code,
      offset,
      length,
      line,
      line_end,
    })),
    messages: r.findings.map((f) => f.message),
  };
}

const withLines = (edit: (l: string[]) => string[]) => Buffer.from(edit([...lines]).join(''));

describe('locateChunks on a one-chunk writer: ranges, not a line it cannot know', () => {
  it('the file is as the newcomer describes it', () => {
    expect(original.length).toBe(7570);
    expect(lines).toHaveLength(26);
  });

  it('line 5 deleted: chunk_truncated over lines 1–25, saying removed or cut off', async () => {
    const file = withLines((l) => l.filter((_, i) => i !== 4));
    const r = await locate(file);
    expect(r.brief).toEqual([{ code: 'chunk_truncated', offset: 0, length: 7570, line: 1, line_end: 25 }]);
    expect(r.messages[0]).toContain(
      `at lines 1–25, bytes 0–${file.length - 1} of the file: ${file.length} of its 7570 bytes are left; bytes were removed from it or it was cut off`,
    );
  });

  it('line 12 edited, same length: one chunk_modified over lines 1–26, naming no single line', async () => {
    const file = withLines((l) => l.map((x, i) => (i === 11 ? x.replace('"v":3', '"v":4') : x)));
    expect(file.length).toBe(7570);
    const r = await locate(file);
    expect(r.brief).toEqual([{ code: 'chunk_modified', offset: 0, length: 7570, line: 1, line_end: 26 }]);
    expect(r.messages[0]).toMatch(/^one of lines 1–26 \(bytes 0–7569\) differs from the chunk attested/);
    expect(r.messages[0]).not.toMatch(/line 12\b/);
  });

  it('line 12 edited, 9 bytes longer: one chunk_modified of the new length, no bytes_unattested', async () => {
    const file = withLines((l) => l.map((x, i) => (i === 11 ? x.replace('"v":3', '"v":3,"x":"ab"') : x)));
    expect(file.length).toBe(7579);
    const r = await locate(file);
    expect(r.brief).toEqual([{ code: 'chunk_modified', offset: 0, length: 7579, line: 1, line_end: 26 }]);
    expect(r.messages[0]).toContain('one of lines 1–26 (bytes 0–7578)');
    expect(r.messages[0]).toContain(
      'now 7579 bytes where 7570 were attested (it was edited, or edited and bytes were added after it)',
    );
  });

  it('a line appended (the chunk intact at its offset): bytes_unattested over line 27 only', async () => {
    const extra = Buffer.from('{"v":3,"i":27,"text":"added later"}\n');
    const r = await locate(Buffer.concat([original, extra]));
    expect(r.brief).toEqual([
      { code: 'bytes_unattested', offset: 7570, length: extra.length, line: 27, line_end: 27 },
    ]);
    expect(r.messages[0]).toContain(`${extra.length} bytes (line 27, bytes 7570–${7570 + extra.length - 1})`);
  });

  it('the last of two chunks edited longer: one chunk_modified over its lines 14–26, the first clean', async () => {
    const half = Buffer.from(lines.slice(0, 13).join(''));
    const rest = original.subarray(half.length);
    const two = [
      { offset: 0, length: half.length, sha256: sha(half), seq: 1 },
      { offset: half.length, length: rest.length, sha256: sha(rest), seq: 2 },
    ];
    const file = withLines((l) => l.map((x, i) => (i === 19 ? x.replace('"v":3', '"v":3,"x":"ab"') : x)));
    const path = join(tmp.make(), 'w_two.jsonl');
    writeFileSync(path, file);
    const r = await locateChunks(path, 'w_two', two);
    expect(r.findings.map((f) => [f.code, f.offset, f.length, f.line, f.line_end, f.seq])).toEqual([
      ['chunk_modified', half.length, rest.length + 9, 14, 26, 2],
    ]);
  });

  it('the file cut at line 20: chunk_truncated over lines 1–19', async () => {
    const file = withLines((l) => l.slice(0, 19));
    const r = await locate(file);
    expect(r.brief).toEqual([{ code: 'chunk_truncated', offset: 0, length: 7570, line: 1, line_end: 19 }]);
  });
});
