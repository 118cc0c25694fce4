/** lib/version.ts says hansard's version equals package.json's: this keeps it so. */
import { readFileSync } from 'node:fs';
import { expect, it } from 'vitest';
import { HANSARD_VERSION } from '../../lib/version.js';

it('HANSARD_VERSION is package.json’s version', () => {
  expect(HANSARD_VERSION).toBe(
    JSON.parse(readFileSync(new URL('../../package.json', import.meta.url), 'utf8')).version,
  );
});
