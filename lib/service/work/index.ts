/**
 * `lib/service/work`: work leases (seed 004 "Reporting current work", issue 13, docs/work.md): `start`
 * a work item, `heartbeat` its lease (no history), `checkpoint` / `wait` / `stop` it (history), `resume` a pending
 * operation exactly, read one or list them with their freshness.
 *
 * - Ownership is proved by the request's token (lib/service/work/owner.ts, issue 24.3): the chain of the
 *   token that started the item, or an admin; the body must also name the item's session, system and
 *   actor (else 409 `work_mismatch`). A refusal (403 `not_owner`) names no owner. A session-bound token
 *   may name only its own session.
 * - Freshness is decided when read, from `lease_expires_at` (lib/service/work/view.ts):
 *   `observed` while the lease runs, `unknown` once it has expired, `stopped` after a stop. Never idle.
 * - Every write is one conditional write of the whole item (the store's version), tried again on a fresh
 *   read when another write got there first: two clients heartbeating or stopping at once lose nothing.
 * - An `Idempotency-Key` makes a semantic operation safe to send again: the same key with the same
 *   content answers the item as it is, records nothing new; with other content it is refused (409).
 *   Keys are remembered for the item's life (lib/service/work/keys.ts: the newest 50 in the item, older
 *   ones as claimed keys).
 */
export { checkpointWork } from './checkpoint.js';
export { getWork } from './get.js';
export { heartbeatWork } from './heartbeat.js';
export { listWork } from './list.js';
export { resumeWork } from './resume.js';
export { startWork } from './start.js';
export { stopWork } from './stop.js';
export { freshnessOf, workSummary, workView } from './view.js';
export { waitWork } from './wait.js';
export type { WorkAnswer } from './write.js';
