/**
 * The JSON values every importer reads a record line into, written once for all of them (Claude Code
 * transcripts and streams, Codex rollouts and `exec --json`, hcn streams): `Obj`, `isObj`, `str`, a line's
 * bytes decoded (`decodeLine`) and parsed (`parseObject`). Pure; nothing here reads a file or writes.
 */

export type Obj = Record<string, unknown>;
/** A plain object (not null, not an array). */
export const isObj = (v: unknown): v is Obj => typeof v === 'object' && v !== null && !Array.isArray(v);
/** `v` when it is a string, else null. */
export const str = (v: unknown): string | null => (typeof v === 'string' ? v : null);

/**
 * One line parsed: the object, `null` for JSON that is not an object, `undefined` for text that is not
 * JSON (a leading BOM is ignored).
 * @example parseObject('{"a":1}') // { a: 1 }; parseObject('[1]') // null; parseObject('x') // undefined
 */
export function parseObject(text: string): Obj | null | undefined {
  let v: unknown;
  try {
    v = JSON.parse(text.charCodeAt(0) === 0xfeff ? text.slice(1) : text);
  } catch {
    return undefined;
  }
  return isObj(v) ? v : null;
}

const strictUtf8 = new TextDecoder('utf-8', { fatal: true });
const lossyUtf8 = new TextDecoder('utf-8');

/**
 * A line's bytes as text: `utf8` false when they are not valid UTF-8, `text` then a lossy decoding
 * (U+FFFD for each bad sequence).
 */
export function decodeLine(bytes: Uint8Array): { text: string; utf8: boolean } {
  try {
    return { text: strictUtf8.decode(bytes), utf8: true };
  } catch {
    return { text: lossyUtf8.decode(bytes), utf8: false };
  }
}
