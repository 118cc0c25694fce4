/**
 * Redaction measured on the corpus in test/fixtures/redaction (written by gen.ts there: fake, correctly
 * shaped credentials of 66 kinds, and look-alikes that are not secrets). A secret line counts as found when
 * its text changes; a look-alike line counts as a false positive when its text changes. Goals (issue 10,
 * item 4): recall ≥ 0.98, false positives ≤ 1%. `npm run bench:redact` writes the figures into
 * docs/benchmarks.md.
 */
import { describe, expect, it } from 'vitest';
import { measureCorpus } from '../../bench/redact-corpus.js';

describe('redaction corpus', () => {
  const m = measureCorpus();

  it('is big enough to mean something: ≥ 200 secrets of ≥ 50 kinds, ≥ 200 look-alikes', () => {
    expect(m.secrets).toBeGreaterThanOrEqual(200);
    expect(m.secretKinds).toBeGreaterThanOrEqual(50);
    expect(m.lookalikes).toBeGreaterThanOrEqual(200);
  });

  it('finds ≥ 98% of the secrets', () => {
    expect(m.missed).toEqual([]);
    expect(m.recall).toBeGreaterThanOrEqual(0.98);
  });

  it('flags ≤ 1% of the look-alikes', () => {
    expect(m.falsePositives.length / m.lookalikes).toBeLessThanOrEqual(0.01);
  });
});
