/**
 * Sending a work item's semantic operations (seed 004 steps 1-2, 4-6; docs/work.md): every operation is
 * first written as a pending file (`local.ts`), then sent with its idempotency key, and the pending file is
 * removed once the server answers. An unreachable server or a 5xx leaves it pending (a partial result,
 * not success); `resume` sends it again exactly: the same key and body, to `POST /v1/work/{id}/resume`
 * (a start, which has no id yet, again to `POST /v1/work` with its key).
 */
import { randomUUID } from 'node:crypto';
import type { WorkView } from '../../contract/work.js';
import { type ApiClient, NetworkError, ServerError } from '../api/client.js';
import {
  forgetItem,
  type LocalItem,
  type PendingOp,
  removePending,
  renewLease,
  writeItem,
  writePending,
} from './local.js';

/** What became of one operation sent. */
export type SendOutcome =
  | { kind: 'done'; view: WorkView }
  /** not answered (network, 5xx): the pending file stays for `resume` */
  | { kind: 'unsent'; reason: string; path: string }
  /** the server refused it; `kept`: the pending file stays (the refusal is not about its content) */
  | { kind: 'refused'; error: ServerError; path: string; kept: boolean };

/** A fresh idempotency key (8..128 characters, as the API asks). */
export function newIdempotencyKey(): string {
  return `wkop_${randomUUID()}`;
}

/** Refusals about the operation itself: sending it again cannot succeed, so its pending file goes. */
const FINAL_REFUSALS = new Set([
  'bad_request',
  'invalid_id',
  'invalid_body',
  'empty_body',
  'unprocessable',
  'content_rule',
  'not_found',
  'not_owner',
  'work_mismatch',
  'work_stopped',
]);

/**
 * Writes `op` as pending, then sends it (`via: 'direct'` to its own route with an `Idempotency-Key`
 * header; `'resume'` through the resume route) and records the answer locally: the item file and lease
 * on success (both forgotten after a stop), the pending file removed unless the operation may still go.
 * @throws the file system's error when the pending file cannot be written (nothing is sent then)
 */
export async function sendOp(
  client: ApiClient,
  state: string,
  op: PendingOp,
  via: 'direct' | 'resume',
  path = writePending(state, op),
): Promise<SendOutcome> {
  let view: WorkView;
  try {
    const res = await client.request('POST', routeOf(op, via), {
      body: JSON.stringify(via === 'resume' && op.work_id ? resumeBody(op) : op.body),
      contentType: 'application/json',
      headers: { 'idempotency-key': op.idempotency_key },
    });
    view = res.body as WorkView;
  } catch (err) {
    if (err instanceof NetworkError) return { kind: 'unsent', reason: err.message, path };
    if (err instanceof ServerError && err.status >= 500) {
      return { kind: 'unsent', reason: `${err.message} (${err.status} ${err.code})`, path };
    }
    if (err instanceof ServerError) {
      const kept = !FINAL_REFUSALS.has(err.code);
      if (!kept) removePending(path);
      return { kind: 'refused', error: err, path, kept };
    }
    throw err;
  }
  removePending(path);
  recordView(state, view, op.op === 'start');
  return { kind: 'done', view };
}

/** A new pending operation of `op` with a fresh key, created now. */
export function newOp(op: PendingOp['op'], workId: string | null, body: Record<string, unknown>): PendingOp {
  return {
    version: 1,
    op,
    work_id: workId,
    body,
    idempotency_key: newIdempotencyKey(),
    created_at: new Date().toISOString(),
  };
}

/** What this machine keeps of an acknowledged item: its file (and a lease after a start); none once stopped. */
export function recordView(state: string, view: WorkView, started: boolean): void {
  if (view.state === 'stopped') {
    forgetItem(state, view.id);
    return;
  }
  const item: LocalItem = {
    version: 1,
    id: view.id,
    session: view.session,
    system: view.system,
    actor: view.actor,
    ttl_seconds: view.ttl_seconds,
    subject: view.subject,
    mode: view.mode,
    summary: view.summary,
    started_at: view.started_at,
  };
  writeItem(state, item);
  // A start is the item's first heartbeat: observed on this machine from now, and sent.
  if (started) renewLease(state, view.id, view.ttl_seconds, Date.now(), true);
}

function routeOf(op: PendingOp, via: 'direct' | 'resume'): string {
  if (op.op === 'start' || !op.work_id) return '/v1/work';
  return via === 'resume' ? `/v1/work/${op.work_id}/resume` : `/v1/work/${op.work_id}/${op.op}`;
}

/** `WorkResume`: the owner (from the frozen body), the operation, its key and its body exactly. */
function resumeBody(op: PendingOp): Record<string, unknown> {
  const { session, system, actor } = op.body as { session?: unknown; system?: unknown; actor?: unknown };
  return { session, system, actor, op: op.op, idempotency_key: op.idempotency_key, body: op.body };
}
