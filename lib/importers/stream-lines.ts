/**
 * Reading a harness's own NDJSON output (Claude Code `--output-format stream-json`, `codex exec --json`)
 * for lib/importers/claude-code-stream.ts and codex-exec.ts: its lines parsed one by one, and its first JSON
 * object (which `hansard import` reads to tell one format of a tool from another). Nothing here writes.
 */
import { createReadStream } from 'node:fs';
import { splitLines } from '../log/reader.js';

export type Obj = Record<string, unknown>;
/** A plain object (not null, not an array). */
export const isObj = (v: unknown): v is Obj => typeof v === 'object' && v !== null && !Array.isArray(v);
/** `v` when it is a string, else null. */
export const str = (v: unknown): string | null => (typeof v === 'string' ? v : null);

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

const strictUtf8 = new TextDecoder('utf-8', { fatal: true });
const lossyUtf8 = new TextDecoder('utf-8');

/** `text` parsed: an object, `null` for other JSON, `undefined` for text that is not JSON (a BOM is ignored). */
export function parseObject(text: string): Obj | null | undefined {
  let v: unknown;
  try {
    v = JSON.parse(text.charCodeAt(0) === 0xfeff ? text.slice(1) : text);
  } catch {
    return undefined;
  }
  return isObj(v) ? v : null;
}

/**
 * The file's lines, parsed, the last one included whether or not a newline ends it (a `\r` before the
 * newline is dropped). Throws the file system's errors (ENOENT, EISDIR, EACCES) on the first read.
 */
export async function* readJsonLines(path: string): AsyncGenerator<JsonLine> {
  for await (const l of splitLines(createReadStream(path, { highWaterMark: 256 * 1024 }))) {
    let text: string;
    let utf8 = true;
    try {
      text = strictUtf8.decode(l.bytes);
    } catch {
      text = lossyUtf8.decode(l.bytes);
      utf8 = false;
    }
    text = text.replace(/\r$/, '');
    yield { line: l.line, text, utf8, obj: parseObject(text) };
  }
}

/** The file's first line that is a JSON object, parsed, or null when it has none. Throws as `readJsonLines`. */
export async function firstObject(path: string): Promise<Obj | null> {
  for await (const l of readJsonLines(path)) if (isObj(l.obj)) return l.obj;
  return null;
}
