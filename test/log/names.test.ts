/**
 * lib/log/format/names.ts (issue 25.6): canonically equivalent names are one name (NFC), and names that are
 * other code points but render alike are found, each with the code points that set it apart.
 */
import { describe, expect, it } from 'vitest';
import { lookAlikes, nameForm, sameName, uniqueNames } from '../../lib/log/format/names.js';

describe('nameForm', () => {
  it('makes a precomposed and a combining spelling one name, and leaves ASCII as it is', () => {
    expect(nameForm('Jose\u0301')).toBe('Jos\u00e9');
    expect(sameName('Jose\u0301', 'Jos\u00e9')).toBe(true);
    expect(uniqueNames(['Jos\u00e9', 'Jose\u0301', 'bob', 'bob'])).toEqual(['Jos\u00e9', 'bob']);
    const ascii = 'claude-code';
    expect(nameForm(ascii)).toBe(ascii);
    expect(sameName('alice', '\u0430lice')).toBe(false);
  });
});

describe('lookAlikes', () => {
  it('marks Latin and Cyrillic twins with the code points that differ, and leaves other names alone', () => {
    const m = lookAlikes(['alice', '\u0430lice', 'bob', 'claude-code']);
    expect([...m.keys()]).toEqual(['alice', '\u0430lice']);
    expect(m.get('alice')).toEqual({ apart: 'U+0061', codePoints: 'U+0061 U+006C U+0069 U+0063 U+0065' });
    expect(m.get('\u0430lice')!.apart).toBe('U+0430');
  });

  it('does not mark one name spelled two ways, but gives each spelling the mark of its name', () => {
    expect(lookAlikes(['Jos\u00e9', 'Jose\u0301']).size).toBe(0);
    const m = lookAlikes(['Jos\u00e9', 'Jose\u0301', 'J\u043es\u00e9']); // Cyrillic о
    expect(m.get('Jose\u0301')).toEqual(m.get('Jos\u00e9'));
    expect(m.get('Jos\u00e9')!.apart).toBe('U+006F');
    expect(m.get('J\u043es\u00e9')!.apart).toBe('U+043E');
  });

  it('finds ASCII look-alikes, invisible characters and fullwidth forms too', () => {
    expect(lookAlikes(['paypal', 'paypa1']).get('paypa1')!.apart).toBe('U+0031');
    expect(lookAlikes(['modern', 'rnodern']).get('modern')!.apart).toBe('U+006D');
    expect(lookAlikes(['alice', 'ali\u200bce']).get('ali\u200bce')!.apart).toBe('U+200B');
    expect(lookAlikes(['bob', '\uff42\uff4f\uff42']).size).toBe(2);
  });

  it('lists every code point when two twins hold the same characters in another order', () => {
    const m = lookAlikes(['a\u0430', '\u0430a']);
    expect(m.get('a\u0430')!.apart).toBe('U+0061 U+0430');
    expect(m.get('\u0430a')!.apart).toBe('U+0430 U+0061');
  });
});
