/**
 * The rule machinery added for gitleaks' rules (issue 10, item 4): the one-pass keyword prefilter
 * (overlapping keywords included), the entropy floor, gitleaks' secret group, and the keyword-assignment
 * row on the forms the issue names (`*_KEY`, `*_TOKEN`, `*_SECRET`, `password`, with `=` or `:`).
 */
import { describe, expect, it } from 'vitest';
import {
  BUILTIN_PATTERNS,
  compilePatterns,
  RedactPatternError,
  redactText,
  redactValue,
} from '../../lib/log/index.js';
import { GITLEAKS_PATTERNS } from '../../lib/log/redact/redact-gitleaks.js';
import { shannon } from '../../lib/log/redact/redact-match.js';

describe('keyword prefilter', () => {
  it('runs a rule whose keyword is a prefix of a longer keyword at the same place', () => {
    const list = compilePatterns(
      [
        { name: 'long', regex: /sk-ant-\d{3}(?!x)/, keywords: ['SK-ANT-'] },
        { name: 'short', regex: /sk-[a-z]+-\d{3}x/, keywords: ['sk-'] },
      ],
      false,
    );
    expect(redactText('a sk-ant-123x b', list).text).toBe('a [REDACTED:short] b');
    expect(redactText('a SK-ANT-123 b', list).hits).toEqual([]); // the regex is case-sensitive
    expect(redactText('a sk-ant-123 b', list).text).toBe('a [REDACTED:long] b');
  });

  it('skips a rule none of whose keywords occurs', () => {
    const list = compilePatterns([{ name: 'k', regex: /\d{6}/, keywords: ['pin'] }], false);
    expect(redactText('code 123456', list).hits).toEqual([]);
    expect(redactText('PIN 123456', list).text).toBe('PIN [REDACTED:k]');
  });
});

describe('configured rule checks', () => {
  it('refuses keywords that are not non-empty strings, and a negative entropy', () => {
    const bad = [
      { name: 'k', regex: /x/, keywords: [''] },
      { name: 'k', regex: /x/, keywords: 'pin' as unknown as string[] },
      { name: 'k', regex: /x/, entropy: -1 },
    ];
    for (const p of bad) expect(() => compilePatterns([p])).toThrow(RedactPatternError);
  });
});

describe('entropy floor and secret group', () => {
  it('measures Shannon entropy in bits per character', () => {
    expect(shannon('aaaa')).toBe(0);
    expect(shannon('abcd')).toBe(2);
  });

  it('leaves a match below the floor, replaces only the secret group', () => {
    const list = compilePatterns(
      [{ name: 'g', regex: /token=(\w{16})/, keywords: ['token'], secretGroup: 0, entropy: 3 }],
      false,
    );
    expect(redactText('token=aaaaaaaaaaaaaaaa', list).hits).toEqual([]);
    expect(redactText('token=Zq8xW2pL0vN7tR4k', list).text).toBe('token=[REDACTED:g]');
  });

  it('ships the converted gitleaks rules with keywords', () => {
    expect(GITLEAKS_PATTERNS.length).toBeGreaterThanOrEqual(200);
    for (const p of GITLEAKS_PATTERNS) expect(p.keywords?.length).toBeGreaterThan(0);
  });
});

describe('keyword assignment', () => {
  const value = 'Zq8xW2pL0vN7tR4kYb3M';
  it.each([
    [`SERVICE_API_KEY=${value}`, 'SERVICE_API_KEY=%'],
    [`export AUTH_TOKEN="${value}"`, 'export AUTH_TOKEN="%"'],
    [`client_secret: ${value}`, 'client_secret: %'],
    [`"password": "${value}"`, '"password": "%"'],
    [`const accessToken = '${value}';`, "const accessToken = '%';"],
  ])('redacts the value in %j', (text, expected) => {
    expect(redactText(text).text).toBe(expected.replace('%', '[REDACTED:keyword_assignment]'));
  });

  it.each([
    'cacheKey: node-cache-Linux-x64-npm-3f2a9b8c7d6e5f4a3b2c1d0e9f8a7b6c',
    'primary_key = order_id_2026_11_30_a',
    'key: src/components/button/Index123.tsx',
    `API_KEY=${'$'}{API_KEY_FROM_VAULT_2026}`,
    'TOKEN_URL=https://auth.example.com/oauth2/token',
    'password: aaaaaaaaaaaaaaaa1',
    '"input_tokens": 123456789012345678',
  ])('leaves %j alone', (text) => {
    expect(redactText(text).hits).toEqual([]);
  });

  it('reads an object key as the label', () => {
    const r = redactValue({ env: { MY_SERVICE_KEY: value } });
    expect(r.value).toEqual({ env: { MY_SERVICE_KEY: '[REDACTED:keyword_assignment]' } });
  });
});

describe('speed on hostile text', () => {
  it('redacts 1 MiB of every keyword followed by runs of word characters in well under 3 s', () => {
    // gitleaks' regexes were written for RE2 (linear); this is the shape that was slow in a backtracking
    // engine before their leading `[\w.-]{0,50}?` pairs were dropped (53 s for this text).
    const keywords = [...new Set(BUILTIN_PATTERNS.flatMap((p) => p.keywords ?? []))];
    const text = keywords
      .map((k) => `${k}${'a'.repeat(300)}`)
      .join(' ')
      .repeat(20)
      .slice(0, 1 << 20);
    const t0 = performance.now();
    redactText(text);
    expect(performance.now() - t0).toBeLessThan(3000);
  });
});
