/**
 * The work report content rules (lib/service/work-content.ts, seed 004 "What agents may put in a report",
 * docs/work.md): what each rule refuses once invisible format characters are taken out, the absolute
 * path forms beyond a list of roots, and plain text that must still pass. The HTTP side (422
 * `content_rule`) is test/attack/work-content-bypass.test.ts and test/contract/work-leases.test.ts.
 */
import { describe, expect, it } from 'vitest';
import { brokenRule, visibleText } from '../../lib/service/work-content.js';

/** A fake GitHub token, split so no scanner of this repository takes it for a real one. */
const GH = `ghp_${'a1B2c3D4e5F6g7H8i9J0'}${'k1L2m3N4o5P6q7R8'}`;

describe('work content rules', () => {
  it('refuses a credential with any invisible format character inside', () => {
    const cf = [
      '\u200b',
      '\u200c',
      '\u200d',
      '\u200e',
      '\u200f',
      '\u00ad',
      '\u2060',
      '\ufeff',
      '\u202e',
      '\u2066',
    ];
    for (const c of cf) {
      const text = `token ${GH.slice(0, 6)}${c}${GH.slice(6, 20)}${c}${GH.slice(20)}`;
      expect(brokenRule(text), JSON.stringify(c)).toBe('credential');
    }
    // Fullwidth letters are the same token once NFKC-normalized.
    const wide = [...GH]
      .map((ch) => (ch === '_' ? '\uff3f' : String.fromCharCode(ch.charCodeAt(0) + 0xfee0)))
      .join('');
    expect(brokenRule(`token ${wide}`)).toBe('credential');
  });

  it('refuses absolute paths in every form: any /a/b, file: URLs, UNC, drives, and with hidden characters', () => {
    for (const text of [
      'reading file:///etc/passwd',
      'reading FILE://fileserver/share/x.ts',
      'editing /scratch/ann/project/x.ts',
      'editing /nfs/team/ann/x.ts',
      'editing /srv2/build/out.log',
      'see \\\\fileserver\\share\\ann\\x.ts',
      'fixing C:/Users/ann/x.ts',
      'fixing D:\\src\\x.ts',
      "the file '/opt/app/x.ts' fails",
      'config=/usr2/local/x',
      '(in /tmp)',
      'notes in ~/notes',
      'editing /ho\u200bme/ann/x.ts',
    ]) {
      expect(brokenRule(text), text).toBe('absolute_path');
    }
  });

  it('lets plain text through: relative paths, URLs, fractions, emoji with joiners', () => {
    for (const text of [
      'fixing the parser in src/parser.ts',
      'reviewing PR 42 for the work routes',
      'reading https://example.com/docs/work/leases for the routes',
      'comparing http://localhost:8080/v1/work answers',
      'a 50/50 split of the and/or cases, w/o the flaky test',
      'lib/service/work.ts and test/http/work-list.test.ts',
      '\u{1F469}\u200d\u{1F4BB} pairing on the lexer',
      'naïve café ✓ in the soft\u00adhyphenated title',
    ]) {
      expect(brokenRule(text), text).toBeNull();
    }
  });

  it('visibleText drops Unicode Cf characters and NFKC-normalizes, nothing else', () => {
    expect(visibleText('a\u200bb\u00adc\u2060d\ufeffe\u202ef')).toBe('abcdef');
    expect(visibleText('\uff21\uff22 caf\u0065\u0301')).toBe('AB café');
  });
});
