/**
 * The search engine contract (issue 30 items 4 to 6, `SearchIndex` in lib/store/search.ts): one suite
 * both engines run, SQLite FTS5 (./search-sqlite.test.ts) and PostgreSQL over `pg` and over the RDS Data
 * API. `runSearchContract(name, newIndex)` declares the cases, each on a new, empty index that its
 * `cleanup` removes. The cases of matching, filters, ranking and paging are here; those of writing
 * (the writer cursor, replays, corrections, session facts, dropping, tenants) in
 * ./search-writes.contract.ts, those of recorded causes (`person:` through an agent event's cause) in
 * ./search-causes.contract.ts. Documents are built as the service builds them (./search-records.ts).
 */
import { afterEach, beforeEach, describe, expect, it, type TestContext } from 'vitest';
import { newId } from '../../../lib/log/format/ids.js';
import type { EngineQuery, SearchIndex } from '../../../lib/store/search.js';
import { searchCauseCases } from './search-causes.contract.js';
import {
  batch,
  caused,
  causedBy,
  doc,
  found,
  keyOf,
  keysOf,
  query,
  type SearchCase,
  sortedKeys,
  us,
} from './search-records.js';
import { searchWriteCases } from './search-writes.contract.js';

/** A new, empty index and how to remove it (close it, drop its database or folder). */
export type SearchIndexFactory = () => Promise<{ index: SearchIndex; cleanup(): Promise<void> }>;

/**
 * Runs the contract on the engine `newIndex` makes. `skip` names cases (by title) the engine does not
 * pass, each with its reason (shown in the report).
 */
export function runSearchContract(
  name: string,
  newIndex: SearchIndexFactory,
  skip: Record<string, string> = {},
): void {
  describe(`search contract: ${name}`, () => {
    let made: Awaited<ReturnType<SearchIndexFactory>>;
    beforeEach(async () => {
      made = await newIndex();
    });
    afterEach(async () => {
      await made.cleanup();
    });
    const contract: SearchCase = (title, fn) =>
      it(title, async (ctx: TestContext) => {
        const reason = skip[title];
        if (reason !== undefined) ctx.skip(reason);
        await fn(made.index);
      });
    searchQueryCases(contract);
    searchWriteCases(contract);
    searchCauseCases(contract);
  });
}

function searchQueryCases(contract: SearchCase): void {
  contract('finds a word, and a phrase only with its words adjacent and in order', async (index) => {
    const sid = newId('s');
    const w = newId('w');
    const a = doc(sid, w, 1, 'Run `terraform apply` on the billing_migration branch');
    const b = doc(sid, w, 2, 'apply the terraform plan, then wait');
    const c = doc(sid, w, 3, 'Un café crème, naïve question', { person: 'priya', person_name: 'Priya Shah' });
    const d = doc(sid, w, 4, 'nothing to see');
    expect(await index.applyWriter(batch('acme', sid, w, 0, 400, [a, b, c, d]))).toBe(true);
    expect(await found(index, 'acme', query(['terraform']))).toEqual(sortedKeys(a, b));
    expect(await found(index, 'acme', query(['terraform apply']))).toEqual(sortedKeys(a));
    expect(await found(index, 'acme', query(['apply terraform']))).toEqual([]);
    expect(await found(index, 'acme', query(['terraform', 'plan']))).toEqual(sortedKeys(b));
    expect(await found(index, 'acme', query(['terraform', 'then wait']))).toEqual(sortedKeys(b));
    // `billing_migration` is the phrase of two words, as the parser makes it
    expect(await found(index, 'acme', query(['billing-migration']))).toEqual(sortedKeys(a));
    expect(await found(index, 'acme', query(['migration billing']))).toEqual([]);
    // whole words only, and marks are kept: `cafe` is another word than `café`
    expect(await found(index, 'acme', query(['terra']))).toEqual([]);
    expect(await found(index, 'acme', query(['café']))).toEqual(sortedKeys(c));
    expect(await found(index, 'acme', query(['CAFÉ CRÈME']))).toEqual(sortedKeys(c));
    expect(await found(index, 'acme', query(['cafe']))).toEqual([]);
    // the person's names are in its terms
    expect(await found(index, 'acme', query(['priya']))).toEqual(sortedKeys(c));
    expect(await found(index, 'acme', query(['shah']))).toEqual(sortedKeys(c));
    expect(await found(index, 'acme', query(['terraform', 'absent']))).toEqual([]);
  });

  contract('answers each hit with its document as given, the session facts and a rank', async (index) => {
    const sid = newId('s');
    const w = newId('w');
    const d = doc(sid, w, 7, 'grep -rn "TODO" lib/', {
      type: 'action',
      field: 'input',
      agent: 'claude-code',
      tool: 'Bash',
      cause: newId('e'),
    });
    const unknownTime = doc(sid, w, 8, 'grep for the time', { at_us: null, ts: 'not a time' });
    await index.applyWriter(batch('acme', sid, w, 0, 90, [d, unknownTime]));
    const [hit] = await index.query('acme', query(['todo']));
    expect(hit).toEqual({ doc: d, corrected: false, title: null, state: null, rank: expect.any(Number) });
    await index.putSessionFacts({
      tenant: 'acme',
      sid,
      state: 'blocked',
      title: 'Find the TODOs',
      reports: [],
    });
    const again = await index.query('acme', query(['grep']));
    // the shorter document first (bm25 favours it), whatever its time
    expect(keysOf(again)).toEqual([keyOf(unknownTime), keyOf(d)]);
    expect(again.map((h) => [h.title, h.state])).toEqual([
      ['Find the TODOs', 'blocked'],
      ['Find the TODOs', 'blocked'],
    ]);
    expect(again[0]?.doc).toEqual(unknownTime);
  });

  contract('leaves out documents with an excluded word or phrase', async (index) => {
    const sid = newId('s');
    const w = newId('w');
    const a = doc(sid, w, 1, 'deploy the parser', { agent: 'codex' });
    const b = doc(sid, w, 2, 'deploy the parser fix', { agent: 'codex' });
    const c = doc(sid, w, 3, 'deploy billing; parser the', { agent: 'claude-code' });
    await index.applyWriter(batch('acme', sid, w, 0, 300, [a, b, c]));
    expect(await found(index, 'acme', query(['deploy'], { exclude: ['fix'] }))).toEqual(sortedKeys(a, c));
    expect(await found(index, 'acme', query(['deploy'], { exclude: ['the parser'] }))).toEqual(sortedKeys(c));
    expect(await found(index, 'acme', query(['deploy'], { exclude: ['fix', 'billing'] }))).toEqual(
      sortedKeys(a),
    );
    // exclusions with filters alone
    expect(
      await found(index, 'acme', query([], { exclude: ['fix'], filters: { agent: ['codex'] } })),
    ).toEqual(sortedKeys(a));
    expect(await found(index, 'acme', query(['parser'], { exclude: ['parser'] }))).toEqual([]);
  });

  contract(
    'filters by agent exactly, tool without case, type and session, an empty list matching nothing',
    async (index) => {
      const [s1, s2] = [newId('s'), newId('s')];
      const w = newId('w');
      const msg = doc(s1, w, 1, 'please run the tests', { person: 'priya' });
      const act = doc(s1, w, 2, 'npm test', {
        type: 'action',
        field: 'input',
        agent: 'claude-code',
        tool: 'Bash',
      });
      const out = doc(s1, w, 3, 'the tests pass', { type: 'output', agent: 'claude-code' });
      const other = doc(s2, w, 1, 'run the tests again', { type: 'output', agent: 'codex', tool: 'shell' });
      await index.applyWriter(batch('acme', s1, w, 0, 300, [msg, act, out]));
      await index.applyWriter(batch('acme', s2, w, 0, 100, [other]));
      const f = (filters: EngineQuery['filters']) => found(index, 'acme', query([], { filters }));
      expect(await f({ agent: ['claude-code'] })).toEqual(sortedKeys(act, out));
      expect(await f({ agent: ['Claude-Code'] })).toEqual([]);
      expect(await f({ agent: ['codex', 'claude-code'] })).toEqual(sortedKeys(act, out, other));
      expect(await f({ tool: ['bash'] })).toEqual(sortedKeys(act));
      expect(await f({ tool: ['BASH', 'Shell'] })).toEqual(sortedKeys(act, other));
      expect(await f({ type: ['output'] })).toEqual(sortedKeys(out, other));
      expect(await f({ type: ['message', 'action'] })).toEqual(sortedKeys(msg, act));
      expect(await f({ sid: [s2] })).toEqual(sortedKeys(other));
      expect(await f({ sid: [s1, s2], type: ['output'], agent: ['codex'] })).toEqual(sortedKeys(other));
      expect(await found(index, 'acme', query(['tests'], { filters: { sid: [s1] } }))).toEqual(
        sortedKeys(msg, out),
      );
      for (const key of ['agent', 'tool', 'type', 'sid', 'person', 'state'] as const) {
        expect(await f({ [key]: [] }), `${key}: []`).toEqual([]);
        expect(
          await found(index, 'acme', query(['tests'], { filters: { [key]: [] } })),
          `${key}: []`,
        ).toEqual([]);
      }
    },
  );

  contract(
    "filters by person, their display name without case, or the person of an agent event's cause",
    async (index) => {
      const sid = newId('s');
      const [wp, wa] = [newId('w'), newId('w')];
      const ask = doc(sid, wp, 1, 'fix the parser', { person: 'priya', person_name: 'Priya Shah' });
      const askJo = doc(sid, wp, 2, 'and the lexer', { person: 'jo', person_name: 'Jo Ng' });
      // `caused_by: [ask]` and `caused_by: [askJo]`, filed under each event's `e:<id>`
      const answer = caused(doc(sid, wa, 1, 'parser fixed', { type: 'output', agent: 'codex' }));
      const forJo = caused(doc(sid, wa, 2, 'lexer fixed', { type: 'output', agent: 'codex' }));
      const uncaused = doc(sid, wa, 3, 'idle', { type: 'output', agent: 'codex' });
      await index.applyWriter(batch('acme', sid, wp, 0, 200, [ask, askJo]));
      await index.applyWriter(
        batch(
          'acme',
          sid,
          wa,
          0,
          300,
          [answer, forJo, uncaused],
          [],
          [...causedBy(answer, ask), ...causedBy(forJo, askJo)],
        ),
      );
      const f = (person: string[], match: string[] = []) =>
        found(index, 'acme', query(match, { filters: { person } }));
      expect(await f(['priya'])).toEqual(sortedKeys(ask, answer));
      expect(await f(['PRIYA'])).toEqual(sortedKeys(ask, answer));
      expect(await f(['priya shah'])).toEqual(sortedKeys(ask, answer));
      expect(await f(['Jo Ng'])).toEqual(sortedKeys(askJo, forJo));
      expect(await f(['priya', 'jo'])).toEqual(sortedKeys(ask, askJo, answer, forJo));
      expect(await f(['priya'], ['fixed'])).toEqual(sortedKeys(answer));
      expect(await f(['shah'])).toEqual([]);
      // a cause in another session naming this one's message is not that message
      const elsewhere = newId('s');
      const stray = caused(
        doc(elsewhere, wa, 1, 'parser fixed elsewhere', { type: 'output', agent: 'codex' }),
      );
      await index.applyWriter(batch('acme', elsewhere, wa, 0, 100, [stray], [], causedBy(stray, ask)));
      expect(await f(['priya'], ['fixed'])).toEqual(sortedKeys(answer));
    },
  );

  contract('filters by the session state of its facts; a session without facts has none', async (index) => {
    const [s1, s2, s3] = [newId('s'), newId('s'), newId('s')];
    const w = newId('w');
    const docs = [s1, s2, s3].map((sid) => doc(sid, w, 1, 'migrate the billing tables'));
    for (const [i, sid] of [s1, s2, s3].entries())
      await index.applyWriter(batch('acme', sid, w, 0, 50, [docs[i]!]));
    await index.putSessionFacts({ tenant: 'acme', sid: s1, state: 'blocked', title: null, reports: [] });
    await index.putSessionFacts({ tenant: 'acme', sid: s2, state: 'done', title: null, reports: [] });
    const f = (state: string[]) => found(index, 'acme', query(['billing'], { filters: { state } }));
    expect(await f(['blocked'])).toEqual(sortedKeys(docs[0]!));
    expect(await f(['blocked', 'done'])).toEqual(sortedKeys(docs[0]!, docs[1]!));
    expect(await f(['working'])).toEqual([]);
    // the state follows the latest facts
    await index.putSessionFacts({ tenant: 'acme', sid: s1, state: 'done', title: 'Billing', reports: [] });
    expect(await f(['done'])).toEqual(sortedKeys(docs[0]!, docs[1]!));
    expect(await f(['blocked'])).toEqual([]);
  });

  contract(
    'filters by instant: after inclusive, before exclusive, an unknown time never in range',
    async (index) => {
      const sid = newId('s');
      const w = newId('w');
      const docs = [10, 20, 30].map((when, i) => doc(sid, w, i + 1, `deploy number ${i}`, { when }));
      const timeless = doc(sid, w, 4, 'deploy sometime', { at_us: null });
      await index.applyWriter(batch('acme', sid, w, 0, 400, [...docs, timeless]));
      const f = (filters: { after_us?: number; before_us?: number }) =>
        found(index, 'acme', query(['deploy'], { filters }));
      expect(await f({ after_us: us(20) })).toEqual(sortedKeys(docs[1]!, docs[2]!));
      expect(await f({ before_us: us(20) })).toEqual(sortedKeys(docs[0]!));
      expect(await f({ after_us: us(10), before_us: us(30) })).toEqual(sortedKeys(docs[0]!, docs[1]!));
      expect(await f({ after_us: us(31) })).toEqual([]);
      expect(await f({})).toEqual(sortedKeys(...docs, timeless));
    },
  );

  contract('lists the documents of filters alone newest first, then by sid, w, seq', async (index) => {
    const [s1, s2] = [newId('s'), newId('s')].sort();
    const w = newId('w');
    const old = doc(s1!, w, 1, 'first', { agent: 'codex', when: 1 });
    const late = doc(s1!, w, 2, 'second', { agent: 'codex', when: 9 });
    const tieA = doc(s1!, w, 3, 'third', { agent: 'codex', when: 5 });
    const tieB = doc(s2!, w, 1, 'fourth', { agent: 'codex', when: 5 });
    await index.applyWriter(batch('acme', s2!, w, 0, 10, [tieB]));
    await index.applyWriter(batch('acme', s1!, w, 0, 30, [old, late, tieA]));
    const hits = await index.query('acme', query([], { filters: { agent: ['codex'] } }));
    expect(keysOf(hits)).toEqual([late, tieA, tieB, old].map(keyOf));
  });

  contract('matches words shaped like query syntax as words, and never runs them', async (index) => {
    const sid = newId('s');
    const w = newId('w');
    const syntax = doc(sid, w, 1, 'use NEAR(x y) or "quoted" * AND NOT - col:value ^start');
    const alpha = doc(sid, w, 2, 'alpha');
    const bravo = doc(sid, w, 3, 'bravo bravoes');
    await index.applyWriter(batch('acme', sid, w, 0, 300, [syntax, alpha, bravo]));
    for (const word of ['near', 'or', 'and', 'not', 'col', 'value', 'start', 'quoted']) {
      expect(await found(index, 'acme', query([word])), word).toEqual(sortedKeys(syntax));
    }
    expect(await found(index, 'acme', query(['col:value']))).toEqual(sortedKeys(syntax));
    expect(await found(index, 'acme', query(['alpha'], { exclude: ['or'] }))).toEqual(sortedKeys(alpha));
    // terms as an engine could be given them, syntax and all: words at most, never an operator
    const raw = async (...terms: string[]) =>
      keysOf(
        await index.query('acme', { match: [{ terms }], exclude: [], filters: {}, limit: 50, offset: 0 }),
      ).sort();
    expect(await raw('alpha" OR "bravo')).toEqual([]);
    expect(await raw('alpha OR bravo')).toEqual([]);
    expect(await raw('brav*')).toEqual([]);
    expect(await raw('NEAR(alpha bravo)')).toEqual([]);
    expect(await raw('body:alpha')).toEqual([]);
    expect(await raw('-alpha')).toEqual(sortedKeys(alpha));
    expect(await raw('"')).toEqual([]);
    expect(await raw("alpha'); DROP TABLE x; --")).toEqual([]);
    expect(await found(index, 'acme', query(['bravo']))).toEqual(sortedKeys(bravo));
  });

  contract(
    'ranks a short document with the word several times above a long one with it once',
    async (index) => {
      const sid = newId('s');
      const w = newId('w');
      const filler = Array.from({ length: 40 }, (_, i) => `word${i}`).join(' ');
      const long = doc(sid, w, 1, `the parser ${filler}`, { when: 50 });
      const short = doc(sid, w, 2, 'parser parser parser fix', { when: 1 });
      const others = [3, 4, 5, 6].map((seq) => doc(sid, w, seq, `unrelated text ${seq}`));
      await index.applyWriter(batch('acme', sid, w, 0, 900, [long, short, ...others]));
      const hits = await index.query('acme', query(['parser']));
      expect(keysOf(hits)).toEqual([keyOf(short), keyOf(long)]);
      expect(hits[0]!.rank).toBeGreaterThan(hits[1]!.rank);
    },
  );

  contract('orders equal ranks newest first, then by sid, w, seq', async (index) => {
    const [s1, s2] = [newId('s'), newId('s')].sort();
    const w = newId('w');
    const a = doc(s1!, w, 1, 'deploy billing', { when: 3 });
    const b = doc(s1!, w, 2, 'deploy billing', { when: 7 });
    const c = doc(s2!, w, 1, 'deploy billing', { when: 5 });
    const d = doc(s1!, w, 3, 'deploy billing', { when: 5 });
    await index.applyWriter(batch('acme', s1!, w, 0, 300, [a, b, d]));
    await index.applyWriter(batch('acme', s2!, w, 0, 100, [c]));
    const hits = await index.query('acme', query(['deploy billing']));
    expect(keysOf(hits)).toEqual([b, d, c, a].map(keyOf));
    expect(new Set(hits.map((h) => h.rank)).size).toBe(1);
  });

  contract('pages with limit and offset through one stable order', async (index) => {
    const [s1, s2] = [newId('s'), newId('s')];
    const w = newId('w');
    // several texts (several ranks), several shared instants (ties)
    const docs = Array.from({ length: 25 }, (_, i) =>
      doc(i % 2 ? s1 : s2, w, i, `${'parser '.repeat(1 + (i % 3))}item ${i}`, { when: i % 5 }),
    );
    await index.applyWriter(
      batch(
        'acme',
        s1,
        w,
        0,
        1000,
        docs.filter((_, i) => i % 2),
      ),
    );
    await index.applyWriter(
      batch(
        'acme',
        s2,
        w,
        0,
        1000,
        docs.filter((_, i) => !(i % 2)),
      ),
    );
    const all = keysOf(await index.query('acme', query(['parser'], { limit: 50 })));
    expect(all).toHaveLength(25);
    const pages: string[] = [];
    for (let offset = 0; offset < 30; offset += 7) {
      const page = keysOf(await index.query('acme', query(['parser'], { limit: 7, offset })));
      expect(page).toEqual(keysOf(await index.query('acme', query(['parser'], { limit: 7, offset }))));
      pages.push(...page);
    }
    expect(pages).toEqual(all);
    const listed = keysOf(await index.query('acme', query([], { filters: { sid: [s1, s2] }, limit: 50 })));
    const listedPages: string[] = [];
    for (let offset = 0; offset < 25; offset += 10) {
      listedPages.push(
        ...keysOf(await index.query('acme', query([], { filters: { sid: [s1, s2] }, limit: 10, offset }))),
      );
    }
    expect(listedPages).toEqual(listed);
    expect(new Set(listed).size).toBe(25);
  });

  contract('counts the tenant documents and gives a size when it can', async (index) => {
    const sid = newId('s');
    const w = newId('w');
    expect((await index.stats('acme')).docs).toBe(0);
    await index.applyWriter(
      batch(
        'acme',
        sid,
        w,
        0,
        300,
        [1, 2, 3].map((s) => doc(sid, w, s, `text ${s}`)),
      ),
    );
    await index.applyWriter(batch('globex', sid, w, 0, 100, [doc(sid, w, 1, 'other tenant')]));
    const stats = await index.stats('acme');
    expect(stats.docs).toBe(3);
    expect(stats.bytes === null || stats.bytes > 0).toBe(true);
    expect((await index.stats('globex')).docs).toBe(1);
  });
}
