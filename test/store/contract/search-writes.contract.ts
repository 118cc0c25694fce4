/**
 * The writing half of the search engine contract (./search.contract.ts runs it): the writer's indexed
 * length as the condition of a batch, replays that change nothing, corrections in either arrival order
 * (the last in `(at_us, w, seq)` order wins), session facts and report documents replaced whole,
 * forgetting a session or a tenant, and tenants that never meet (issue 30 item 6: a phrase that exists
 * only in another tenant is found by no query and no filter).
 */
import { expect } from 'vitest';
import { newId } from '../../../lib/log/format/ids.js';
import type { SearchIndex } from '../../../lib/store/search.js';
import {
  batch,
  caused,
  causedBy,
  doc,
  fix,
  found,
  keyOf,
  keysOf,
  query,
  type SearchCase,
  sortedKeys,
} from './search-records.js';

/** Every document of `tenant` (listed by their instant range, which holds them all). */
const everything = (index: SearchIndex, tenant: string) =>
  found(index, tenant, query([], { filters: { after_us: 0 } }));

export function searchWriteCases(contract: SearchCase): void {
  contract('applies a batch on condition of the indexed length, writing nothing otherwise', async (index) => {
    const sid = newId('s');
    const w = newId('w');
    const first = doc(sid, w, 1, 'deploy the parser');
    expect(await index.indexedLength('acme', sid, w)).toBe(0);
    expect(await index.applyWriter(batch('acme', sid, w, 50, 120, [first]))).toBe(false);
    expect(await index.indexedLength('acme', sid, w)).toBe(0);
    expect(await everything(index, 'acme')).toEqual([]);
    expect((await index.stats('acme')).docs).toBe(0);

    expect(await index.applyWriter(batch('acme', sid, w, 0, 120, [first]))).toBe(true);
    expect(await index.indexedLength('acme', sid, w)).toBe(120);
    const second = doc(sid, w, 2, 'lexer too');
    for (const stale of [0, 119, 121]) {
      expect(await index.applyWriter(batch('acme', sid, w, stale, 300, [second])), `from ${stale}`).toBe(
        false,
      );
    }
    expect(await index.indexedLength('acme', sid, w)).toBe(120);
    expect(await everything(index, 'acme')).toEqual(sortedKeys(first));
    expect(await index.applyWriter(batch('acme', sid, w, 120, 300, [second]))).toBe(true);
    expect(await index.indexedLength('acme', sid, w)).toBe(300);
    // another writer of the session and the same writer id in another session have lengths of their own
    expect(await index.indexedLength('acme', sid, newId('w'))).toBe(0);
    expect(await index.indexedLength('acme', newId('s'), w)).toBe(0);
    // a batch with no documents moves the length all the same (lines with nothing searchable)
    expect(await index.applyWriter(batch('acme', sid, w, 300, 340, []))).toBe(true);
    expect(await index.indexedLength('acme', sid, w)).toBe(340);
  });

  contract(
    'changes nothing when a batch is replayed, and replaces documents of the same seq',
    async (index) => {
      const sid = newId('s');
      const [w, wc] = [newId('w'), newId('w')];
      const a = doc(sid, w, 1, 'first words');
      const b = doc(sid, w, 2, 'second words, partly');
      const b1 = batch('acme', sid, w, 0, 100, [a, b]);
      expect(await index.applyWriter(b1)).toBe(true);
      const before = await index.query('acme', query(['words']));
      expect(await index.applyWriter(b1)).toBe(false);
      expect(await index.query('acme', query(['words']))).toEqual(before);
      // the next batch starts again at an event already indexed (its line was read again): replaced
      const b2 = { ...b, text: 'second words, whole', terms: 'second words whole' };
      const c = doc(sid, w, 3, 'third words');
      expect(await index.applyWriter(batch('acme', sid, w, 100, 200, [b2, c]))).toBe(true);
      expect((await index.stats('acme')).docs).toBe(3);
      expect(await found(index, 'acme', query(['partly']))).toEqual([]);
      expect(await found(index, 'acme', query(['whole']))).toEqual(sortedKeys(b2));
      // a rebuild after forgetting the session gives the same answers
      const fixA = fix(a, 'first words corrected', { w: wc, seq: 1, when: 9 });
      await index.applyWriter(batch('acme', sid, wc, 0, 80, [], [fixA]));
      const built = await index.query('acme', query(['words']));
      await index.dropSession('acme', sid);
      expect(await index.applyWriter(batch('acme', sid, w, 0, 100, [a, b]))).toBe(true);
      expect(await index.applyWriter(batch('acme', sid, w, 100, 200, [b2, c]))).toBe(true);
      expect(await index.applyWriter(batch('acme', sid, wc, 0, 80, [], [fixA]))).toBe(true);
      expect(await index.query('acme', query(['words']))).toEqual(built);
      // the same batch again after the rebuild, from where it was: refused, nothing doubled
      expect(await index.applyWriter(batch('acme', sid, wc, 0, 80, [], [fixA]))).toBe(false);
      expect((await index.stats('acme')).docs).toBe(3);
    },
  );

  contract('finds a corrected document by its fix, whichever arrived first', async (index) => {
    const sid = newId('s');
    const [w, wc] = [newId('w'), newId('w')];
    // the document first, then its fix (from another writer)
    const early = doc(sid, w, 1, 'deploy to staging now', { person: 'priya' });
    await index.applyWriter(batch('acme', sid, w, 0, 100, [early]));
    expect((await index.query('acme', query(['staging'])))[0]?.corrected).toBe(false);
    await index.applyWriter(
      batch(
        'acme',
        sid,
        wc,
        0,
        100,
        [],
        [fix(early, 'deploy to production now', { w: wc, seq: 1, when: 5 })],
      ),
    );
    // the fix first, then its document
    const late = doc(sid, w, 2, 'migrate billing on monday');
    await index.applyWriter(
      batch(
        'acme',
        sid,
        wc,
        100,
        200,
        [],
        [fix(late, 'migrate billing on friday', { w: wc, seq: 2, when: 6 })],
      ),
    );
    expect(await found(index, 'acme', query(['friday']))).toEqual([]);
    await index.applyWriter(batch('acme', sid, w, 100, 200, [late]));

    expect(await found(index, 'acme', query(['staging']))).toEqual([]);
    expect(await found(index, 'acme', query(['monday']))).toEqual([]);
    const prod = await index.query('acme', query(['production']));
    expect(prod).toHaveLength(1);
    expect(prod[0]).toMatchObject({
      corrected: true,
      doc: { ...early, text: 'deploy to production now', terms: expect.any(String) },
    });
    const friday = await index.query('acme', query(['billing on friday']));
    expect(friday.map((h) => [keyOf(h.doc), h.doc.text, h.corrected])).toEqual([
      [keyOf(late), 'migrate billing on friday', true],
    ]);
    // still found by its person's name, and by filters
    expect(await found(index, 'acme', query(['priya', 'production']))).toEqual(sortedKeys(early));
    expect(await found(index, 'acme', query(['production'], { filters: { person: ['priya'] } }))).toEqual(
      sortedKeys(early),
    );
  });

  contract(
    'shows the last fix in (at_us, w, seq) order, and ignores a fix of another field',
    async (index) => {
      const sid = newId('s');
      const [w, wa, wb] = [newId('w'), ...[newId('w'), newId('w')].sort()];
      const target = doc(sid, w, 1, 'original words');
      const other = doc(sid, w, 2, 'npm run build', { type: 'action', field: 'input', tool: 'Bash' });
      await index.applyWriter(batch('acme', sid, w, 0, 100, [target, other]));
      // the later fix arrives first; the earlier one after it does not win
      await index.applyWriter(
        batch('acme', sid, wa!, 0, 100, [], [fix(target, 'later words', { w: wa!, seq: 2, when: 20 })]),
      );
      await index.applyWriter(
        batch('acme', sid, wa!, 100, 200, [], [fix(target, 'earlier words', { w: wa!, seq: 1, when: 10 })]),
      );
      const shown = async () => (await index.query('acme', query(['words'])))[0]?.doc.text;
      expect(await shown()).toBe('later words');
      // same instant: the greater writer id wins, then the greater seq
      await index.applyWriter(
        batch('acme', sid, wb!, 0, 100, [], [fix(target, 'tied words b', { w: wb!, seq: 1, when: 20 })]),
      );
      expect(await shown()).toBe('tied words b');
      await index.applyWriter(
        batch(
          'acme',
          sid,
          wb!,
          100,
          200,
          [],
          [fix(target, 'tied words b later', { w: wb!, seq: 2, when: 20 })],
        ),
      );
      expect(await shown()).toBe('tied words b later');
      await index.applyWriter(
        batch('acme', sid, wa!, 200, 300, [], [fix(target, 'tied words a', { w: wa!, seq: 9, when: 20 })]),
      );
      expect(await shown()).toBe('tied words b later');
      expect(await found(index, 'acme', query(['original']))).toEqual([]);
      // a fix of `text` does not touch a document of `input`, nor one of `input` a document of `text`
      await index.applyWriter(
        batch(
          'acme',
          sid,
          wb!,
          200,
          300,
          [],
          [
            fix(other, 'npm run deploy', { w: wb!, seq: 3, when: 30, field: 'text' }),
            fix(target, 'input words', { w: wb!, seq: 4, when: 40, field: 'input' }),
          ],
        ),
      );
      const build = await index.query('acme', query(['npm run build']));
      expect(build.map((h) => [h.doc.text, h.corrected])).toEqual([['npm run build', false]]);
      expect(await found(index, 'acme', query(['deploy']))).toEqual([]);
      expect(await shown()).toBe('tied words b later');
    },
  );

  contract(
    "replaces a session's facts and report documents whole, leaving its writers' documents",
    async (index) => {
      const sid = newId('s');
      const w = newId('w');
      const said = doc(sid, w, 1, 'the billing work is under way');
      await index.applyWriter(batch('acme', sid, w, 0, 100, [said]));
      const report = (seq: number, text: string) =>
        doc(sid, '', seq, text, {
          type: 'report',
          field: seq === 1 ? 'note' : 'summary',
          id: `r_${seq}_${sid}`,
        });
      const [r1, r2] = [report(1, 'blocked on billing credentials'), report(2, 'migrate billing tables')];
      await index.putSessionFacts({
        tenant: 'acme',
        sid,
        state: 'blocked',
        title: 'Billing',
        reports: [r1, r2],
      });
      expect(await found(index, 'acme', query(['billing']))).toEqual(sortedKeys(said, r1, r2));
      expect(await found(index, 'acme', query(['billing'], { filters: { type: ['report'] } }))).toEqual(
        sortedKeys(r1, r2),
      );
      const r3 = report(1, 'billing done, tables migrated');
      await index.putSessionFacts({
        tenant: 'acme',
        sid,
        state: 'done',
        title: 'Billing migration',
        reports: [r3],
      });
      expect(await found(index, 'acme', query(['credentials']))).toEqual([]);
      expect(await found(index, 'acme', query(['migrate']))).toEqual([]);
      const hits = await index.query('acme', query(['billing']));
      expect(keysOf(hits).sort()).toEqual(sortedKeys(said, r3));
      expect(hits.map((h) => [h.title, h.state])).toEqual([
        ['Billing migration', 'done'],
        ['Billing migration', 'done'],
      ]);
      await index.putSessionFacts({ tenant: 'acme', sid, state: null, title: null, reports: [] });
      expect(await found(index, 'acme', query(['billing']))).toEqual(sortedKeys(said));
      expect((await index.query('acme', query(['billing'])))[0]).toMatchObject({ title: null, state: null });
      expect(await index.indexedLength('acme', sid, w)).toBe(100);
    },
  );

  contract('forgets a session, or a whole tenant, and nothing of another', async (index) => {
    const [s1, s2] = [newId('s'), newId('s')];
    const w = newId('w');
    const d1 = doc(s1, w, 1, 'shared words one');
    const d2 = doc(s2, w, 1, 'shared words two');
    const g = doc(s1, w, 1, 'shared words globex');
    await index.applyWriter(batch('acme', s1, w, 0, 100, [d1]));
    await index.applyWriter(batch('acme', s2, w, 0, 100, [d2]));
    await index.applyWriter(batch('globex', s1, w, 0, 100, [g]));
    await index.putSessionFacts({
      tenant: 'acme',
      sid: s1,
      state: 'blocked',
      title: 'One',
      reports: [doc(s1, '', 1, 'shared report', { type: 'report', field: 'note' })],
    });
    await index.dropSession('acme', s1);
    expect(await found(index, 'acme', query(['shared']))).toEqual(sortedKeys(d2));
    expect(await index.indexedLength('acme', s1, w)).toBe(0);
    expect(await index.indexedLength('acme', s2, w)).toBe(100);
    expect(await found(index, 'acme', query([], { filters: { state: ['blocked'] } }))).toEqual([]);
    expect(await found(index, 'globex', query(['shared']))).toEqual(sortedKeys(g));
    expect(await index.indexedLength('globex', s1, w)).toBe(100);
    // the facts and cursor are gone too: the session is indexed again from 0
    expect(await index.applyWriter(batch('acme', s1, w, 0, 100, [d1]))).toBe(true);
    await index.dropSession('acme', null);
    expect(await everything(index, 'acme')).toEqual([]);
    expect((await index.stats('acme')).docs).toBe(0);
    expect(await index.indexedLength('acme', s2, w)).toBe(0);
    expect(await found(index, 'globex', query(['shared']))).toEqual(sortedKeys(g));
  });

  contract('never finds what only another tenant holds, by any query or filter', async (index) => {
    // the same session and writer ids in both tenants, and a phrase only globex has
    const sid = newId('s');
    const [w, wc] = [newId('w'), newId('w')];
    const mine = doc(sid, w, 1, 'quarterly review notes', {
      person: 'priya',
      agent: 'codex',
      tool: 'Bash',
      type: 'action',
      field: 'input',
    });
    const theirs = doc(sid, w, 1, 'quarterly zebra forecast', {
      person: 'priya',
      agent: 'codex',
      tool: 'Bash',
      type: 'action',
      field: 'input',
      id: mine.id,
    });
    // its cause names the id both share: globex's message alone is what it names
    const theirAnswer = caused(doc(sid, w, 2, 'zebra forecast done', { type: 'output', agent: 'codex' }));
    await index.applyWriter(
      batch('globex', sid, w, 0, 100, [theirs, theirAnswer], [], causedBy(theirAnswer, theirs)),
    );
    await index.putSessionFacts({
      tenant: 'globex',
      sid,
      state: 'blocked',
      title: 'Zebra forecast',
      reports: [doc(sid, '', 1, 'zebra forecast blocked', { type: 'report', field: 'note' })],
    });
    expect(await index.indexedLength('acme', sid, w)).toBe(0);
    expect(await index.applyWriter(batch('acme', sid, w, 0, 100, [mine]))).toBe(true);
    // a fix in globex of the id both share does not touch acme's document
    await index.applyWriter(
      batch('globex', sid, wc, 0, 50, [], [fix(theirs, 'zebra forecast fixed', { w: wc, seq: 1, when: 50 })]),
    );
    const queries = [
      query(['zebra forecast']),
      query(['zebra']),
      query(['forecast'], { filters: { sid: [sid] } }),
      query([], { filters: { sid: [sid] } }),
      query([], { filters: { person: ['priya'] } }),
      query([], { filters: { agent: ['codex'] } }),
      query([], { filters: { tool: ['bash'] } }),
      query([], { filters: { type: ['output', 'report', 'action'] } }),
      query([], { filters: { state: ['blocked'] } }),
      query([], { filters: { after_us: 0 } }),
      query(['quarterly'], { exclude: ['zebra'] }),
    ];
    for (const q of queries) {
      const hits = await index.query('acme', q);
      expect(
        hits.every((h) => !/zebra/i.test(h.doc.text) && h.title === null && h.state === null),
        JSON.stringify(q),
      ).toBe(true);
      expect(
        keysOf(hits).every((k) => k === keyOf(mine)),
        JSON.stringify(q),
      ).toBe(true);
    }
    const [hit] = await index.query('acme', query(['quarterly']));
    expect(hit).toMatchObject({ doc: mine, corrected: false, title: null, state: null });
    expect(await found(index, 'globex', query(['zebra forecast']))).toHaveLength(3);
    expect((await index.stats('acme')).docs).toBe(1);
  });
}
