/**
 * Pure helpers of redaction's rule matching (lib/log/redact/redact.ts): the shape of a rule (`RedactPattern`, here
 * below redact.ts and the pattern tables it loads, which re-exports it), the keyword prefilter's regex and
 * gitleaks' entropy measure.
 */

/** A credential shape. The built-in table is `BUILTIN_PATTERNS`; users add theirs through `RedactOptions`. */
export interface RedactPattern {
  /** the label in `[REDACTED:<name>]` and in `hits`: 1–64 of `A-Za-z0-9_.-` */
  name: string;
  /**
   * What to replace: the whole match, or, when the regex has a named group `secret`, only that group (so
   * `Authorization: Bearer` and a URL's user name stay readable). A string is a regex source without flags.
   * Flags `i`, `m`, `s`, `u`, `v` are kept; `g` (and `d` when needed) are added; `y` is dropped.
   */
  regex: RegExp | string;
  /** what it catches and why it is shaped so (the built-in table documents itself with these) */
  comment?: string;
  /**
   * A regex source (matched case-insensitively) that every string `regex` matches must contain: the cheap
   * precheck. Leave it out and the pattern runs on every string.
   */
  hint?: string;
  /**
   * Literal words (any case) of which one must occur for the pattern to run: the gitleaks-style precheck.
   * All patterns' keywords are found in one pass per string, so hundreds of rules stay cheap.
   */
  keywords?: readonly string[];
  /**
   * Shannon entropy floor (bits per character) of the secret: a match below it is left alone. Whatever
   * the floor, a placeholder (`ghp_` + 36 `x`, `********`) and a secret made only of variable references
   * (`$USER:$TOKEN`) are never taken.
   */
  entropy?: number;
  /** A secret this regex matches is not one (a variable, a placeholder): the match is left alone */
  reject?: RegExp;
  /**
   * gitleaks' secret group: `n` ≥ 1 replaces capture group `n`; `0` the first non-empty capture group (the
   * whole match when there is none). Unset: the whole match, or the named group `secret`.
   */
  secretGroup?: number;
}

/**
 * One regex source matching any of `words` (lower case), factored as a trie (`a(?:b|c)` rather than
 * `ab|ac`): irregexp then tests a position against one character class instead of every keyword, which
 * made the scan about N× faster on 231 keywords. Longer words come first at each node.
 */
export function trieSource(words: readonly string[]): string {
  interface Node {
    end: boolean;
    next: Map<string, Node>;
  }
  const root: Node = { end: false, next: new Map() };
  for (const w of words) {
    let n = root;
    for (const ch of w) {
      let c = n.next.get(ch);
      if (!c) {
        c = { end: false, next: new Map() };
        n.next.set(ch, c);
      }
      n = c;
    }
    n.end = true;
  }
  const esc = (ch: string) => ch.replace(/[.*+?^${}()|[\]\\/-]/g, '\\$&');
  const src = (n: Node): string => {
    const alts = [...n.next].map(([ch, c]) => esc(ch) + src(c));
    if (alts.length === 0) return '';
    const body = alts.length === 1 ? alts[0]! : `(?:${alts.join('|')})`;
    if (!n.end) return body;
    return alts.length === 1 && alts[0]!.length === 1 ? `${body}?` : `(?:${body})?`;
  };
  return src(root);
}

/** Shannon entropy of `s` in bits per character (gitleaks' measure). */
export function shannon(s: string): number {
  if (s.length === 0) return 0;
  // Every match of every pattern is measured (the placeholder floor): count ASCII in a reused table.
  let ascii = true;
  for (let i = 0; i < s.length; i++) {
    if (s.charCodeAt(i) > 127) {
      ascii = false;
      break;
    }
  }
  if (ascii) {
    const t = ASCII_COUNTS;
    for (let i = 0; i < s.length; i++) t[s.charCodeAt(i)]! += 1;
    let h = 0;
    for (let i = 0; i < s.length; i++) {
      const c = s.charCodeAt(i);
      const n = t[c]!;
      if (n === 0) continue;
      const p = n / s.length;
      h -= p * Math.log2(p);
      t[c] = 0;
    }
    return h;
  }
  const counts = new Map<string, number>();
  for (const ch of s) counts.set(ch, (counts.get(ch) ?? 0) + 1);
  let h = 0;
  for (const n of counts.values()) {
    const p = n / s.length;
    h -= p * Math.log2(p);
  }
  return h;
}

/** `shannon`'s count table for ASCII text; every entry is back to 0 when it returns. */
const ASCII_COUNTS = new Uint32Array(128);
