/**
 * The text the content rules read (lib/log/format/text-normal.ts, issue 24 item 4): invisible code points
 * dropped by Unicode's Default_Ignorable_Code_Point and Cf, NFKC, and UTS #39 confusables folded to ASCII
 * with the prototype alphabet's own folds undone; ASCII and the letters of other scripts kept; letters
 * that look like punctuation folded where they stand apart from their word's script; the readings of
 * `l`/`I`/`1`/`i` and `O`/`0`/`o` look-alikes and of blank fillers.
 */
import { describe, expect, it } from 'vitest';
import {
  foldConfusables,
  LINE_BREAK,
  normalReadings,
  normalText,
  visibleText,
} from '../../lib/log/format/text-normal.js';
import { ScriptReader } from '../../lib/log/format/text-scripts.js';

describe('normalText', () => {
  it('drops every default-ignorable code point, not only Cf: U+034F, variation selectors, Hangul fillers, tags', () => {
    for (const c of [
      '\u034f',
      '\ufe0f',
      '\ufe00',
      '\u3164',
      '\u115f',
      '\u1160',
      '\uffa0',
      '\u180b',
      '\u{e0041}',
      '\u{e01ef}',
    ]) {
      expect(normalText(`gh${c}p_`), JSON.stringify(c)).toBe('ghp_');
    }
    // U+0600 ARABIC NUMBER SIGN is Cf without being default-ignorable: dropped as format too.
    expect(visibleText('a\u0600b')).toBe('ab');
  });

  it('NFKC-normalizes before folding, and drops what NFKC makes ignorable', () => {
    expect(normalText('\uff47\uff48\uff50\uff3f')).toBe('ghp_');
    expect(normalText('\u{1d400}\u{1d40a}')).toBe('AK');
    // halfwidth Hangul filler U+FFA0 is U+3164 after NFKC; both are ignorable
    expect(visibleText('a\uffa0b')).toBe('ab');
  });

  it('folds letters of other scripts that UTS #39 gives an ASCII prototype', () => {
    expect(normalText('\u0410KIA')).toBe('AKIA');
    expect(normalText('\u0391\u039a\u0399\u0391')).toBe('AKIA');
    expect(normalText('\u0455ud\u043e')).toBe('sudo');
    expect(normalText('g\u0570p')).toBe('ghp');
  });

  it('gives back the ASCII the prototype alphabet lacks: I, 1, |, 0, m and " by what the character is', () => {
    expect(normalText('\u0406')).toBe('I'); // Cyrillic І, uppercase: prototype l
    expect(normalText('\u0661')).toBe('1'); // Arabic-Indic one, a number: prototype l
    expect(normalText('\u2223')).toBe('|'); // DIVIDES, a symbol: prototype l
    expect(normalText('\u05d5')).toBe('l'); // Hebrew vav, a lowercase-like letter: prototype l
    expect(normalText('\u3007')).toBe('0'); // ideographic number zero: prototype O
    expect(normalText('\u041e')).toBe('O'); // Cyrillic О
    expect(normalText('\u{11700}')).toBe('m'); // Ahom KA: prototype rn
    expect(normalText('\u201cx\u201d')).toBe('"x"'); // prototype ''
    expect(normalText('\u2018x\u2019')).toBe("'x'");
  });

  it('folds symbols and punctuation to ASCII punctuation: slashes, hyphens, colons, the Greek question mark', () => {
    expect(normalText('\u2215home\u2044etc\u29f8srv\u2571opt')).toBe('/home/etc/srv/opt');
    expect(normalText('C\u2236\u2216Users')).toBe('C:\\Users');
    expect(normalText('\u2010\u2010watch \u2212x')).toBe('--watch -x');
    expect(normalText('a\u037e b')).toBe('a; b');
    expect(normalText('\u00d7')).toBe('x');
  });

  it('keeps letters and digits that look like punctuation: Katakana ノ, Hebrew י, Arabic-Indic zero', () => {
    for (const s of ['\u30ce', '\u4e3f', '\u05d9', '\u0660', '\u02d0']) expect(normalText(s), s).toBe(s);
    // letters whose prototype mixes a letter and punctuation: Ɓ is 'B, Ƈ is C'
    expect(normalText('\u0181\u0187')).toBe('\u0181\u0187');
  });

  it('keeps a character whose prototype is not all ASCII, and a number whose prototype is another letter', () => {
    // ⨩ is -̓ (ASCII then a combining mark), ⋗ is ·> (a middle dot then ASCII)
    expect(normalText('\u2a29 \u22d7')).toBe('\u2a29 \u22d7');
    // Devanagari zero is o, Arabic-Indic seven is V: only O becomes 0 for a number
    expect(normalText('\u0966\u0667')).toBe('oV');
  });

  it('leaves ASCII exactly as it is (the prototype alphabet would change m, 1, I, 0, | and quotes)', () => {
    const ascii = Array.from({ length: 95 }, (_, i) => String.fromCharCode(32 + i)).join('');
    expect(normalText(ascii)).toBe(ascii);
    expect(foldConfusables('rm -rf m1I0|"`')).toBe('rm -rf m1I0|"`');
  });

  it('keeps other scripts, accents and emoji readable (only their ASCII look-alikes change)', () => {
    expect(normalText('\u30d1\u30fc\u30b5\u30fc\u3092\u4fee\u6b63')).toBe(
      '\u30d1\u30fc\u30b5\u30fc\u3092\u4fee\u6b63',
    );
    expect(normalText('Gr\u00f6\u00dfe \u00e4ndern')).toBe('Gr\u00f6\u00dfe \u00e4ndern');
    expect(normalText('\u{1f680} \u2764\ufe0f')).toBe('\u{1f680} \u2764');
    expect(normalText('\ud55c\uad6d\uc5b4')).toBe('\ud55c\uad6d\uc5b4');
  });

  it('keeps line terminators in visibleText (LINE_BREAK is tested there); folding makes U+2028 a space', () => {
    for (const b of ['\n', '\r', '\v', '\f', '\u0085', '\u2028', '\u2029']) {
      expect(LINE_BREAK.test(visibleText(`a${b}b`)), JSON.stringify(b)).toBe(true);
    }
    expect(normalText('a\u2028b')).toBe('a b');
    expect(LINE_BREAK.test('a\tb')).toBe(false);
  });

  it('drops the fillers that render as nothing without being default-ignorable or Cf: U+16FE4, U+2800, U+1D159', () => {
    for (const c of ['\u{16fe4}', '\u2800', '\u{1d159}']) {
      expect(/\p{Default_Ignorable_Code_Point}|\p{Cf}/u.test(c), JSON.stringify(c)).toBe(false);
      expect(visibleText(`gh${c}p_`), JSON.stringify(c)).toBe('ghp_');
    }
  });

  it('reads a letter that looks like a slash or a colon as one where it is not of its word script', () => {
    expect(normalText('editing \u2cc6home\u2cc6ann')).toBe('editing /home/ann'); // Coptic Ⳇ
    expect(normalText('reading \u3033etc\u3033passwd')).toBe('reading /etc/passwd'); // U+3033, kana
    expect(normalText('x. system\u02d0 grant')).toBe('x. system: grant'); // ː, of no script
    expect(normalText('system\ua4fd grant')).toBe('system: grant'); // Lisu ꓽ
    expect(normalText('\u4e36\u4e36host\u4e36share')).toBe('\\\\host\\share'); // Han 丶, two in a row
    expect(normalText('\u30ceetc')).toBe('/etc'); // Katakana ノ before Latin: its only neighbour
    // between Japanese and Latin: one neighbour of another script is enough
    expect(normalText('\u30c6\u3033home\u3033ann')).toBe('\u30c6/home/ann');
    expect(normalText('\u7de8\u96c6\u30cehome')).toBe('\u7de8\u96c6/home');
    // the neighbour is the nearest letter of a script: digits, accents and punctuation are skipped
    expect(normalText('v1\u06602')).toBe('v1.2');
    expect(normalText('a-\u0301\u2cc6b')).toBe('a-\u0301/b');
    // a neighbour outside the basic plane (Old Italic 𐌀) is read whole; a letter with no look-alike too
    expect(normalText('\u{10300}\u2cc6')).toBe('\u{10300}/');
    expect(normalText('\u0436\u2cc6')).toBe('\u0436/');
    // a prototype of two punctuation characters: ʺ (U+02BA, Common) is '' and so "
    expect(normalText('a\u02bab')).toBe('a"b');
  });

  it('keeps a letter that looks like punctuation among letters of its own script, or with none around it in its word', () => {
    for (const s of [
      '\u30c6\u30b9\u30c8\u30ce\u30d5\u30a1\u30a4\u30eb', // テストノファイル: ノ between Katakana
      '\u30ce\u30fc\u30c9', // ノード: ー is Katakana and Hiragana
      '\u6771\u4eac\u30ce\u7a7a', // 東京ノ空: Han and Katakana are one writing system (Japanese)
      '\u05e9\u05d9\u05e8', // שיר: Hebrew yod between Hebrew letters
      '\u0661\u0660\u0660', // Arabic-Indic zero among Arabic-Indic digits
      '\u2c81\u2cc6\u2c83', // Coptic Ⳇ between Coptic letters
      'home \u2cc6 ann', // alone in its word
      '1\u02d02', // among digits only: no letter tells a script
      '\u30ce',
      'a\v\u2cc6',
      '\u2c81\u0301\u2cc6', // a combining mark is no neighbour: Coptic ⲁ is
      '\u2c81\u093f\u2cc6\u2c83', // neither is a mark of another script (Devanagari ि)
      // letters whose prototype mixes a letter and punctuation (Ƈ is C', Ɓ is 'B) are never folded
      '\u0187\u0436',
      '\u0181\u0436',
    ]) {
      expect(normalText(s), s).toBe(s.replace('\u0661', '1'));
    }
    // after a blank that is not ASCII (U+1680 OGHAM SPACE MARK, itself read as a space): a word of its own
    expect(normalText('x\u1680\u2cc6')).toBe('x \u2cc6');
  });

  it('says which scripts a character is of, the writing systems of UTS #39 (Jpan, Kore, Hanb) added', () => {
    const r = new ScriptReader();
    expect(r.scriptsOf('a')).toEqual(['Latin']);
    expect(r.scriptsOf('\u30ce')).toEqual(['Katakana', 'Jpan']);
    expect(r.scriptsOf('\u3072')).toEqual(['Hiragana', 'Jpan']);
    expect(r.scriptsOf('\ud55c')).toEqual(['Hangul', 'Kore']);
    expect(r.scriptsOf('\u3105')).toEqual(['Bopomofo', 'Hanb']);
    expect([...r.scriptsOf('\u6771')].sort()).toEqual(['Han', 'Hanb', 'Jpan', 'Kore']);
    // ー (U+30FC) is of Hiragana and Katakana (Script_Extensions); ASCII punctuation, digits, a mark: none
    expect(r.scriptsOf('\u30fc')).toEqual(['Hiragana', 'Jpan', 'Katakana']);
    expect(r.scriptsOf(':')).toEqual([]);
    expect(r.scriptsOf('1')).toEqual([]);
    expect(r.scriptsOf('\u20d0')).toEqual([]); // a combining mark of Inherited only
    expect(r.scriptsOf('\u02d0')).toEqual([]);
    expect(r.scriptsOf('\u02d0')).toBe(r.scriptsOf('\u02d0')); // kept for the reader's life
    expect(r.share('\u30ce', '\u6771')).toBe(true); // Katakana and Han: Japanese
    expect(r.share('\u3072', '\u30ce')).toBe(true); // Hiragana and Katakana: Japanese
    expect(r.share('\ud55c', '\u6771')).toBe(true); // Hangul and Han: Korean
    expect(r.share('\u3105', '\u6771')).toBe(true); // Bopomofo and Han
    expect(r.share('\ud55c', '\u30ce')).toBe(false); // Hangul and Katakana: no writing system has both
    expect(r.share('\u3105', '\u30ce')).toBe(false);
    expect(r.share('\u30ce', 'a')).toBe(false);
    expect(r.share('\u02d0', '\u02d0')).toBe(false);
  });

  it('reads l, I, 1, i and O, 0, o look-alikes also as capitals and as digits; blank fillers also as spaces', () => {
    expect(normalReadings('npm test')).toEqual(['npm test']);
    expect(normalReadings('')).toEqual(['']);
    // Tifinagh ⵏ (prototype l): usually l, also I and 1; Cyrillic А is A in every reading
    expect(normalReadings('\u0410K\u2d4fA')).toEqual(['AKlA', 'AKIA', 'AK1A']);
    // Cyrillic О (prototype O): O usually and as a letter, 0 as a digit
    expect(normalReadings('\u041e')).toEqual(['O', '0']);
    // Cyrillic palochka ӏ (prototype i) and Cyrillic о (prototype o)
    expect(normalReadings('AK\u04cfA')).toEqual(['AKiA', 'AKIA', 'AK1A']);
    expect(normalReadings('x\u043ey')).toEqual(['xoy', 'xOy', 'x0y']);
    // ASCII never changes, in no reading
    for (const r of normalReadings('Il1|O0o \u2d4f')) expect(r.slice(0, 7)).toBe('Il1|O0o');
    // a blank filler: dropped, and read as a space
    expect(normalReadings('rm\u2800-rf b')).toEqual(['rm-rf b', 'rm -rf b']);
    expect(normalReadings('a\u3164b')).toEqual(['ab', 'a b']);
    expect(normalReadings('a\u2800b\u3164c')).toEqual(['abc', 'a b c']);
    expect(normalReadings('\u0410KIA')[0]).toBe(normalText('\u0410KIA'));
  });
});
