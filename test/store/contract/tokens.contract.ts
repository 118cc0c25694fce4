/**
 * The tokens contract (lib/store/tokens.ts `TokenStore`, `ServerSecrets`; ADR 4): tokens as stored, by
 * hash and by id, their child links and revocation, and the server's secrets. Run on every adapter
 * (./suite.ts).
 */
import { describe, expect } from 'vitest';
import { newId } from '../../../lib/log/format/ids.js';
import {
  type ServerSecrets,
  StateConflictError,
  type TokenRecord,
  type TokenStore,
} from '../../../lib/store/index.js';
import { at, tokenRecord } from './records.js';
import { type ContractOptions, runContract } from './suite.js';

export function runTokensContract(opts: ContractOptions<TokenStore & ServerSecrets>): void {
  runContract('tokens', opts, (contract) => {
    describe('tokens', () => {
      contract('stores a token and finds it by its hash, every field as put', async (s) => {
        const bare = tokenRecord('acme');
        const full = tokenRecord('acme', {
          scopes: ['admin', 'read', 'board'],
          session: newId('s'),
          label: 'ci runner',
          expires_at: at(3600),
          revoked_at: at(10),
          last_used_at: at(5),
        });
        await s.putToken(bare);
        await s.putToken(full);
        expect(await s.getTokenByHash(bare.hash)).toEqual(bare);
        expect(await s.getTokenByHash(full.hash)).toEqual(full);
        expect(await s.getTokenByHash('0'.repeat(64))).toBeNull();
      });

      contract('refuses a second token with the same hash or the same id', async (s) => {
        const t = tokenRecord('acme');
        await s.putToken(t);
        const sameHash = tokenRecord('acme', { hash: t.hash });
        const sameId = tokenRecord('globex', { id: t.id });
        await expect(s.putToken(sameHash)).rejects.toBeInstanceOf(StateConflictError);
        await expect(s.putToken(sameId)).rejects.toBeInstanceOf(StateConflictError);
        expect(await s.getTokenByHash(sameId.hash)).toBeNull();
        expect(await s.listTokens('acme')).toEqual([t]);
        expect(await s.listTokens('globex')).toEqual([]);
      });

      contract("lists only the tenant's own tokens, oldest first", async (s) => {
        const later = tokenRecord('acme', { created_at: at(20) });
        const first = tokenRecord('acme', { created_at: at(10) });
        const other = tokenRecord('globex', { created_at: at(15) });
        for (const t of [later, other, first]) await s.putToken(t);
        expect(await s.listTokens('acme')).toEqual([first, later]);
        expect(await s.listTokens('globex')).toEqual([other]);
        expect(await s.listTokens('initech')).toEqual([]);
      });

      contract('revokes a token of its own tenant and keeps the first revocation time', async (s) => {
        const t = tokenRecord('acme');
        await s.putToken(t);
        expect(await s.revokeToken('acme', t.id, at(30))).toBe(true);
        expect((await s.getTokenByHash(t.hash))?.revoked_at).toBe(at(30));
        expect(await s.revokeToken('acme', t.id, at(40))).toBe(true);
        expect((await s.getTokenByHash(t.hash))?.revoked_at).toBe(at(30));
      });

      contract("answers false for another tenant's token id and leaves it as it was", async (s) => {
        const theirs = tokenRecord('globex');
        await s.putToken(theirs);
        expect(await s.revokeToken('acme', theirs.id, at(30))).toBe(false);
        expect(await s.getTokenByHash(theirs.hash)).toEqual(theirs);
        expect(await s.revokeToken('acme', 'tok_NOSUCHTOKEN', at(30))).toBe(false);
      });

      // Issue 8: token chains (a session token stops with the token that minted it), the cap on a token's
      // live children, and the server secret cursors are signed with.
      contract('stores parent and root, and finds a token by id in its own tenant only', async (s) => {
        const root = tokenRecord('acme', { scopes: ['admin'] });
        const child = tokenRecord('acme', {
          session: newId('s'),
          expires_at: at(600),
          parent: root.id,
          root: root.id,
        });
        await s.putToken(root);
        await s.putToken(child);
        expect(await s.getTokenByHash(child.hash)).toEqual(child);
        expect(await s.getTokenById('acme', child.id)).toEqual(child);
        expect(await s.getTokenById('acme', root.id)).toEqual(root);
        expect(await s.listTokens('acme')).toEqual([root, child].sort((x, y) => (x.id < y.id ? -1 : 1)));
        expect(await s.getTokenById('globex', child.id)).toBeNull();
        expect(await s.getTokenById('acme', 'tok_NOSUCHTOKEN')).toBeNull();
        expect(await s.revokeToken('acme', root.id, at(30))).toBe(true);
        expect((await s.getTokenById('acme', root.id))?.revoked_at).toBe(at(30));
      });

      contract(
        'counts the live children of a token: unrevoked and expiring after the time given',
        async (s) => {
          const parent = tokenRecord('acme');
          const other = tokenRecord('acme');
          await s.putToken(parent);
          await s.putToken(other);
          const childOf = (p: TokenRecord, over: Partial<TokenRecord>) =>
            tokenRecord(p.tenant, { parent: p.id, root: p.root, session: newId('s'), ...over });
          const live = [
            childOf(parent, { expires_at: at(101) }),
            childOf(parent, { expires_at: at(5000) }),
            childOf(parent, { expires_at: null }),
          ];
          const notLive = [
            childOf(parent, { expires_at: at(100) }),
            childOf(parent, { expires_at: at(50) }),
            childOf(parent, { expires_at: at(900), revoked_at: at(10) }),
            childOf(other, { expires_at: at(900) }),
          ];
          for (const t of [...live, ...notLive]) await s.putToken(t);
          expect(await s.countLiveChildren('acme', parent.id, at(100))).toBe(3);
          expect(await s.countLiveChildren('acme', parent.id, at(0))).toBe(5);
          expect(await s.countLiveChildren('acme', parent.id, at(6000))).toBe(1);
          expect(await s.countLiveChildren('acme', other.id, at(100))).toBe(1);
          expect(await s.countLiveChildren('globex', parent.id, at(100))).toBe(0);
          expect(await s.countLiveChildren('acme', live[0]!.id, at(100))).toBe(0);
          // Revoking a child frees its place; revoking it again changes nothing.
          expect(await s.revokeToken('acme', live[1]!.id, at(20))).toBe(true);
          expect(await s.revokeToken('acme', live[1]!.id, at(21))).toBe(true);
          expect(await s.countLiveChildren('acme', parent.id, at(100))).toBe(2);
          expect((await s.getTokenById('acme', live[1]!.id))?.revoked_at).toBe(at(20));
        },
      );

      contract('keeps the first value of a server secret, whoever asks next', async (s) => {
        expect(await s.serverSecret('cursor-key', 'first')).toBe('first');
        expect(await s.serverSecret('cursor-key', 'second')).toBe('first');
        const raced = await Promise.all(['a', 'b', 'c'].map((v) => s.serverSecret('raced', v)));
        expect(new Set(raced).size).toBe(1);
        expect(['a', 'b', 'c']).toContain(raced[0]);
        expect(await s.serverSecret('other-key', 'x')).toBe('x');
      });

      contract('records a use with touchToken, and creates nothing for an unknown hash', async (s) => {
        const t = tokenRecord('acme');
        await s.putToken(t);
        await s.touchToken(t.hash, at(50));
        expect(await s.getTokenByHash(t.hash)).toEqual({ ...t, last_used_at: at(50) });
        const unknown = '1'.repeat(64);
        await s.touchToken(unknown, at(50));
        expect(await s.getTokenByHash(unknown)).toBeNull();
      });
    });
  });
}
