/**
 * The runner of a documented table of cases against a server (test/http/hostile-board.test.ts,
 * hostile-text.test.ts): each case sends something, asserts its status and checks the answer, the server
 * still alive after it; and the table is checked against its section of docs/api.md, each case's status
 * the one its row gives, every row with a case. (The hostile-input suites have their own runner,
 * ./hostile-input.ts, which also snapshots what is stored.)
 */
import { expect, it } from 'vitest';
import { docRows } from './doc-rows.js';
import { type Answer, expectAlive } from './http.js';

/** A case of a documented table. */
export interface DocCase {
  name: string;
  /** the row of the table in docs/api.md this case belongs to (its "what is sent") */
  row: string;
  status: number;
  run: () => Promise<Answer>;
  check: (a: Answer) => void | Promise<void>;
}

/** Registers one test per case: `run`, the status, `check`, then the server still answers /healthz. */
export function itEachCase(srv: { url: string }, cases: readonly DocCase[]): void {
  for (const c of cases) {
    it(`${c.name}: ${c.status}`, async () => {
      const a = await c.run();
      expect(a.status, a.text.slice(0, 500)).toBe(c.status);
      await c.check(a);
      await expectAlive(srv);
    });
  }
}

/**
 * Registers the test that each case's status is the one docs/api.md's section `heading` gives for its
 * row, and that every row of that section has a case.
 */
export function itMatchesDoc(heading: string, cases: readonly DocCase[]): void {
  it(`every case’s status is the one docs/api.md "${heading}" gives for its row, and every row has a case`, () => {
    const rows = docRows(new URL('../../docs/api.md', import.meta.url), heading);
    for (const c of cases) {
      const answer = rows.get(c.row);
      expect(answer, `docs/api.md has no "${heading}" row "${c.row}"`).toBeDefined();
      expect(answer!.includes(String(c.status)), `${c.name}: ${answer}`).toBe(true);
    }
    const used = new Set(cases.map((c) => c.row));
    expect([...rows.keys()].filter((r) => !used.has(r))).toEqual([]);
  });
}
