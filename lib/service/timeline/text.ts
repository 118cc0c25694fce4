/**
 * Small pure helpers of the structured timeline (lib/service/timeline/page.ts): row anchors, an action's
 * one-line input summary, and cut excerpts of free text. Everything returned is escaped for reading
 * (`escapeControl`, lib/log/format/escape.ts) where it is one line; free text keeps its newlines only.
 */
import { escapeControl } from '../../log/format/escape.js';
import { cutText, graphemeFloor } from '../../log/format/text-cut.js';

/** Ids that make a readable anchor as they are; others are hashed (an id may hold anything). */
const SAFE_ID = /^[A-Za-z0-9_.:-]{1,120}$/;

/** 32-bit FNV-1a of `s` as 8 hex digits: a stable anchor for an id that cannot be one itself. */
function fnv1a(s: string): string {
  let h = 0x811c9dc5;
  for (let i = 0; i < s.length; i++) {
    h ^= s.charCodeAt(i);
    h = Math.imul(h, 0x01000193) >>> 0;
  }
  return h.toString(16).padStart(8, '0');
}

/**
 * The anchor of the row of event `id`: `e-<id>` (the first event with that id; a later one gets
 * `-<pos>` added by the walk), or `e-h<hash>` when the id is not made of letters, digits, `_.:-`.
 */
export function idAnchor(id: string): string {
  return SAFE_ID.test(id) ? `e-${id}` : `e-h${fnv1a(id)}`;
}

/** At most this many characters in an action's input summary. */
export const SUMMARY_CHARS = 200;
/** At most this many bytes (UTF-8) of an action's output. */
export const OUTPUT_BYTES = 2048;
/** At most this many bytes (UTF-8) of a message, an agent's output or a note on the page. */
export const TEXT_BYTES = 8192;

/** One line, escaped, cut to `max` characters with `…`. */
export function oneLine(s: string, max = SUMMARY_CHARS): string {
  const flat = escapeControl(s.replace(/\r?\n/g, ' ⏎ ').replace(/\t/g, ' '));
  return flat.length > max ? `${cutText(flat, max - 1)}…` : flat;
}

const SHELL_KEYS = ['command', 'cmd', 'script'] as const;
const PATH_KEYS = ['file_path', 'path', 'filePath', 'notebook_path', 'filename', 'file'] as const;

/**
 * An action's input as one line of at most 200 characters: the command of a shell tool (`command`,
 * `cmd`, `script`; a list of words joined by spaces), else the file path of an edit or read tool
 * (`file_path`, `path`, …), else compact JSON. Escaped.
 */
export function inputSummary(input: unknown): string {
  if (input === null || input === undefined) return '';
  if (typeof input === 'string') return oneLine(input);
  if (typeof input === 'object' && !Array.isArray(input)) {
    const o = input as Record<string, unknown>;
    for (const k of SHELL_KEYS) {
      const v = o[k];
      if (typeof v === 'string' && v) return oneLine(v);
      if (Array.isArray(v) && v.length > 0 && v.every((x) => typeof x === 'string'))
        return oneLine(v.join(' '));
    }
    for (const k of PATH_KEYS) {
      const v = o[k];
      if (typeof v === 'string' && v) return oneLine(v);
    }
  }
  return oneLine(JSON.stringify(input) ?? '');
}

/**
 * Free text cut to `maxBytes` of UTF-8 (never in the middle of a character: not of a code point, nor of a
 * grapheme cluster such as a flag or a ZWJ emoji, `graphemeFloor`), with how many bytes were left out. Newlines stay (the page shows it pre-wrapped), a tab is four spaces; every other control, bidi
 * and separator character is escaped.
 */
export function excerpt(text: string, maxBytes: number): { text: string; more_bytes: number } {
  const total = Buffer.byteLength(text, 'utf8');
  let shown = text;
  if (total > maxBytes) {
    shown = Buffer.from(text, 'utf8').subarray(0, maxBytes).toString('utf8');
    // A character cut in two decodes as U+FFFD at the end: drop it.
    if (shown.endsWith('\uFFFD') && !text.startsWith(shown)) shown = shown.slice(0, -1);
    // Each UTF-16 unit of `shown` is one of `text` (a lone surrogate decodes as one U+FFFD): the
    // cluster boundary is found in `text`, which still has the code point after the cut.
    shown = shown.slice(0, graphemeFloor(text, shown.length));
  }
  const more = total - Buffer.byteLength(shown, 'utf8');
  return { text: keepLines(shown), more_bytes: more };
}

/**
 * `escapeControl` of each line, the line breaks kept (a CR before a newline dropped) and a tab shown as
 * four spaces (no raw control character reaches the page, a tab included).
 */
export function keepLines(s: string): string {
  return s.replace(/\t/g, '    ').split(/\r?\n/).map(escapeControl).join('\n');
}

/** An action's output as text: a string as it is, anything else as indented JSON; '' for none. */
export function outputText(output: unknown): string {
  if (output === null || output === undefined) return '';
  return typeof output === 'string' ? output : (JSON.stringify(output, null, 2) ?? '');
}

/** A field's value as a string: '' for null and undefined, JSON for anything that is not a string. */
export function str(v: unknown): string {
  return typeof v === 'string' ? v : v === null || v === undefined ? '' : JSON.stringify(v);
}

/** A string field or null. */
export function strOrNull(v: unknown): string | null {
  return typeof v === 'string' ? v : null;
}
