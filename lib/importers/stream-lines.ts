/**
 * Reading a harness's own NDJSON output (Claude Code `--output-format stream-json`, `codex exec --json`)
 * for lib/importers/claude-code-stream.ts and codex-exec.ts: its lines parsed one by one, and its first JSON
 * object (which `hansard import` reads to tell one format of a tool from another). Nothing here writes.
 */
import { createReadStream } from 'node:fs';
import { splitLines } from '../log/read/reader.js';
import { decodeLine, isObj, type Obj, parseObject } from './json-line.js';

/** One line of the file. */
export interface JsonLine {
  /** 1-based line number */
  line: number;
  /** the line's text, without its newline (a lossy decoding when `utf8` is false) */
  text: string;
  /** false when the bytes are not valid UTF-8 */
  utf8: boolean;
  /** the parsed line: an object, `null` for JSON that is not an object, `undefined` for text that is not JSON */
  obj: Obj | null | undefined;
}

/**
 * The file's lines, parsed, the last one included whether or not a newline ends it (a `\r` before the
 * newline is dropped). Throws the file system's errors (ENOENT, EISDIR, EACCES) on the first read.
 */
export async function* readJsonLines(path: string): AsyncGenerator<JsonLine> {
  for await (const l of splitLines(createReadStream(path, { highWaterMark: 256 * 1024 }))) {
    const decoded = decodeLine(l.bytes);
    const text = decoded.text.replace(/\r$/, '');
    const utf8 = decoded.utf8;
    yield { line: l.line, text, utf8, obj: parseObject(text) };
  }
}

/** The file's first line that is a JSON object, parsed, or null when it has none. Throws as `readJsonLines`. */
export async function firstObject(path: string): Promise<Obj | null> {
  for await (const l of readJsonLines(path)) if (isObj(l.obj)) return l.obj;
  return null;
}
