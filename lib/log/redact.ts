/**
 * Credential redaction (DESIGN §3 `redacted`, §7). The writer runs every event's free-text fields through
 * `redactValue` before it cuts long fields, so a secret is never written and a 1 MiB cut can never leave
 * half of one on disk. Each match becomes `[REDACTED:<pattern name>]` and the event's `redacted` list names
 * the top-level fields that changed. `redactText` / `redactValue` are exported for other checks that must
 * refuse credentials (work reports, DESIGN §7).
 *
 * Speed: the writer is on a hook's 3.5 s path. A string is first tested against one case-insensitive
 * regex made of the built-in patterns' cheap hints (literal prefixes such as `AKIA`, `ghp_`, `eyJ`); a
 * string without any hint costs that one test. Only the patterns whose hint occurs are then run.
 * A pattern without a hint (a configured one, unless it gives one) runs on every string.
 *
 * @example
 * redactText(`key ${'AKIA' + 'IOSFODNN7EXAMPLE'}`) // { text: 'key [REDACTED:aws_access_key]', hits: ['aws_access_key'] }
 */
import type { KnownType } from './events.js';
import { BUILTIN_PATTERNS } from './redact-patterns.js';

export { BUILTIN_PATTERNS };

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
  /** Shannon entropy floor (bits per character) of the secret: a match below it is left alone */
  entropy?: number;
  /**
   * gitleaks' secret group: `n` ≥ 1 replaces capture group `n`; `0` the first non-empty capture group (the
   * whole match when there is none). Unset: the whole match, or the named group `secret`.
   */
  secretGroup?: number;
}

/** How the writer redacts: `openSession(dir, meta, { redact: { … } })`. */
export interface RedactOptions {
  /** more patterns, run after the built-in ones (a match both find is labelled by the built-in) */
  patterns?: readonly RedactPattern[];
  /** write free text as given: no pattern (built-in or configured) is run and every `redacted` is `[]` */
  disabled?: boolean;
  /**
   * record `HIDDEN_HOST` (`"redacted-host"`) as `writer.start` `meta.host` instead of the host name (wins
   * over `SessionMeta.host`). Independent of `disabled`. Not listed in `redacted`: the value says so itself.
   */
  hideHost?: boolean;
  /** record `HIDDEN_PID` (`0`, never a user process's pid) as `meta.pid`; as `hideHost` otherwise */
  hidePid?: boolean;
}

/** The `meta.host` written when `RedactOptions.hideHost` is set. */
export const HIDDEN_HOST = 'redacted-host';
/** The `meta.pid` written when `RedactOptions.hidePid` is set. */
export const HIDDEN_PID = 0;

/** Thrown for a configured pattern with a bad name or regex. */
export class RedactPatternError extends Error {
  override name = 'RedactPatternError';
}

/** `redactText`'s result: the text with each match replaced, and the names of the patterns that matched. */
export interface RedactTextResult {
  text: string;
  /** pattern names, each once, in the order of their first placeholder in `text`; `[]` when unchanged */
  hits: string[];
}

/** `redactValue`'s result. `value` is the argument itself (same reference) when nothing was found. */
export interface RedactValueResult {
  value: unknown;
  changed: boolean;
  /** as `RedactTextResult.hits`, over every string in the value */
  hits: string[];
}

/**
 * Replaces every credential in `s` by `[REDACTED:<name>]`. Overlapping matches are merged into one
 * placeholder, named by the pattern listed first. Reuse one `patterns` array: its regexes are compiled
 * once per array. Throws `RedactPatternError` only for a pattern that does not compile (`compilePatterns`
 * checks configured ones up front).
 */
export function redactText(
  s: string,
  patterns: readonly RedactPattern[] = BUILTIN_PATTERNS,
): RedactTextResult {
  const hits: string[] = [];
  const text = scan(s, planFor(patterns), 0, hits);
  return { text, hits };
}

/**
 * Redacts every string inside a JSON value (objects and arrays, recursively; keys are never changed). A
 * string under a key that looks like a label (`AWS_SECRET_ACCESS_KEY`, `Authorization`) is read with its
 * key, so `{ Authorization: 'Bearer …' }` is caught like the header line. Objects and arrays are copied
 * only along the paths that change; the argument is never modified. A `toJSON` method is followed, as
 * `JSON.stringify` would. A cycle is left alone (serializing it throws anyway).
 */
export function redactValue(
  v: unknown,
  patterns: readonly RedactPattern[] = BUILTIN_PATTERNS,
): RedactValueResult {
  const hits: string[] = [];
  const value = walk(v, '', planFor(patterns), hits, new Set());
  return { value, changed: value !== v, hits };
}

/** The free-text fields of each type that carries `redacted`, in field order (the fields the writer scans). */
export const FREE_TEXT_FIELDS: Readonly<Partial<Record<KnownType, readonly string[]>>> = {
  'writer.start': ['meta'],
  message: ['text'],
  'agent.action': ['input'],
  'agent.action_result': ['output', 'error'],
  'agent.output': ['text'],
  note: ['text'],
  correction: ['value', 'reason'],
};

/**
 * Redacts an event's free-text fields (`FREE_TEXT_FIELDS`). Returns the fields (the same object when
 * nothing changed) and the names of the fields that changed, in field order.
 */
export function redactEventFields(
  type: string,
  fields: Record<string, unknown>,
  patterns: readonly RedactPattern[] = BUILTIN_PATTERNS,
): { fields: Record<string, unknown>; redacted: string[] } {
  const names = Object.hasOwn(FREE_TEXT_FIELDS, type) ? FREE_TEXT_FIELDS[type as KnownType]! : [];
  let out = fields;
  const redacted: string[] = [];
  for (const k of names) {
    if (!Object.hasOwn(fields, k)) continue;
    const r = redactValue(fields[k], patterns);
    if (!r.changed) continue;
    if (out === fields) out = { ...fields };
    out[k] = r.value;
    redacted.push(k);
  }
  return { fields: out, redacted };
}

/**
 * Checks and compiles patterns (built-in ones first when `withBuiltins`), so a bad configured pattern
 * fails when a writer opens, not on its first event. Returns the list to pass to `redactText` & co.
 * @throws RedactPatternError for a name that is not 1–64 of `A-Za-z0-9_.-`, or a regex that does not compile
 */
export function compilePatterns(
  extra: readonly RedactPattern[] = [],
  withBuiltins = true,
): readonly RedactPattern[] {
  if (withBuiltins && extra.length === 0) return BUILTIN_PATTERNS;
  const all = [...(withBuiltins ? BUILTIN_PATTERNS : []), ...extra];
  for (const p of extra) {
    if (typeof p?.name !== 'string' || !/^[A-Za-z0-9_.-]{1,64}$/.test(p.name)) {
      throw new RedactPatternError(
        `redaction pattern name ${JSON.stringify(p?.name)} must be 1-64 letters, digits, _ . or -`,
      );
    }
    if (!(p.regex instanceof RegExp) && typeof p.regex !== 'string') {
      throw new RedactPatternError(`redaction pattern ${p.name}: regex must be a RegExp or a string`);
    }
  }
  planFor(all);
  return all;
}

// ---- internals ----

interface Compiled {
  name: string;
  placeholder: string;
  re: RegExp;
  /** the regex has a named group `secret`: replace only it */
  secret: boolean;
  /** this pattern's own precheck, or null: always run */
  hint: RegExp | null;
  /** position in the list: lower wins when two matches cover the same text */
  order: number;
  /** lower-cased keywords, or null: no keyword precheck */
  keywords: readonly string[] | null;
  entropy: number;
  /** gitleaks secret group (see `RedactPattern.secretGroup`); -1: not set */
  group: number;
}

interface Plan {
  patterns: Compiled[];
  /** the union of the hints; null when no pattern has one */
  anyHint: RegExp | null;
  /** every pattern's keywords as one global, case-insensitive alternation; null when none has any */
  anyKeyword: RegExp | null;
  /** lower-cased keyword → every keyword it contains (itself included): a match implies them all */
  implied: Map<string, readonly string[]>;
}

const plans = new WeakMap<readonly RedactPattern[], Plan>();

function planFor(patterns: readonly RedactPattern[]): Plan {
  let plan = plans.get(patterns);
  if (plan) return plan;
  const compiled = patterns.map((p, order) => compile(p, order));
  const hints = [...new Set(patterns.flatMap((p) => (p.hint ? [p.hint] : [])))];
  const anyHint = hints.length > 0 ? new RegExp(hints.map((h) => `(?:${h})`).join('|'), 'i') : null;
  const words = [...new Set(compiled.flatMap((c) => c.keywords ?? []))].sort((a, b) => b.length - a.length);
  const anyKeyword = words.length > 0 ? new RegExp(trieSource(words), 'gi') : null;
  const implied = new Map(words.map((w) => [w, words.filter((x) => w.includes(x))]));
  plan = { patterns: compiled, anyHint, anyKeyword, implied };
  plans.set(patterns, plan);
  return plan;
}

function compile(p: RedactPattern, order: number): Compiled {
  let source: string;
  let flags: string;
  try {
    source = typeof p.regex === 'string' ? p.regex : p.regex.source;
    flags = typeof p.regex === 'string' ? '' : p.regex.flags.replace(/[gdy]/g, '');
    const secret = /\(\?<secret>/.test(source);
    const group = typeof p.secretGroup === 'number' ? p.secretGroup : -1;
    const re = new RegExp(source, `${flags}g${secret || group >= 0 ? 'd' : ''}`);
    const hint = p.hint ? new RegExp(p.hint, 'i') : null;
    const keywords = p.keywords && p.keywords.length > 0 ? p.keywords.map((k) => k.toLowerCase()) : null;
    const entropy = p.entropy ?? 0;
    const placeholder = `[REDACTED:${p.name}]`;
    return { name: p.name, placeholder, re, secret, hint, order, keywords, entropy, group };
  } catch (err) {
    throw new RedactPatternError(`redaction pattern ${p.name}: ${(err as Error).message}`);
  }
}

interface Range {
  start: number;
  end: number;
  c: Compiled;
}

/**
 * Redacts `s`, of which the first `from` characters are context only (a label read with a value): a
 * match that starts there is kept from `from` on, and the context is not returned.
 */
function scan(s: string, plan: Plan, from: number, hits: string[]): string {
  const hinted = plan.anyHint?.test(s) === true;
  const found = keywordsIn(s, plan);
  let ranges: Range[] | null = null;
  for (const c of plan.patterns) {
    if (c.hint !== null && (!hinted || !c.hint.test(s))) continue;
    if (c.keywords !== null && (found === null || !c.keywords.some((k) => found.has(k)))) continue;
    const re = c.re;
    re.lastIndex = 0;
    for (let m = re.exec(s); m !== null; m = re.exec(s)) {
      if (m[0].length === 0) re.lastIndex += 1;
      let start = m.index;
      let end = start + m[0].length;
      if (c.secret) {
        const g = m.indices?.groups?.secret;
        if (!g) continue;
        [start, end] = g;
      } else if (c.group >= 0) {
        const g = secretGroup(m, c.group);
        if (g === null) continue;
        [start, end] = g;
      }
      if (end <= from || end <= start) continue;
      if (c.entropy > 0 && shannon(s.slice(start, end)) < c.entropy) continue;
      ranges ??= [];
      ranges.push({ start: Math.max(start, from), end, c });
    }
  }
  if (ranges === null) return from === 0 ? s : s.slice(from);
  ranges.sort((a, b) => a.start - b.start || b.end - a.end || a.c.order - b.c.order);
  let out = '';
  let at = from;
  let i = 0;
  while (i < ranges.length) {
    const first = ranges[i]!;
    let end = first.end;
    for (i += 1; i < ranges.length && ranges[i]!.start < end; i++) end = Math.max(end, ranges[i]!.end);
    out += s.slice(at, first.start) + first.c.placeholder;
    if (!hits.includes(first.c.name)) hits.push(first.c.name);
    at = end;
  }
  return out + s.slice(at);
}

/**
 * One regex source matching any of `words` (lower case), factored as a trie (`a(?:b|c)` rather than
 * `ab|ac`): irregexp then tests a position against one character class instead of every keyword, which
 * made the scan about N× faster on 231 keywords. Longer words come first at each node.
 */
function trieSource(words: readonly string[]): string {
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

/** The keywords that occur in `s` (lower-cased), or null when none does. */
function keywordsIn(s: string, plan: Plan): Set<string> | null {
  const re = plan.anyKeyword;
  if (re === null) return null;
  let found: Set<string> | null = null;
  re.lastIndex = 0;
  // Step one character past each match start, so overlapping keywords (`key` in `apikey`) are all seen.
  for (let m = re.exec(s); m !== null; m = re.exec(s)) {
    found ??= new Set();
    for (const k of plan.implied.get(m[0].toLowerCase()) ?? []) found.add(k);
    re.lastIndex = m.index + 1;
  }
  return found;
}

/** gitleaks' choice of secret: group `n`, or (n = 0) the first non-empty group, else the whole match. */
function secretGroup(m: RegExpExecArray, n: number): [number, number] | null {
  const ind = m.indices;
  if (!ind) return null;
  if (n > 0) return ind[n] ?? null;
  for (let i = 1; i < ind.length; i++) {
    const g = ind[i];
    if (g && g[1] > g[0]) return g;
  }
  return [m.index, m.index + m[0].length];
}

/** Shannon entropy of `s` in bits per character (gitleaks' measure). */
export function shannon(s: string): number {
  if (s.length === 0) return 0;
  const counts = new Map<string, number>();
  for (const ch of s) counts.set(ch, (counts.get(ch) ?? 0) + 1);
  let h = 0;
  for (const n of counts.values()) {
    const p = n / s.length;
    h -= p * Math.log2(p);
  }
  return h;
}

function walk(v: unknown, key: string, plan: Plan, hits: string[], stack: Set<object>): unknown {
  if (typeof v === 'string') {
    // A label-like key is read with its value (`Authorization: Bearer …`); the key itself is never changed.
    if (key !== '' && (plan.anyHint?.test(key) === true || keywordsIn(key, plan) !== null)) {
      const context = `${key}: `;
      const out = scan(context + v, plan, context.length, hits);
      return out === v ? v : out;
    }
    return scan(v, plan, 0, hits);
  }
  if (typeof v !== 'object' || v === null || stack.has(v)) return v;
  if (!Array.isArray(v) && typeof (v as { toJSON?: unknown }).toJSON === 'function') {
    const json = (v as { toJSON: (k: string) => unknown }).toJSON(key);
    if (json === v) return v;
    const r = walk(json, key, plan, hits, stack);
    return r === json ? v : r;
  }
  stack.add(v);
  try {
    if (Array.isArray(v)) {
      let out: unknown[] | null = null;
      for (let i = 0; i < v.length; i++) {
        const r = walk(v[i], '', plan, hits, stack);
        if (r === v[i]) continue;
        out ??= v.slice();
        out[i] = r;
      }
      return out ?? v;
    }
    let out: Record<string, unknown> | null = null;
    for (const k of Object.keys(v)) {
      const item = (v as Record<string, unknown>)[k];
      const r = walk(item, k, plan, hits, stack);
      if (r === item) continue;
      out ??= { ...(v as Record<string, unknown>) };
      out[k] = r;
    }
    return out ?? v;
  } finally {
    stack.delete(v);
  }
}
