/**
 * The ownership rule of work items (lib/service/work/owner.ts, issue 24 item 3) case by case: which token
 * records own which item. Over real HTTP: test/attack/work-ownership.test.ts, test/contract/work-leases.
 */
import { describe, expect, it } from 'vitest';
import { AppError } from '../../../lib/service/shared/errors.js';
import { ownsWork, requireOwner, startedBy } from '../../../lib/service/work/owner.js';
import type { TokenRecord, WorkItem } from '../../../lib/store/index.js';

const SID = 's_01M8QD00000000000000000071';
const OTHER_SID = 's_01M8QD00000000000000000072';

function token(fields: Partial<TokenRecord> & Pick<TokenRecord, 'id'>): TokenRecord {
  return {
    tenant: 'acme',
    hash: `h-${fields.id}`,
    scopes: ['report'],
    session: null,
    label: null,
    created_at: '2026-06-01T10:00:00.000Z',
    expires_at: null,
    revoked_at: null,
    last_used_at: null,
    parent: null,
    root: fields.id,
    ...fields,
  };
}

/** The capture token (a root), a session token it minted for SID, another for another session. */
const capture = token({ id: 'tok_capture' });
const hook = token({ id: 'tok_hook', session: SID, parent: 'tok_capture', root: 'tok_capture' });
const elsewhere = token({ id: 'tok_else', session: OTHER_SID, parent: 'tok_capture', root: 'tok_capture' });
/** Another chain: its root and the session token it minted for SID. */
const stranger = token({ id: 'tok_stranger' });
const strangerBound = token({ id: 'tok_sb', session: SID, parent: 'tok_stranger', root: 'tok_stranger' });
const admin = token({ id: 'tok_admin', scopes: ['admin', 'report'] });

function item(by: TokenRecord | null): WorkItem {
  const at = '2026-06-01T10:00:00.000Z';
  return {
    tenant: 'acme',
    id: 'wk_01M8QD00000000000000000071',
    session: SID,
    system: 'claude-code',
    actor: 'coder',
    subject: { kind: 'free', ref: 'parser' },
    mode: 'implementing',
    summary: 'fixing the parser',
    ttl_seconds: 900,
    state: 'active',
    outcome: null,
    waiting_on: null,
    started_at: at,
    lease_expires_at: at,
    last_heartbeat_at: at,
    last_reported: { op: 'start', at },
    history: [],
    applied: [],
    updated_at: at,
    version: 1,
    ...(by ? { started_by: startedBy(by) } : {}),
  };
}

describe('ownsWork', () => {
  it('keeps the starting token and the first token of its chain', () => {
    expect(startedBy(hook)).toEqual({ token: 'tok_hook', root: 'tok_capture' });
    expect(startedBy(capture)).toEqual({ token: 'tok_capture', root: 'tok_capture' });
  });

  it('an item started by a session token: its chain in its session owns it, nothing else but an admin', () => {
    const w = item(hook);
    expect(ownsWork(hook, w)).toBe(true);
    expect(ownsWork(capture, w)).toBe(true);
    expect(
      ownsWork(token({ id: 'tok_mcp', session: SID, parent: 'tok_capture', root: 'tok_capture' }), w),
    ).toBe(true);
    expect(ownsWork(elsewhere, w)).toBe(false);
    expect(ownsWork(stranger, w)).toBe(false);
    expect(ownsWork(strangerBound, w)).toBe(false);
    expect(ownsWork(admin, w)).toBe(true);
  });

  it('an item started by an unbound token: it and the session tokens minted from it', () => {
    const w = item(capture);
    expect(ownsWork(capture, w)).toBe(true);
    expect(ownsWork(hook, w)).toBe(true);
    expect(ownsWork(elsewhere, w)).toBe(false);
    expect(ownsWork(stranger, w)).toBe(false);
    expect(ownsWork(strangerBound, w)).toBe(false);
  });

  it('an item from before started_by: an admin only, not a token bound to its session (any chain can mint one)', () => {
    const w = item(null);
    expect(ownsWork(hook, w)).toBe(false);
    expect(ownsWork(strangerBound, w)).toBe(false);
    expect(ownsWork(elsewhere, w)).toBe(false);
    expect(ownsWork(capture, w)).toBe(false);
    expect(ownsWork(stranger, w)).toBe(false);
    expect(ownsWork(admin, w)).toBe(true);
  });
});

describe('requireOwner', () => {
  const named = { session: SID, system: 'claude-code', actor: 'coder' };
  const refusal = (f: () => void): AppError => {
    try {
      f();
    } catch (err) {
      return err as AppError;
    }
    throw new Error('not refused');
  };

  it('passes an owner naming the item; refuses a non-owner naming no owner, and an owner naming another name with work_mismatch', () => {
    expect(() => requireOwner(hook, item(hook), named)).not.toThrow();
    for (const [who, body] of [
      [stranger, named],
      [strangerBound, named],
      [stranger, { ...named, actor: 'someone' }],
    ] as const) {
      const e = refusal(() => requireOwner(who, item(hook), body));
      expect(e).toBeInstanceOf(AppError);
      expect(e.code).toBe('not_owner');
      expect(e.details ?? {}).toEqual({});
      for (const leak of [SID, 'claude-code', 'coder', 'tok_hook', 'tok_capture', 'chain']) {
        expect(e.message).not.toContain(leak);
      }
    }
    for (const [body, fields] of [
      [{ ...named, actor: 'someone' }, ['actor']],
      [{ ...named, system: 'codex' }, ['system']],
      [{ ...named, session: OTHER_SID, actor: 'x' }, ['session', 'actor']],
    ] as const) {
      const e = refusal(() => requireOwner(hook, item(hook), body));
      expect([e.code, e.details]).toEqual(['work_mismatch', { fields }]);
      // the owner proved it owns the item: the field is named, still not its value
      for (const leak of [SID, 'claude-code', 'coder']) expect(e.message).not.toContain(leak);
    }
  });

  it('says what would be accepted instead, in plain words: the token it was started with, its session tokens, an admin; or the command showing its names', () => {
    const w = item(hook);
    expect(refusal(() => requireOwner(stranger, w, named)).message).toMatch(
      new RegExp(
        `^work ${w.id} was started with another token: only the token it was started with, .*or an admin may renew, change or stop it\\. To report your own work, start an item of your own: hansard work start`,
      ),
    );
    expect(refusal(() => requireOwner(strangerBound, w, named)).message).toContain(
      'than the one this session token was made from',
    );
    for (const who of [stranger, hook]) {
      expect(refusal(() => requireOwner(who, item(null), named)).message).toBe(
        `work ${w.id} was started before hansard kept which token starts an item, so only an admin may renew, change or stop it. To report your own work, start an item of your own: hansard work start (the API: POST /v1/work)`,
      );
    }
    expect(
      refusal(() => requireOwner(hook, w, { ...named, actor: 'someone', system: 'codex' })).message,
    ).toBe(
      `work ${w.id} was started with another system and actor than this request names: send the session, system and actor it was started with (\`hansard work status ${w.id} --json\` shows them; the API: GET /v1/work/${w.id})`,
    );
    const all = { session: OTHER_SID, actor: 'someone', system: 'codex' };
    expect(refusal(() => requireOwner(admin, w, all)).message).toMatch(
      new RegExp(`^work ${w.id} was started with another session, system and actor than this request names`),
    );
  });
});
