/**
 * A session directory on disk (seed 001): `<sid>/` holding one `w_….jsonl` segment per writer.
 */
import { createReadStream, readdirSync } from 'node:fs';
import { basename, join } from 'node:path';
import { parseLine } from './codec.js';
import { isId } from './ids.js';
import type { MergeSource } from './merge.js';
import { readSegmentFileBatches, splitLines } from './reader.js';

/** A segment file of a session directory. */
export interface SegmentFile {
  /** the writer id, from the file name */
  w: string;
  path: string;
}

/**
 * The segments of a session directory, sorted by writer id. Files that are not `w_<ULID>.jsonl` are
 * ignored (they are not ours). Throws the file system's error (ENOENT) when `dir` cannot be read.
 */
export function listSegments(dir: string): SegmentFile[] {
  return readdirSync(dir, { withFileTypes: true })
    .filter((d) => d.isFile() && d.name.endsWith('.jsonl') && isId('w', d.name.slice(0, -6)))
    .map((d) => ({ w: d.name.slice(0, -6), path: join(dir, d.name) }))
    .sort((a, b) => (a.w < b.w ? -1 : a.w > b.w ? 1 : 0));
}

/** Merge sources for every segment of a session directory (see `mergeSegments`). */
export function sessionDirSources(dir: string): MergeSource[] {
  return listSegments(dir).map((s) => ({ w: s.w, batches: readSegmentFileBatches(s.path) }));
}

/**
 * The session id of a directory: its name when that is an `s_…` id, else the `sid` of the first event of
 * its first readable segment. Returns null when neither gives one.
 */
export async function sessionIdOf(dir: string): Promise<string | null> {
  const name = basename(dir);
  if (isId('s', name)) return name;
  for (const seg of listSegments(dir)) {
    for await (const l of splitLines(createReadStream(seg.path, { end: 1024 * 1024 }))) {
      const p = parseLine(l.bytes, l.line, l.offset, l.complete);
      if (p.ok && isId('s', p.event.sid)) return p.event.sid;
      break;
    }
  }
  return null;
}
