/**
 * The state store's contract suites, one per entity port (./suite.ts), and `runStateStoreContracts`,
 * which runs them all on one adapter: what the runners (./sqlite.test.ts, ./dynamo.test.ts) and
 * test/infra/dynamo-access.test.ts (recording what each method sends) call.
 */
import { expect, it } from 'vitest';
import { runAlertsContract } from './alerts.contract.js';
import { runDigestIndexContract } from './digests.contract.js';
import { runIdempotencyContract } from './idempotency.contract.js';
import { runSessionIndexContract } from './sessions.contract.js';
import { runSignInContract } from './sign-in.contract.js';
import { runStatusContract } from './status.contract.js';
import { type ContractOptions, declaredTitles } from './suite.js';
import { runTenantsContract } from './tenants.contract.js';
import { runTokensContract } from './tokens.contract.js';
import { runUsageContract } from './usage.contract.js';
import { runWorkContract } from './work.contract.js';
import { runWritersContract } from './writers.contract.js';

export type { ContractOptions } from './suite.js';

/** Every entity port's contract, by the port's name. */
export const STATE_STORE_CONTRACTS: Record<string, (opts: ContractOptions) => void> = {
  tenants: runTenantsContract,
  tokens: runTokensContract,
  writers: runWritersContract,
  sessions: runSessionIndexContract,
  status: runStatusContract,
  work: runWorkContract,
  idempotency: runIdempotencyContract,
  digests: runDigestIndexContract,
  usage: runUsageContract,
  alerts: runAlertsContract,
  'sign-in': runSignInContract,
};

/** Runs every entity port's contract on the adapter of `opts`, then checks that each skip names a case. */
export function runStateStoreContracts(opts: ContractOptions): void {
  for (const run of Object.values(STATE_STORE_CONTRACTS)) run(opts);
  it(`${opts.name} skips only cases of the contracts`, () => {
    const titles = declaredTitles(opts);
    expect(Object.keys(opts.skip ?? {}).filter((t) => !titles.has(t))).toEqual([]);
  });
}
