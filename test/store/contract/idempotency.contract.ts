/**
 * The idempotency contract (lib/store/idempotency.ts `IdempotencyStore`): a key claimed once within its
 * scope, exactly one of concurrent claims winning, and a claim read without making one. Run on every
 * adapter (./suite.ts).
 */
import { describe, expect } from 'vitest';
import type { IdempotencyStore } from '../../../lib/store/index.js';
import { type ContractOptions, runContract } from './suite.js';

export function runIdempotencyContract(opts: ContractOptions<IdempotencyStore>): void {
  runContract('idempotency', opts, (contract) => {
    describe('claimed keys', () => {
      contract('keeps the first value claimed for a key, per tenant and scope', async (s) => {
        expect(await s.claimKey('acme', 'work:start:s1', 'key-00000001', 'first')).toBe('first');
        expect(await s.claimKey('acme', 'work:start:s1', 'key-00000001', 'second')).toBe('first');
        expect(await s.claimKey('acme', 'work:start:s2', 'key-00000001', 'other scope')).toBe('other scope');
        expect(await s.claimKey('globex', 'work:start:s1', 'key-00000001', 'other tenant')).toBe(
          'other tenant',
        );
        // Scope and key are not simply joined: ('a:b', 'c') and ('a', 'b:c') are two claims.
        expect(await s.claimKey('acme', 'a:b', 'c', 'one')).toBe('one');
        expect(await s.claimKey('acme', 'a', 'b:c', 'two')).toBe('two');
      });

      contract('of twenty concurrent claims of one key exactly one wins, and all are told it', async (s) => {
        const values = Array.from({ length: 20 }, (_, i) => `claimant-${i}`);
        const answers = await Promise.all(values.map((v) => s.claimKey('acme', 'race', 'key-00000002', v)));
        expect(new Set(answers).size).toBe(1);
        expect(values).toContain(answers[0]);
        expect(await s.claimKey('acme', 'race', 'key-00000002', 'late')).toBe(answers[0]);
      });

      contract('reads a claim without making one: null until claimed, then its first value', async (s) => {
        expect(await s.readClaim('acme', 'work:applied:wk_1', 'key-00000003')).toBeNull();
        // the read claimed nothing: the first claim after it still wins
        expect(await s.claimKey('acme', 'work:applied:wk_1', 'key-00000003', 'first')).toBe('first');
        expect(await s.readClaim('acme', 'work:applied:wk_1', 'key-00000003')).toBe('first');
        expect(await s.readClaim('acme', 'work:applied:wk_2', 'key-00000003')).toBeNull();
        expect(await s.readClaim('globex', 'work:applied:wk_1', 'key-00000003')).toBeNull();
        expect(await s.readClaim('acme', 'work:applied', 'wk_1:key-00000003')).toBeNull();
      });
    });
  });
}
