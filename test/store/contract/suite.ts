/**
 * How the state store's contract suites run (DESIGN §5, STYLE §3): one suite per entity port
 * (./tokens.contract.ts, ./tenants.contract.ts, ./writers.contract.ts, ./sessions.contract.ts with
 * ./session-summaries.contract.ts, ./status.contract.ts, ./work.contract.ts, ./idempotency.contract.ts,
 * ./digests.contract.ts, ./usage.contract.ts, ./alerts.contract.ts, ./sign-in.contract.ts), each run on every adapter pair by its runner (./sqlite.test.ts,
 * ./dynamo.test.ts; all of them at once: `runStateStoreContracts` in ./index.ts). A suite's cases are
 * typed with the ports they use (`ContractOptions<TokenStore & ServerSecrets>`), so it says what it
 * depends on. Each case gets a new, empty store (DynamoDB: a table of its own) and closes it; a case an
 * adapter cannot pass is skipped only with a written reason, shown in the test report.
 *
 * Listings are read right after the writes. DynamoDB serves `listTokens` and `listSessions` from a GSI,
 * which is eventually consistent on AWS; DynamoDB Local updates its GSIs synchronously, so these cases
 * hold there. Against a real table they would have to poll.
 */
import { afterEach, beforeEach, describe, it, type TestContext } from 'vitest';
import type { StateStore } from '../../../lib/store/index.js';

/**
 * An adapter as the contract suites run it. `P` is what a suite asks of it: the entity port it is the
 * contract of, and the ports its cases use to set up or to check what that port promises (a status
 * write moving the session index forward); a runner passes a whole `StateStore`.
 */
export interface ContractOptions<P = StateStore> {
  /** the adapter's name, in the describe block's title */
  name: string;
  /** a new, empty store; closed after each case */
  newStore: () => Promise<P & Pick<StateStore, 'close'>>;
  /** cases (by title) this adapter does not pass, each with the reason why */
  skip?: Record<string, string>;
  /**
   * How much older, ms, a listed session's `updated_at` (`listSessions`) may be than its last advance:
   * SQLite 0 (exact), DynamoDB 5,000 (it moves a session on the board at most every 5 s, issue 17.1).
   * `getSession` is exact on both.
   */
  listingLagMs?: number;
}

/** Declares one case: `it`, on the case's own new store, skipped (with its reason) when the adapter says so. */
export type Contract<P = StateStore> = (title: string, fn: (store: P) => Promise<void>) => void;

/** The titles of the cases each adapter's suites declared, for the check that every skip names one. */
const declared = new WeakMap<object, Set<string>>();

/** The titles of the cases run so far for `opts` (every suite's). */
export function declaredTitles(opts: ContractOptions<unknown>): Set<string> {
  let titles = declared.get(opts);
  if (!titles) {
    titles = new Set();
    declared.set(opts, titles);
  }
  return titles;
}

/**
 * Runs the contract of the entity port `port` on the adapter of `opts`: `cases` declares its cases with
 * `contract`, each run on a new store closed after it.
 */
export function runContract<P>(
  port: string,
  opts: ContractOptions<P>,
  cases: (contract: Contract<P>) => void,
): void {
  const skip = opts.skip ?? {};
  const titles = declaredTitles(opts);
  let store: P & Pick<StateStore, 'close'>;
  const contract: Contract<P> = (title, fn) => {
    titles.add(title);
    it(title, async (ctx: TestContext) => {
      const reason = skip[title];
      if (reason !== undefined) ctx.skip(reason);
      await fn(store);
    });
  };
  describe(`${port} contract: ${opts.name}`, () => {
    beforeEach(async () => {
      store = await opts.newStore();
    });
    afterEach(async () => {
      await store.close();
    });
    cases(contract);
  });
}
