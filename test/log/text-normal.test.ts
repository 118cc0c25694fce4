/**
 * The text the content rules read (lib/log/text-normal.ts, issue 24 item 4): invisible code points
 * dropped by Unicode's Default_Ignorable_Code_Point and Cf, NFKC, and UTS #39 confusables folded to ASCII
 * with the prototype alphabet's own folds undone; ASCII and the letters of other scripts kept.
 */
import { describe, expect, it } from 'vitest';
import { foldConfusables, LINE_BREAK, normalText, visibleText } from '../../lib/log/text-normal.js';

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
});
