/**
 * The session index contract's summary cases (issue 14.1, lib/store/sessions.ts `SessionSummary`): what
 * the index keeps for the overview as chunks (`mergeSessionSummary`) and reports (`putStatus`) arrive,
 * and `listSessionSummaries`. Run by `runSessionIndexContract` (./sessions.contract.ts) on every adapter.
 */
import { describe, expect } from 'vitest';
import { newId } from '../../../lib/log/format/ids.js';
import type {
  SessionIndex,
  StatusEntry,
  StatusRecord,
  StatusStore,
  WriterStore,
} from '../../../lib/store/index.js';
import { SUMMARY_NAMES_MAX, TITLE_MAX } from '../../../lib/store/session-summary.js';
import { advanceOf, at } from './records.js';
import type { Contract } from './suite.js';

/** What the summary cases ask of a store: the session index, and the writers and status that feed it. */
type Ports = SessionIndex & WriterStore & StatusStore;

/** µs since the epoch of `at(i)`. */
const micros = (i: number): number => Date.parse(at(i)) * 1000;

/** The record after `states` were reported in turn, one second apart from `at(first)`. */
function reportsOf(sid: string, states: string[], first = 100): StatusRecord {
  const reports: StatusEntry[] = states.map((state, i) => ({
    state,
    note: `${state} ${i}`,
    events: [],
    events_dropped: 0,
    reported_by: 'tok_R',
    reported_at: at(first + i),
  }));
  return { tenant: 'acme', sid, reports, dropped_events: 0, dropped_reports: 0, version: states.length };
}

/** The records of reporting `states` one by one, each written on the previous. */
async function report(s: Ports, sid: string, states: string[], first = 100): Promise<void> {
  for (let n = 1; n <= states.length; n++) await s.putStatus(reportsOf(sid, states.slice(0, n), first));
}

export function sessionSummaryCases(contract: Contract<Ports>): void {
  describe('session summaries', () => {
    const summaryOf = async (s: Ports, sid: string, tenant = 'acme') =>
      (await s.listSessionSummaries(tenant)).find((x) => x.sid === sid);

    contract('a session with neither messages nor reports reads null and []', async (s) => {
      const sid = newId('s');
      await s.advanceWriter('acme', sid, newId('w'), 0, advanceOf(0, 10, { lines: 1, when: 1 }));
      expect(await s.listSessionSummaries('acme')).toEqual([
        {
          ...(await s.getSession('acme', sid)),
          title: null,
          first_note: null,
          people: [],
          agents: [],
          asked: [],
          state: null,
          state_since: null,
          note: null,
          reported_at: null,
        },
      ]);
      // getSession and listSessions answer the index entry alone, as before summaries
      expect(Object.keys((await s.getSession('acme', sid))!).sort()).toEqual(
        ['bytes', 'created_at', 'lines', 'sid', 'tenant', 'updated_at', 'writers'].sort(),
      );
      expect(Object.keys((await s.listSessions('acme', 5, null)).items[0]!)).toHaveLength(7);
    });

    contract('the earliest message by ts is the title, whichever chunk brings it', async (s) => {
      const sid = newId('s');
      await s.advanceWriter('acme', sid, newId('w'), 0, advanceOf(0, 10, { lines: 1, when: 1 }));
      await s.mergeSessionSummary('acme', sid, {
        title: { text: 'second prompt', at: micros(20) },
        people: [],
        agents: [],
      });
      expect((await summaryOf(s, sid))?.title).toBe('second prompt');
      // a later one does not replace it; an earlier one (another writer's, shipped late) does
      await s.mergeSessionSummary('acme', sid, {
        title: { text: 'later', at: micros(30) },
        people: [],
        agents: [],
      });
      expect((await summaryOf(s, sid))?.title).toBe('second prompt');
      await s.mergeSessionSummary('acme', sid, {
        title: { text: 'first', at: micros(10) },
        people: [],
        agents: [],
      });
      expect((await summaryOf(s, sid))?.title).toBe('first');
      // a delta without a title keeps it
      await s.mergeSessionSummary('acme', sid, { title: null, people: ['priya'], agents: [] });
      expect(await summaryOf(s, sid)).toMatchObject({ title: 'first', people: ['priya'] });
      await s.mergeSessionSummary('acme', sid, {
        title: { text: 'x'.repeat(500), at: micros(1) },
        people: [],
        agents: [],
      });
      expect((await summaryOf(s, sid))?.title).toBe('x'.repeat(TITLE_MAX));
    });

    contract('people and agents: added in the order first seen, once each, at most 20', async (s) => {
      const sid = newId('s');
      await s.advanceWriter('acme', sid, newId('w'), 0, advanceOf(0, 10, { lines: 1, when: 1 }));
      await s.mergeSessionSummary('acme', sid, {
        title: null,
        people: ['priya', 'sam'],
        agents: ['claude-code'],
      });
      await s.mergeSessionSummary('acme', sid, {
        title: null,
        people: ['sam', 'ana'],
        agents: ['codex', 'claude-code'],
      });
      expect(await summaryOf(s, sid)).toMatchObject({
        people: ['priya', 'sam', 'ana'],
        agents: ['claude-code', 'codex'],
      });
      const many = Array.from({ length: 30 }, (_, i) => `user-${String(i).padStart(2, '0')}`);
      await s.mergeSessionSummary('acme', sid, { title: null, people: many, agents: many });
      const got = (await summaryOf(s, sid))!;
      expect(got.people).toHaveLength(SUMMARY_NAMES_MAX);
      expect(got.people.slice(0, 4)).toEqual(['priya', 'sam', 'ana', 'user-00']);
      expect(got.agents).toHaveLength(SUMMARY_NAMES_MAX);
      // full: a new name is not taken, and nothing else changes
      await s.mergeSessionSummary('acme', sid, { title: null, people: ['zed'], agents: [] });
      expect((await summaryOf(s, sid))!.people).toEqual(got.people);
    });

    contract("each person's first prompt: earliest ts per person, only for people kept", async (s) => {
      const sid = newId('s');
      await s.advanceWriter('acme', sid, newId('w'), 0, advanceOf(0, 10, { lines: 1, when: 1 }));
      const ask = (user_id: string, text: string, i: number) => ({ user_id, text, at: micros(i) });
      await s.mergeSessionSummary('acme', sid, {
        title: { text: 'restart payments', at: micros(20) },
        people: ['priya', 'sam'],
        agents: [],
        asked: [ask('sam', 'sam later', 30), ask('priya', 'restart payments', 20)],
      });
      // in the order of people, whatever order the chunk listed them in
      expect((await summaryOf(s, sid))?.asked).toEqual([
        ask('priya', 'restart payments', 20),
        ask('sam', 'sam later', 30),
      ]);
      // another writer's chunk, shipped late, holds sam's earlier prompt; priya's later one changes nothing
      await s.mergeSessionSummary('acme', sid, {
        title: { text: 'sam earlier', at: micros(25) },
        people: ['sam', 'ana'],
        agents: [],
        asked: [ask('sam', 'sam earlier', 25), ask('priya', 'priya later', 40)],
      });
      const got = (await summaryOf(s, sid))!;
      expect(got.title).toBe('restart payments');
      expect(got.asked).toEqual([ask('priya', 'restart payments', 20), ask('sam', 'sam earlier', 25)]);
      // ana joined without asking: no entry; a tie keeps the stored prompt; text cut to TITLE_MAX
      await s.mergeSessionSummary('acme', sid, {
        title: null,
        people: [],
        agents: [],
        asked: [ask('priya', 'same time', 20), ask('ana', 'y'.repeat(500), 50)],
      });
      expect((await summaryOf(s, sid))!.asked).toEqual([
        ask('priya', 'restart payments', 20),
        ask('sam', 'sam earlier', 25),
        ask('ana', 'y'.repeat(TITLE_MAX), 50),
      ]);
      // at most the 20 people kept: a 21st person's prompt is not kept
      const many = Array.from({ length: 30 }, (_, i) => `user-${String(i).padStart(2, '0')}`);
      await s.mergeSessionSummary('acme', sid, {
        title: null,
        people: many,
        agents: [],
        asked: many.map((u, i) => ask(u, `from ${u}`, 60 + i)),
      });
      const full = (await summaryOf(s, sid))!;
      expect(full.people).toHaveLength(SUMMARY_NAMES_MAX);
      expect(full.asked.map((a) => a.user_id)).toEqual(full.people);
      expect(full.asked.some((a) => a.user_id === 'user-29')).toBe(false);
    });

    contract(
      "a later chunk's user_id correction moves a tracked first prompt to the corrected person",
      async (s) => {
        const sid = newId('s');
        await s.advanceWriter('acme', sid, newId('w'), 0, advanceOf(0, 10, { lines: 1, when: 1 }));
        const ask = (user_id: string, text: string, i: number, id: string) => ({
          user_id,
          text,
          at: micros(i),
          id,
        });
        const user = (id: string, user_id: string, i: number, w = 'w_a', seq = 1) => ({
          id,
          user_id,
          ts: micros(i),
          w,
          seq,
        });
        await s.mergeSessionSummary('acme', sid, {
          title: { text: 'rotate the key', at: micros(20), id: 'm_1' },
          people: ['mallory', 'sam'],
          agents: [],
          asked: [ask('mallory', 'rotate the key', 20, 'm_1'), ask('sam', 'sam asks', 30, 'm_2')],
        });
        // an untracked target changes nothing; the tracked one moves (the last in merged order of the chunk wins)
        await s.mergeSessionSummary('acme', sid, {
          title: null,
          people: [],
          agents: [],
          users: [user('m_1', 'alice', 41, 'w_a', 3), user('m_1', 'bob', 40), user('m_9', 'eve', 42)],
        });
        let got = (await summaryOf(s, sid))!;
        // mallory stays: the summary cannot tell whether another message or join of theirs named them
        expect(got.people).toEqual(['mallory', 'sam', 'alice']);
        expect(got.asked).toEqual([
          ask('sam', 'sam asks', 30, 'm_2'),
          ask('alice', 'rotate the key', 20, 'm_1'),
        ]);
        expect(got.title).toBe('rotate the key');
        // moved onto a person whose own first prompt is earlier: theirs stays
        await s.mergeSessionSummary('acme', sid, {
          title: null,
          people: [],
          agents: [],
          users: [user('m_1', 'sam', 50)],
        });
        got = (await summaryOf(s, sid))!;
        expect(got.asked).toEqual([ask('sam', 'rotate the key', 20, 'm_1')]);
      },
    );

    contract('the title and asked follow corrections of their message, before or after it', async (s) => {
      const sid = newId('s');
      await s.advanceWriter('acme', sid, newId('w'), 0, advanceOf(0, 10, { lines: 1, when: 1 }));
      const fix = (id: string, text: string | null, i: number, w = 'w_b', seq = 1) => ({
        id,
        text,
        ts: micros(i),
        w,
        seq,
      });
      // a correction of sam's message arrives (another writer) before the message itself
      await s.mergeSessionSummary('acme', sid, {
        title: null,
        people: [],
        agents: [],
        fixes: [fix('m_sam', 'sam, corrected', 40)],
      });
      await s.mergeSessionSummary('acme', sid, {
        title: { text: 'deploy with hunter2', at: micros(20), id: 'm_priya' },
        people: ['priya', 'sam'],
        agents: [],
        asked: [
          { user_id: 'priya', text: 'deploy with hunter2', at: micros(20), id: 'm_priya' },
          { user_id: 'sam', text: 'sam, as written', at: micros(30), id: 'm_sam' },
        ],
      });
      let got = (await summaryOf(s, sid))!;
      expect(got.title).toBe('deploy with hunter2');
      expect(got.asked.map((a) => a.text)).toEqual(['deploy with hunter2', 'sam, corrected']);
      // the title's correction arrives after it; an earlier one (in merged order) shipped later loses
      await s.mergeSessionSummary('acme', sid, {
        title: null,
        people: [],
        agents: [],
        fixes: [fix('m_priya', 'deploy with [removed]', 50)],
      });
      await s.mergeSessionSummary('acme', sid, {
        title: null,
        people: [],
        agents: [],
        fixes: [fix('m_priya', 'an older correction', 45, 'w_z', 9)],
      });
      got = (await summaryOf(s, sid))!;
      expect(got.title).toBe('deploy with [removed]');
      expect(got.asked[0]!.text).toBe('deploy with [removed]');
      expect(JSON.stringify(got)).not.toContain('hunter2');
      // an earlier message becomes the title; a retry of the old one changes nothing
      await s.mergeSessionSummary('acme', sid, {
        title: { text: 'first of all', at: micros(10), id: 'm_first' },
        people: [],
        agents: [],
      });
      expect((await summaryOf(s, sid))!.title).toBe('first of all');
    });

    contract('concurrent merges of one session lose no name', async (s) => {
      const sid = newId('s');
      await s.advanceWriter('acme', sid, newId('w'), 0, advanceOf(0, 10, { lines: 1, when: 1 }));
      const names = ['a', 'b', 'c', 'd', 'e', 'f'];
      await Promise.all(
        names.map((n, i) =>
          s.mergeSessionSummary('acme', sid, {
            title: { text: n, at: micros(50 - i) },
            people: [n],
            agents: [],
          }),
        ),
      );
      const got = (await summaryOf(s, sid))!;
      expect([...got.people].sort()).toEqual(names);
      expect(got.title).toBe('f');
    });

    // ingest merges before the first advance (ADR 4): the merge makes the entry, with no writers yet
    contract('a merge for a session without an index entry makes it, with no writers', async (s) => {
      const sid = newId('s');
      await s.mergeSessionSummary('acme', sid, { title: null, people: ['priya'], agents: [] }, at(7));
      expect(await s.listSessionSummaries('acme')).toMatchObject([{ sid, people: ['priya'], writers: 0 }]);
      expect(await s.getSession('acme', sid)).toMatchObject({ created_at: at(7), lines: 0, bytes: 0 });
    });

    contract(
      'a report sets state, note and reported_at; state_since runs across reports of one state',
      async (s) => {
        const sid = newId('s');
        await report(s, sid, ['working', 'blocked']);
        expect(await summaryOf(s, sid)).toMatchObject({
          state: 'blocked',
          state_since: at(101),
          note: 'blocked 1',
          reported_at: at(101),
          first_note: 'working 0',
        });
        // working → blocked → blocked keeps the first blocked's time
        await s.putStatus(reportsOf(sid, ['working', 'blocked', 'blocked']));
        expect(await summaryOf(s, sid)).toMatchObject({
          state: 'blocked',
          state_since: at(101),
          reported_at: at(102),
        });
        // working → blocked → blocked → working starts again
        await s.putStatus(reportsOf(sid, ['working', 'blocked', 'blocked', 'working']));
        expect(await summaryOf(s, sid)).toMatchObject({
          state: 'working',
          state_since: at(103),
          note: 'working 3',
        });
      },
    );

    contract(
      "a record's own state_since wins over its kept reports (retention dropped the run's start)",
      async (s) => {
        const sid = newId('s');
        await s.putStatus({ ...reportsOf(sid, ['blocked']), state_since: at(5), dropped_reports: 3 });
        expect(await summaryOf(s, sid)).toMatchObject({ state: 'blocked', state_since: at(5) });
        expect((await s.getStatus('acme', sid))?.state_since).toBe(at(5));
      },
    );

    contract('a report older than the last activity still sets the summary', async (s) => {
      const sid = newId('s');
      await s.advanceWriter('acme', sid, newId('w'), 0, advanceOf(0, 10, { lines: 1, when: 500 }));
      await report(s, sid, ['needs_review']);
      expect(await summaryOf(s, sid)).toMatchObject({
        updated_at: at(500),
        state: 'needs_review',
        state_since: at(100),
        writers: 1,
      });
    });

    contract('lists every session of the tenant and only of it (230 of them)', async (s) => {
      const sids = Array.from({ length: 230 }, () => newId('s'));
      for (const [i, sid] of sids.entries()) {
        await s.advanceWriter('acme', sid, newId('w'), 0, advanceOf(0, 10, { lines: 1, when: i }));
      }
      await s.advanceWriter('globex', newId('s'), newId('w'), 0, advanceOf(0, 10, { lines: 1, when: 1 }));
      const all = await s.listSessionSummaries('acme');
      expect(all.map((x) => x.sid).sort()).toEqual([...sids].sort());
      expect(await s.listSessionSummaries('initech')).toEqual([]);
    });
  });
}
