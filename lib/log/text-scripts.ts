/**
 * Which scripts a character is written in, as UTS #39 "Unicode Security Mechanisms" §5.1 (Mixed-Script
 * Detection) reads them: a character's Script_Extensions, augmented so that Han, Hiragana and Katakana
 * are one writing system (Japanese), Han and Hangul another (Korean), Han and Bopomofo a third; Common and
 * Inherited are of every script, so they say nothing about a word's script. lib/log/text-normal.ts asks
 * this of the letters that look like punctuation (Katakana `ノ`, Coptic `Ⳇ`, the modifier letter `ː`)
 * and of their neighbours, to tell a letter of the word's own script from a look-alike slipped in.
 *
 * The property values come from V8's `\p{Script_Extensions=…}` (the ICU Node ships: Unicode 17 in Node
 * 20.20); the list of their names from `unicode-match-property-value-ecmascript` (mathiasbynens, MIT:
 * the values ECMAScript accepts, from Unicode's PropertyValueAliases.txt). A name V8 does not know is
 * skipped.
 */
import valueAliases from 'unicode-match-property-value-ecmascript/data/mappings.js';

/** Every Script name V8 accepts in `\p{scx=…}`, but Common and Inherited, each with its test. */
const SCRIPTS: ReadonlyMap<string, RegExp> = (() => {
  const out = new Map<string, RegExp>();
  for (const name of new Set(valueAliases.get('Script')?.values() ?? [])) {
    if (name === 'Common' || name === 'Inherited') continue;
    try {
      out.set(name, new RegExp(`^\\p{scx=${name}}$`, 'u'));
    } catch {
      // a name this V8 does not know (Katakana_Or_Hiragana is an alias only)
    }
  }
  return out;
})();

/** The scripts that count as one with each (UTS #39 §5.1's augmented script sets, by name). */
const AUGMENT: Readonly<Record<string, readonly string[]>> = {
  Han: ['Hiragana', 'Katakana', 'Hangul', 'Bopomofo'],
  Hiragana: ['Han', 'Katakana'],
  Katakana: ['Han', 'Hiragana'],
  Hangul: ['Han'],
  Bopomofo: ['Han'],
};

const cache = new Map<string, readonly string[]>();

/**
 * The scripts `ch` (one code point) is written in, augmented (see the module's doc): `['Latin']` for `a`,
 * `['Katakana', 'Han', 'Hiragana']` for `ノ`, `[]` for a character of Common or Inherited only (`:`,
 * `1`, `ː` U+02D0, a combining accent). Cached per character.
 */
export function scriptsOf(ch: string): readonly string[] {
  let got = cache.get(ch);
  if (got) return got;
  const own = [...SCRIPTS].filter(([, re]) => re.test(ch)).map(([name]) => name);
  got = [...new Set(own.flatMap((s) => [s, ...(AUGMENT[s] ?? [])]))];
  if (cache.size < 4096) cache.set(ch, got);
  return got;
}

/** Whether `a` and `b` (one code point each) share a script (augmented); never when either has none. */
export function shareScript(a: string, b: string): boolean {
  const theirs = scriptsOf(b);
  return scriptsOf(a).some((s) => theirs.includes(s));
}
