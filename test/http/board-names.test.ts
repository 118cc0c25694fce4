/**
 * Names that render the same are one name or are told apart (issue 25.6, docs/board.md): two agents and
 * two people named `José`, one precomposed (U+00E9) and one with a combining accent (e + U+0301), are
 * one agent and one person on the board: one filter option, one facet, one link whose view lists both
 * sessions, one name in `GET /v1/board` and on the session page (its writers `José` and `José 2`).
 * Names that are other code points but look alike (`alice` and `аlice` with a Cyrillic U+0430; `bob` and
 * `bоb` with a Cyrillic U+043E) stay apart, and every place the board shows them marks them visibly with
 * the code points that set each apart (`≈ U+0430`), so no two options or links read the same. Over real
 * HTTP: `GET /v1/board`, `GET /v1/board/overview`, the overview, agent, person and session pages.
 */
import { beforeAll, describe, expect, it } from 'vitest';
import { openSession } from '../../lib/log/index.js';
import { request } from '../support/http.js';
import { readLocal } from '../support/segments.js';
import { useServer } from '../support/server.js';
import { upload } from '../support/stored.js';

const srv = useServer({ tokens: { board: ['board'] } });

const JOSE_NFC = 'Jos\u00e9';
const JOSE_NFD = 'Jose\u0301';
const ALICE = 'alice';
const ALICE_CYR = '\u0430lice'; // Cyrillic а
const BOB = 'bob';
const BOB_CYR = 'b\u043eb'; // Cyrillic о

const sids: Record<string, string> = {};
let mixed = ''; // one session with writers of both José spellings and of both alices

beforeAll(async () => {
  const record = async (key: string, agent: string, person: string) => {
    const s = openSession(srv.workDir, { agent });
    s.message({ user_id: person, text: `${key}: fix the build` });
    s.end();
    await upload(srv, srv.tenant.admin, readLocal(s));
    sids[key] = s.sid;
  };
  await record('nfc', JOSE_NFC, JOSE_NFC);
  await record('nfd', JOSE_NFD, JOSE_NFD);
  await record('alice', ALICE, BOB);
  await record('alice-cyr', ALICE_CYR, BOB_CYR);
  const first = openSession(srv.workDir, { agent: JOSE_NFC });
  first.message({ user_id: JOSE_NFC, text: 'both spellings' });
  first.end();
  const writers = [first];
  for (const agent of [JOSE_NFD, ALICE, ALICE_CYR]) {
    const w = openSession(first.dir, { agent });
    w.message({ user_id: agent === JOSE_NFD ? JOSE_NFD : BOB_CYR, text: 'me too' });
    w.end();
    writers.push(w);
  }
  for (const w of writers) await upload(srv, srv.tenant.admin, readLocal(w));
  mixed = first.sid;
});

const page = async (path: string) => {
  const res = await request(srv, 'GET', path, { headers: { cookie: `hansard_board=${srv.tokens.board}` } });
  expect(res.status, `${path}: ${res.text.slice(0, 300)}`).toBe(200);
  return res.text;
};
const overview = async (query = '') => {
  const res = await request(srv, 'GET', `/v1/board/overview${query}`, { token: srv.tokens.board });
  expect(res.status, res.text).toBe(200);
  return res.json;
};
/** The text of each `<option>` of the select named `name`. */
const options = (html: string, name: string) => {
  const select = html.match(new RegExp(`<select name="${name}">([\\s\\S]*?)</select>`))?.[1] ?? '';
  return [...select.matchAll(/<option[^>]*>([^<]*)<\/option>/g)].map((m) => m[1]!);
};
/** Each `<li>` of a row's agents or people list, tags removed: a link's text and its mark. */
const listed = (html: string, sid: string, label: 'agents' | 'people') => {
  const row = html.match(new RegExp(`<tr data-sid="${sid}">[\\s\\S]*?</tr>`))?.[0] ?? '';
  const list = row.match(new RegExp(`<ul class="who who-${label}"[^>]*>([\\s\\S]*?)</ul>`))?.[1] ?? '';
  return [...list.matchAll(/<li>([\s\S]*?)<\/li>/g)].map((m) => m[1]!.replace(/<[^>]*>/g, ''));
};
const sidsOf = (o: { rows: Array<{ sid: string }> }) => o.rows.map((r) => r.sid).sort();

describe('canonically equivalent names (NFC)', () => {
  it('are one agent and one person in the board JSON, and a filter by either spelling finds both', async () => {
    const o = await overview();
    expect(o.facets.agents.filter((a: string) => a.normalize('NFC') === JOSE_NFC)).toEqual([JOSE_NFC]);
    expect(o.facets.people.filter((p: string) => p.normalize('NFC') === JOSE_NFC)).toEqual([JOSE_NFC]);
    for (const key of ['nfc', 'nfd']) {
      const row = o.rows.find((r: { sid: string }) => r.sid === sids[key]);
      expect(row.agents).toEqual([JOSE_NFC]);
      expect(row.people).toEqual([JOSE_NFC]);
    }
    const both = [sids.nfc!, sids.nfd!, mixed].sort();
    for (const spelling of [JOSE_NFC, JOSE_NFD]) {
      expect(sidsOf(await overview(`?agent=${encodeURIComponent(spelling)}`))).toEqual(both);
      expect(sidsOf(await overview(`?person=${encodeURIComponent(spelling)}`))).toEqual(both);
    }
    expect(sidsOf(await overview(`?q=${encodeURIComponent(JOSE_NFD)}`))).toEqual(both);

    const board = await request(srv, 'GET', '/v1/board', { token: srv.tokens.board });
    expect(board.status, board.text).toBe(200);
    const agents = (sid: string) => board.json.sessions.find((s: { sid: string }) => s.sid === sid).agents;
    expect(agents(sids.nfd!)).toEqual([JOSE_NFC]);
    expect(agents(mixed)).toEqual([JOSE_NFC, ALICE, ALICE_CYR]);
  });

  it('are one option, one link and one view on the pages', async () => {
    const html = await page('/');
    expect(options(html, 'agent').filter((t) => t.normalize('NFC') === JOSE_NFC)).toEqual([JOSE_NFC]);
    expect(options(html, 'person').filter((t) => t.normalize('NFC') === JOSE_NFC)).toEqual([JOSE_NFC]);
    expect(listed(html, mixed, 'agents')).toHaveLength(3);
    for (const spelling of [JOSE_NFC, JOSE_NFD]) {
      const agentView = await page(`/agents/${encodeURIComponent(spelling)}`);
      const personView = await page(`/people/${encodeURIComponent(spelling)}`);
      for (const sid of [sids.nfc, sids.nfd, mixed]) {
        expect(agentView).toContain(`<tr data-sid="${sid}">`);
        expect(personView).toContain(`<tr data-sid="${sid}">`);
      }
      // what this person asked first titles each row of their view, whichever spelling wrote it
      expect(personView).toContain('nfd: fix the build');
      expect(personView).toContain('nfc: fix the build');
    }
  });

  it("are one agent on the session page; the two writers' names are told apart", async () => {
    const html = await page(`/sessions/${mixed}`);
    const agentsLine = html.match(/Agents:([\s\S]*?)<\/p>/)?.[1] ?? '';
    expect(agentsLine.match(/href="\/agents\/[^"]*"/g)).toEqual([
      `href="/agents/${encodeURIComponent(JOSE_NFC)}"`,
      'href="/agents/alice"',
      `href="/agents/${encodeURIComponent(ALICE_CYR)}"`,
    ]);
    const legend = [...html.matchAll(/<span class="chip [^"]*">([^<]*)<\/span>/g)].map((m) => m[1]);
    expect(legend.slice(0, 4)).toEqual([
      JOSE_NFC,
      `${JOSE_NFC} 2`,
      `${ALICE} ≈ U+0061`,
      `${ALICE_CYR} ≈ U+0430`,
    ]);
    const people = html.match(/People in this session:([\s\S]*?)\. Agents:/)?.[1] ?? '';
    expect(people.match(/href="\/people\/[^"]*"/g)).toEqual([
      `href="/people/${encodeURIComponent(JOSE_NFC)}"`,
      `href="/people/${encodeURIComponent(BOB_CYR)}"`,
    ]);
  });
});

describe('names that only look alike', () => {
  it('stay two names, each marked with the code points that set it apart, wherever the overview shows them', async () => {
    const o = await overview();
    expect(o.facets.agents).toEqual(expect.arrayContaining([ALICE, ALICE_CYR]));
    const html = await page('/');
    const agentOptions = options(html, 'agent');
    const personOptions = options(html, 'person');
    expect(agentOptions).toEqual(expect.arrayContaining([`${ALICE} ≈ U+0061`, `${ALICE_CYR} ≈ U+0430`]));
    expect(personOptions).toEqual(expect.arrayContaining([`${BOB} ≈ U+006F`, `${BOB_CYR} ≈ U+043E`]));
    // no two options read the same once their marks are read with them
    for (const list of [agentOptions, personOptions]) expect(new Set(list).size).toBe(list.length);
    expect(listed(html, sids.alice!, 'agents')).toEqual([`${ALICE} ≈ U+0061`]);
    expect(listed(html, sids['alice-cyr']!, 'agents')).toEqual([`${ALICE_CYR} ≈ U+0430`]);
    expect(listed(html, sids['alice-cyr']!, 'people')).toEqual([`${BOB_CYR} ≈ U+043E`]);
    expect(html).toContain(
      '<small class="look-alike" title="looks like another agent on this page; its code points: U+0430 U+006C U+0069 U+0063 U+0065">',
    );
    // a name with no twin carries no mark
    expect(listed(html, sids.nfc!, 'agents')).toEqual([JOSE_NFC]);
  });

  it("say so on the look-alike's own view, which lists only its sessions", async () => {
    const html = (await page(`/agents/${encodeURIComponent(ALICE_CYR)}`)).replaceAll('&#39;', "'");
    expect(html).toContain("This agent's name looks like another agent's here");
    expect(html).toContain('its code points are U+0430 U+006C U+0069 U+0063 U+0065');
    expect(html).toContain(`<tr data-sid="${sids['alice-cyr']}">`);
    expect(html).not.toContain(`<tr data-sid="${sids.alice}">`);
  });
});
