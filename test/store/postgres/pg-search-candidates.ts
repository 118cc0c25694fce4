/**
 * What PostgreSQL's `search_matching` (lib/store/postgres/schema.ts, version 3) does with a query's words
 * (issue 30): it ranks only the newest `SEARCH_CANDIDATES` matches that pass the query's exclusions and
 * filters, and applies each filter as the search statement does (search-query.ts), over each runner
 * (test/store/contract/search-postgres.test.ts over `pg`, search-data-api.test.ts over the Data API's
 * emulation).
 */
import { describe, expect, it } from 'vitest';
import { PgSearchIndex } from '../../../lib/store/postgres/search.js';
import { searchStatement } from '../../../lib/store/postgres/search-query.js';
import type { EngineQuery, SearchDoc } from '../../../lib/store/search.js';
import type { SearchDatabase } from '../../support/postgres.js';
import { batch, doc, type PgCaseOptions, type PgCaseRunners, words } from './pg-search-cases.js';

const T1 = 'acme';
const T2 = 'globex';
const SID = 's_01JAAAAAAAAAAAAAAAAAAAAAAA';

/** The candidate cases over one runner kind (see the module comment). */
export function runPgCandidateCases(title: string, options: PgCaseOptions): void {
  /** A case on a new database, with the index over the app role's runner. */
  const withDb =
    (fn: (r: PgCaseRunners & { index: PgSearchIndex; db: SearchDatabase }) => Promise<void>) => async () => {
      const db = await options.fresh();
      const runners = options.runners(db);
      const index = new PgSearchIndex({ runner: runners.app, timeoutMs: 5000 });
      try {
        await fn({ ...runners, index, db });
      } finally {
        await runners.app.close();
        await runners.owner.close();
      }
    };

  describe(title, () => {
    it(
      'a query with words ranks only its newest candidates that pass its filters and exclusions',
      withDb(async ({ app, index }) => {
        // 1..10 all say "common"; the even ones are codex's; 10 also says "skip"; 2 says it twice (the best
        // rank, but the oldest codex match).
        const docs = Array.from({ length: 10 }, (_, i) =>
          doc({
            seq: i + 1,
            text: i + 1 === 2 ? 'common common line' : i + 1 === 10 ? 'common skip line' : 'common line',
            agent: (i + 1) % 2 === 0 ? 'codex' : 'aider',
          }),
        );
        await index.applyWriter(batch(T1, docs));
        await index.applyWriter(batch(T2, [doc({ seq: 11, text: 'common line', agent: 'codex' })]));
        const q: EngineQuery = {
          ...words(['common']),
          exclude: [{ terms: ['skip'] }],
          filters: { agent: ['codex'] },
        };
        // Three candidates: the newest codex matches without "skip" (8, 6, 4), never 2, nor T2's 11.
        const built = searchStatement(T1, q, 3);
        const rows = await app.transaction(T1, (tx) => tx.query(built.sql, built.params));
        expect(rows.map((r) => Number(r.seq)).sort((a, b) => a - b)).toEqual([4, 6, 8]);
        // With the port's own count all of them are ranked: 2 first.
        expect((await index.query(T1, q)).map((h) => h.doc.seq)).toEqual([2, 8, 6, 4]);
      }),
    );

    it(
      'search_matching applies every filter as the statement does: words with a filter find the filter’s hits that hold the words',
      withDb(async ({ index }) => {
        const S2 = 's_01JZZZZZZZZZZZZZZZZZZZZZZZ';
        const docs = Array.from({ length: 24 }, (_, i) =>
          doc({
            seq: i + 1,
            text: i % 3 === 0 ? 'deploy the parser' : 'other words',
            agent: ['codex', 'aider'][i % 2] ?? null,
            tool: i % 4 === 0 ? 'Bash' : null,
            type: (['message', 'output', 'action', 'note'] as const)[i % 4] ?? 'message',
            person: i % 4 === 0 ? 'priya' : null,
            person_name: null,
            cause: i % 4 === 1 ? 't:t_1' : null,
          }),
        );
        const moved = docs.map((d, i) => (i % 5 === 0 ? { ...d, sid: S2 } : d));
        await index.applyWriter(
          batch(
            T1,
            moved.filter((d) => d.sid === SID),
          ),
        );
        await index.applyWriter(
          batch(
            T1,
            moved.filter((d) => d.sid === S2),
            { sid: S2 },
          ),
        );
        // the person of the outputs (i % 4 === 1) is that of message 1's, filed under t:t_1
        await index.applyWriter(
          batch(T1, [], {
            w: 'w_01JEEEEEEEEEEEEEEEEEEEEEEE',
            causes: [{ sid: SID, key: 't:t_1', message_id: docs[0]?.id ?? '' }],
          }),
        );
        await index.putSessionFacts({ tenant: T1, sid: S2, state: 'blocked', title: null, reports: [] });
        const mid = docs[12]?.at_us ?? 0;
        const filters: EngineQuery['filters'][] = [
          { agent: ['codex'] },
          { tool: ['bash'] },
          { type: ['message', 'output'] },
          { sid: [S2] },
          { state: ['blocked'] },
          { person: ['PRIYA'] },
          { after_us: mid },
          { before_us: mid },
          { agent: ['codex'], sid: [SID], person: ['priya'] },
        ];
        const keys = (hits: Array<{ doc: SearchDoc }>) => hits.map((h) => `${h.doc.sid}/${h.doc.seq}`).sort();
        for (const f of filters) {
          const alone = await index.query(T1, { ...words(), filters: f, limit: 100 });
          const withWords = await index.query(T1, { ...words(['deploy']), filters: f, limit: 100 });
          const expected = keys(alone.filter((h) => h.doc.text.includes('deploy')));
          expect(keys(withWords), JSON.stringify(f)).toEqual(expected);
          expect(expected.length, JSON.stringify(f)).toBeGreaterThan(0);
        }
      }),
    );
  });
}
