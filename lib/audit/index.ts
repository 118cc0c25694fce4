/**
 * `lib/audit`: tamper evidence for sessions (issue 15, DESIGN §6b): the digest contract, its hashing
 * rules, signing keys, export bundles and the offline verifier.
 */
export * from './chain.js';
export * from './schemas.js';
export type * from './signer.js';
