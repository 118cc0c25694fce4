/**
 * Which scripts a character is written in, as UTS #39 "Unicode Security Mechanisms" §5.1 (Mixed-Script
 * Detection) reads them: a character's Script_Extensions, augmented with the writing systems that mix
 * scripts (`Jpan`: Han, Hiragana, Katakana; `Kore`: Han, Hangul; `Hanb`: Han, Bopomofo); Common and
 * Inherited are of every script, so they say nothing about a word's script. lib/log/format/text-normal.ts asks
 * this of the letters that look like punctuation (Katakana `ノ`, Coptic `Ⳇ`, the modifier letter `ː`)
 * and of their neighbours, to tell a letter of the word's own script from a look-alike slipped in.
 *
 * The property values come from V8's `\p{Script_Extensions=…}` (the ICU Node ships: Unicode 17 in Node
 * 20.20); the list of their names from `unicode-match-property-value-ecmascript` (mathiasbynens, MIT:
 * the values ECMAScript accepts, from Unicode's PropertyValueAliases.txt). A name V8 does not know is
 * skipped.
 */
import valueAliases from 'unicode-match-property-value-ecmascript/data/mappings.js';

/** UTS #39 §5.1's augmentation: the writing systems each script belongs to besides itself. */
const AUGMENT: Readonly<Record<string, readonly string[]>> = {
  Han: ['Hanb', 'Jpan', 'Kore'],
  Hiragana: ['Jpan'],
  Katakana: ['Jpan'],
  Hangul: ['Kore'],
  Bopomofo: ['Hanb'],
};

/**
 * Reads characters' scripts for one text (`foldConfusables` makes one per call, when a look-alike needs
 * it): the ~170 property tests are built once per reader (about 0.3 ms) and each character's answer is
 * kept for the reader's life, so a long text costs one test run per distinct character.
 */
export class ScriptReader {
  private readonly scripts = new Map<string, RegExp>();
  private readonly known = new Map<string, readonly string[]>();

  constructor() {
    for (const name of new Set(valueAliases.get('Script')?.values())) {
      if (name === 'Common' || name === 'Inherited') continue;
      try {
        this.scripts.set(name, new RegExp(`\\p{scx=${name}}`, 'u'));
      } catch {
        // a name this V8 does not know (Katakana_Or_Hiragana is an alias only)
      }
    }
  }

  /**
   * The scripts `ch` (one code point) is written in, augmented (see the module's doc): `['Latin']` for
   * `a`, `['Katakana', 'Jpan']` for `ノ`, `[]` for a character of Common or Inherited only (`:`, `1`,
   * `ː` U+02D0, a combining accent).
   */
  scriptsOf(ch: string): readonly string[] {
    let got = this.known.get(ch);
    if (got === undefined) {
      const own = [...this.scripts].filter(([, re]) => re.test(ch)).map(([name]) => name);
      got = [...new Set(own.flatMap((s) => [s, ...(AUGMENT[s] ?? [])]))];
      this.known.set(ch, got);
    }
    return got;
  }

  /** Whether `a` and `b` (one code point each) share a script (augmented); never when either has none. */
  share(a: string, b: string): boolean {
    const theirs = this.scriptsOf(b);
    return this.scriptsOf(a).some((s) => theirs.includes(s));
  }
}
