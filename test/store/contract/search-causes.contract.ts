/**
 * The recorded causes of the search engine contract (./search.contract.ts runs it; issue 30 item 2,
 * `person:`): an agent event's `cause` is a key (`SearchDoc.cause`), and the messages filed under it
 * (`WriterBatch.causes`) make their people its people, as replay's recorded attribution does
 * (lib/log/replay/attribution.ts): `e:<id>` for an event whose `caused_by` lists messages, `t:<turn_id>`
 * for one whose `caused_by` is null, filed by the turn's `turn.start` from its `context_message_ids`
 * (lib/service/search/docs.ts). The turn's start, the event and the message may come in any batch of any
 * writer of the session, in any order; nothing of another session or tenant counts.
 */
import { expect } from 'vitest';
import { newId } from '../../../lib/log/format/ids.js';
import type { SearchDoc, SearchIndex } from '../../../lib/store/search.js';
import {
  batch,
  caused,
  causedBy,
  doc,
  found,
  query,
  type SearchCase,
  sortedKeys,
  turnContext,
} from './search-records.js';

/** The keys of `tenant`'s documents that `person:` values find (with words `match`, if any). */
const personOf = (index: SearchIndex, tenant: string, person: string[], match: string[] = []) =>
  found(index, tenant, query(match, { filters: { person } }));

/** An agent's event of `sid` in turn `turnId` whose `caused_by` is null: its cause is the turn's context. */
const inTurn = (sid: string, w: string, seq: number, text: string, turnId: string, type = 'output') =>
  doc(sid, w, seq, text, {
    type: type as SearchDoc['type'],
    field: type === 'action' ? 'input' : 'text',
    agent: 'claude-code',
    tool: type === 'action' ? 'Bash' : null,
    cause: `t:${turnId}`,
  });

export function searchCauseCases(contract: SearchCase): void {
  contract(
    "finds an agent event by its turn's context, whether the turn's start came in an earlier or a later batch, and the message in another writer's before or after",
    async (index) => {
      const sid = newId('s');
      const [wp, wa] = [newId('w'), newId('w')];
      const ask = doc(sid, wp, 1, 'please migrate billing', { person: 'priya', person_name: 'Priya Shah' });
      const askJo = doc(sid, wp, 2, 'and the invoices', { person: 'jo' });
      // turn 1: its start in an earlier batch of the agent's writer than its events
      const run1 = inTurn(sid, wa, 2, 'npm run migrate', 't_1', 'action');
      const out1 = inTurn(sid, wa, 3, 'billing migrated', 't_1');
      expect(
        await index.applyWriter(batch('acme', sid, wa, 0, 100, [], [], turnContext(sid, 't_1', ask.id))),
      ).toBe(true);
      expect(await index.applyWriter(batch('acme', sid, wa, 100, 200, [run1, out1]))).toBe(true);
      // the person's message not indexed yet: the agent's events are nobody's
      expect(await personOf(index, 'acme', ['priya'])).toEqual([]);
      expect(await index.applyWriter(batch('acme', sid, wp, 0, 100, [ask, askJo]))).toBe(true);
      expect(await personOf(index, 'acme', ['priya'])).toEqual(sortedKeys(ask, run1, out1));
      expect(await personOf(index, 'acme', ['PRIYA SHAH'], ['billing'])).toEqual(sortedKeys(ask, out1));
      // turn 2: its events first, its start in a later batch; its context lists both people's messages
      const out2 = inTurn(sid, wa, 5, 'invoices migrated', 't_2');
      expect(await index.applyWriter(batch('acme', sid, wa, 200, 300, [out2]))).toBe(true);
      expect(await personOf(index, 'acme', ['jo'])).toEqual(sortedKeys(askJo));
      const start2 = turnContext(sid, 't_2', ask.id, askJo.id);
      expect(await index.applyWriter(batch('acme', sid, wa, 300, 400, [], [], start2))).toBe(true);
      expect(await personOf(index, 'acme', ['jo'])).toEqual(sortedKeys(askJo, out2));
      expect(await personOf(index, 'acme', ['priya'], ['migrated'])).toEqual(sortedKeys(out1, out2));
      // the same in another writer's batch (a turn's start in a writer of its own): filed once, same answer
      expect(
        await index.applyWriter(
          batch('acme', sid, newId('w'), 0, 50, [], [], turnContext(sid, 't_1', ask.id)),
        ),
      ).toBe(true);
      expect(await personOf(index, 'acme', ['priya'])).toEqual(sortedKeys(ask, run1, out1, out2));
      expect(await personOf(index, 'acme', ['nobody'])).toEqual([]);
    },
  );

  contract(
    "lists each message under its event's key: all of them count, only messages count, and no cause (`caused_by: []`) never matches",
    async (index) => {
      const sid = newId('s');
      const [wp, wa] = [newId('w'), newId('w')];
      const ask = doc(sid, wp, 1, 'fix the parser', { person: 'priya' });
      const askJo = doc(sid, wp, 2, 'and the lexer', { person: 'jo' });
      const note = doc(sid, wp, 3, 'remember the lexer', { type: 'note', person: 'priya' });
      const both = caused(doc(sid, wa, 1, 'parser and lexer fixed', { type: 'output', agent: 'codex' }));
      // its cause names a note of Priya's: a note is no message, so it is not hers
      const byNote = caused(doc(sid, wa, 2, 'noted', { type: 'output', agent: 'codex' }));
      // `caused_by: []` in turn t_1, whose context is Priya's: recorded as caused by nothing
      const none = doc(sid, wa, 3, 'idle again', { type: 'output', agent: 'codex', cause: null });
      const causes = [
        ...causedBy(both, ask, askJo),
        ...causedBy(byNote, note),
        ...turnContext(sid, 't_1', ask.id),
      ];
      await index.applyWriter(batch('acme', sid, wp, 0, 300, [ask, askJo, note]));
      await index.applyWriter(batch('acme', sid, wa, 0, 300, [both, byNote, none], [], causes));
      expect(await personOf(index, 'acme', ['priya'])).toEqual(sortedKeys(ask, note, both));
      expect(await personOf(index, 'acme', ['jo'])).toEqual(sortedKeys(askJo, both));
      expect(await personOf(index, 'acme', ['priya'], ['idle'])).toEqual([]);
      expect(await found(index, 'acme', query(['idle']))).toEqual(sortedKeys(none));
    },
  );

  contract(
    'never takes a person from a message of another session or tenant, whatever its cause names',
    async (index) => {
      const [s1, s2] = [newId('s'), newId('s')];
      const [wp, wa] = [newId('w'), newId('w')];
      const ask = doc(s1, wp, 1, 'deploy the service', { person: 'priya' });
      await index.applyWriter(batch('acme', s1, wp, 0, 100, [ask]));
      // in s2, a cause naming s1's message, under its event's key and under a turn's
      const there = caused(doc(s2, wa, 1, 'deployed there', { type: 'output', agent: 'codex' }));
      const turnThere = inTurn(s2, wa, 2, 'deployed in turn', 't_9');
      await index.applyWriter(
        batch(
          'acme',
          s2,
          wa,
          0,
          100,
          [there, turnThere],
          [],
          [...causedBy(there, ask), ...turnContext(s2, 't_9', ask.id)],
        ),
      );
      // in s1 of acme, a cause naming a message only globex holds (the same session id there)
      const theirs = doc(s1, wp, 1, 'their deploy', { person: 'priya', id: newId('m') });
      await index.applyWriter(batch('globex', s1, wp, 0, 100, [theirs]));
      const mine = caused(doc(s1, wa, 1, 'deployed here', { type: 'output', agent: 'codex' }));
      const myTurn = inTurn(s1, wa, 2, 'deployed in my turn', 't_8');
      await index.applyWriter(
        batch(
          'acme',
          s1,
          wa,
          0,
          100,
          [mine, myTurn],
          [],
          [...causedBy(mine, theirs), ...turnContext(s1, 't_8', theirs.id)],
        ),
      );
      // globex files, under acme's keys of the same session, its own Priya's message
      await index.applyWriter(
        batch(
          'globex',
          s1,
          wa,
          0,
          100,
          [],
          [],
          [...causedBy(mine, theirs), ...turnContext(s1, 't_8', theirs.id)],
        ),
      );
      expect(await personOf(index, 'acme', ['priya'])).toEqual(sortedKeys(ask));
      expect(await personOf(index, 'acme', ['priya'], ['deployed'])).toEqual([]);
      expect(await personOf(index, 'globex', ['priya'])).toEqual(sortedKeys(theirs));
      // a cause of another session than its batch's is refused, nothing written
      const stray = batch('acme', s1, newId('w'), 0, 100, [], [], turnContext(s2, 't_8', ask.id));
      await expect(index.applyWriter(stray)).rejects.toThrow(/cause/);
      expect(await index.indexedLength('acme', s1, stray.w)).toBe(0);
      const unfit = batch(
        'acme',
        s1,
        stray.w,
        0,
        100,
        [],
        [],
        [{ sid: s1, key: 't_8', message_id: 7 as unknown as string }],
      );
      await expect(index.applyWriter(unfit)).rejects.toThrow();
      expect(await index.indexedLength('acme', s1, stray.w)).toBe(0);
    },
  );

  contract(
    'changes nothing when a batch with causes is replayed or its causes are filed again',
    async (index) => {
      const sid = newId('s');
      const [wp, wa] = [newId('w'), newId('w')];
      const ask = doc(sid, wp, 1, 'rotate the keys', { person: 'priya' });
      const run = inTurn(sid, wa, 1, 'rotate-keys --all', 't_1', 'action');
      const start = turnContext(sid, 't_1', ask.id);
      await index.applyWriter(batch('acme', sid, wp, 0, 100, [ask]));
      // the same cause twice in one batch (a context listing a message twice) is one cause
      const first = batch('acme', sid, wa, 0, 100, [run], [], [...start, ...start]);
      expect(await index.applyWriter(first)).toBe(true);
      const before = await index.query('acme', query([], { filters: { person: ['priya'] } }));
      expect(before).toHaveLength(2);
      expect(await index.applyWriter(first)).toBe(false);
      expect(await index.query('acme', query([], { filters: { person: ['priya'] } }))).toEqual(before);
      // the next batch reads the turn's start and its event again: replaced, no second hit
      expect(await index.applyWriter(batch('acme', sid, wa, 100, 200, [run], [], start))).toBe(true);
      expect(await index.query('acme', query([], { filters: { person: ['priya'] } }))).toEqual(before);
      expect((await index.stats('acme')).docs).toBe(2);
    },
  );

  contract(
    "forgets a session's causes, or a tenant's, with it; a rebuilt session matches the same",
    async (index) => {
      const [s1, s2] = [newId('s'), newId('s')];
      const [wp, wa] = [newId('w'), newId('w')];
      const build = async (tenant: string, sid: string, withStart: boolean) => {
        const ask = doc(sid, wp, 1, 'tidy the logs', { person: 'priya', id: `m_${sid}` });
        const out = { ...inTurn(sid, wa, 1, 'logs tidied', 't_1'), id: `e_${sid}` };
        await index.applyWriter(batch(tenant, sid, wp, 0, 100, [ask]));
        await index.applyWriter(batch(tenant, sid, wa, 0, 100, [out]));
        if (withStart) {
          await index.applyWriter(batch(tenant, sid, wa, 100, 200, [], [], turnContext(sid, 't_1', ask.id)));
        }
        return [ask, out] as const;
      };
      const [ask1, out1] = await build('acme', s1, true);
      const [ask2, out2] = await build('acme', s2, true);
      const [askG, outG] = await build('globex', s1, true);
      const built = await index.query('acme', query([], { filters: { person: ['priya'] } }));
      expect(await personOf(index, 'acme', ['priya'])).toEqual(sortedKeys(ask1, out1, ask2, out2));
      // dropped, then its documents again without the turn's start: the causes went with the session
      await index.dropSession('acme', s1);
      await build('acme', s1, false);
      expect(await personOf(index, 'acme', ['priya'])).toEqual(sortedKeys(ask1, ask2, out2));
      await index.applyWriter(batch('acme', s1, wa, 100, 200, [], [], turnContext(s1, 't_1', ask1.id)));
      expect(await index.query('acme', query([], { filters: { person: ['priya'] } }))).toEqual(built);
      // the whole tenant: its causes gone, another tenant's kept
      await index.dropSession('acme', null);
      await build('acme', s2, false);
      expect(await personOf(index, 'acme', ['priya'])).toEqual(sortedKeys(ask2));
      expect(await personOf(index, 'globex', ['priya'])).toEqual(sortedKeys(askG, outG));
    },
  );
}
