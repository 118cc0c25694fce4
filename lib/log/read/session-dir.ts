/**
 * A session directory on disk (seed 001): `<sid>/` holding one `w_….jsonl` segment per writer; and a
 * segment as the replay reads it (`ReplaySegment`, re-exported by lib/log/replay/replay.ts), here below the
 * replay and the block reader (lib/log/read/segment-blocks.ts) that both take it, with the file-range stream
 * both open a file segment with.
 */
import { createReadStream, readdirSync } from 'node:fs';
import { basename, join } from 'node:path';
import { parseLine } from '../format/codec.js';
import { isId } from '../format/ids.js';
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

/** A segment replay can read from its first byte as often as it needs to (pass 1 and pass 2). */
export interface ReplaySegment {
  /** the writer id (the segment's name), the merge's tie-break */
  w: string;
  /**
   * A new stream of the segment's bytes from byte `start`; every call must give the same bytes.
   * `chunkBytes` is a hint for the size of the chunks (pass 1 asks for large ones), which a source may ignore.
   * `signal`, when aborted, ends the stream with an error and releases what it holds (a file, a request).
   * `start` (default 0, the first byte): a bounded reader (lib/log/read/segment-blocks.ts) that closed the
   * stream to free its descriptor reopens it where it stopped, so a source must honour it.
   */
  open: (
    chunkBytes?: number,
    signal?: AbortSignal,
    start?: number,
  ) => AsyncIterable<Uint8Array> | Iterable<Uint8Array>;
}

/**
 * Bytes `[start, size)` of the file at `path`, in chunks of up to `chunkBytes`, opened only when first read: a stream that is closed before it starts
 * (a merge that stops early) never holds a descriptor.
 */
export async function* readFileRange(
  path: string,
  start: number,
  size: number,
  chunkBytes: number,
  signal: AbortSignal | undefined,
): AsyncGenerator<Uint8Array> {
  // Never with an aborted signal: Node 20 then leaks the descriptor (see FsSegmentStore.readSegment).
  signal?.throwIfAborted();
  yield* createReadStream(path, {
    start,
    end: size - 1,
    highWaterMark: chunkBytes,
    ...(signal ? { signal } : {}),
  });
}
