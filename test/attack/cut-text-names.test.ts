/**
 * Attack (issue 25 item 6, lib/log/format/text-cut.ts, lib/log/format/names.ts, docs/board.md): text cut for display and
 * names that render alike. Over real HTTP (`GET /v1/board`, `GET /v1/board/overview`, the overview and
 * session pages): emoji ZWJ sequences, flags, skin tones and accents put at every position of the title's
 * 160-unit cut and the names' 64-unit cut; a letter under 300 combining marks; right-to-left overrides in
 * agent names, people and titles; and an agent name of 10 MB.
 */
import { describe, expect, it } from 'vitest';
import { openSession } from '../../lib/log/index.js';
import { request } from '../support/http.js';
import { readLocal } from '../support/segments.js';
import { useServer } from '../support/server.js';
import { postChunk, upload } from '../support/stored.js';

const srv = useServer({ tokens: { board: ['board'] } });
const seg = new Intl.Segmenter(undefined, { granularity: 'grapheme' });
const clusters = (s: string) => [...seg.segment(s)].map((x) => x.segment);
/** Whether `cut` is `whole` cut on a grapheme boundary: its clusters are the first ones of `whole`. */
const wholeClusters = (cut: string, whole: string) =>
  whole.startsWith(cut) && clusters(whole).slice(0, clusters(cut).length).join('') === cut;

/** A session of one writer named `agent` whose first prompt (its title) is `text`, from `person`. */
async function record(agent: string, text: string, person = 'priya'): Promise<string> {
  const s = openSession(srv.workDir, { agent });
  s.message({ user_id: person, text });
  s.end();
  await upload(srv, srv.tenant.admin, readLocal(s));
  return s.sid;
}
const overview = async () => {
  const r = await request(srv, 'GET', '/v1/board/overview?limit=200', { token: srv.tokens.board });
  expect(r.status, r.text).toBe(200);
  return r.json.rows as { sid: string; title: string | null; agents?: string[] }[];
};
const board = async () => {
  const r = await request(srv, 'GET', '/v1/board?limit=200', { token: srv.tokens.board });
  expect(r.status, r.text).toBe(200);
  return r.json.sessions as { sid: string; agents: string[] }[];
};
const page = async (path: string) => {
  const r = await request(srv, 'GET', path, { headers: { cookie: `hansard_board=${srv.tokens.board}` } });
  expect(r.status, r.text.slice(0, 200)).toBe(200);
  return r.text;
};

const UNITS: [string, string][] = [
  ['a ZWJ sequence 👩‍💻', '\u{1f469}\u200d\u{1f4bb}'],
  ['a flag 🇫🇷', '\u{1f1eb}\u{1f1f7}'],
  ['a skin-toned family', '\u{1f468}\u{1f3fd}\u200d\u{1f469}\u{1f3fd}\u200d\u{1f467}\u{1f3fd}'],
  ['an e with two accents', 'e\u0301\u0302'],
  ['Hangul jamo', '\u1100\u1161\u11a8'],
];

describe('cuts keep whole characters, wherever the cut falls', () => {
  it("the board's titles (160 units): each kind of cluster at each of the cut's positions", async () => {
    const made: [string, string][] = [];
    for (const [, unit] of UNITS) {
      for (let k = 160 - 2 * unit.length; k <= 160; k++) {
        const text = `${'a'.repeat(k)}${unit.repeat(8)}`;
        made.push([await record('claude-code', text), text]);
      }
    }
    const rows = new Map((await overview()).map((r) => [r.sid, r]));
    for (const [sid, text] of made) {
      const title = rows.get(sid)?.title ?? '';
      expect(title.length, JSON.stringify(text)).toBeLessThanOrEqual(160);
      expect(
        wholeClusters(title, text),
        `${JSON.stringify(title.slice(-12))} of ${JSON.stringify(text.slice(150, 175))}`,
      ).toBe(true);
      expect(title.length).toBeGreaterThanOrEqual(160 - 20);
    }
  }, 60_000);

  it("agent names (64 units on the board): each kind of cluster at each of the cut's positions", async () => {
    const made: [string, string][] = [];
    for (const [, unit] of UNITS) {
      for (let k = 64 - 2 * unit.length; k <= 64; k++) {
        const agent = `${'b'.repeat(k)}${unit.repeat(6)}`;
        // the board keeps names in NFC (issue 25.6): compare with that
        made.push([await record(agent, 'fix the build'), agent.normalize('NFC')]);
      }
    }
    const sessions = new Map((await board()).map((s) => [s.sid, s]));
    for (const [sid, agent] of made) {
      const shown = sessions.get(sid)?.agents[0] ?? '';
      expect(shown.length).toBeLessThanOrEqual(200);
      expect(wholeClusters(shown, agent), `${JSON.stringify(shown.slice(-12))}`).toBe(true);
    }
  }, 60_000);

  it('a letter under 300 combining marks, as title and name, is cut between code points, never to nothing', async () => {
    const zalgo = `Z${'\u0301\u0316\u0359'.repeat(100)}`;
    const sid = await record(zalgo, zalgo, zalgo);
    const row = (await overview()).find((r) => r.sid === sid)!;
    expect(row.title!.length).toBeGreaterThan(0);
    expect(row.title!.length).toBeLessThanOrEqual(160);
    expect(zalgo.startsWith(row.title!)).toBe(true);
    const html = await page(`/sessions/${sid}`);
    expect(html).toContain('Z\u0301');
  });
});

describe('right-to-left overrides and isolates in names and titles', () => {
  it('never reach the text of a page raw: the reversed "claude-code" is shown with its control spelled out', async () => {
    const controls = ['\u202e', '\u202d', '\u2066', '\u2067', '\u2068', '\u2069', '\u200f', '\u061c'];
    const sid = await record(
      '\u202eedoc-edualc',
      '\u202efix the build\u202c \u2067\u05e9\u05dc\u05d5\u05dd\u2069',
      'ayirp\u202e',
    );
    await record('claude-code', 'the real one');
    for (const path of ['/', `/sessions/${sid}`]) {
      // what a reader sees: the text between tags (an attribute's value, e.g. a filter's, is not shown)
      const html = (await page(path)).replace(/<[^>]*>/g, '');
      for (const c of controls)
        expect(html.includes(c), `${path}: U+${c.codePointAt(0)!.toString(16)}`).toBe(false);
    }
  });
});

describe('a name of 10 MB', () => {
  it('an agent name of 3 MB in a writer.start is taken and cut to 200 units on the board', async () => {
    const sid = await record(`${'n'.repeat(3_000_000)}`, 'big name');
    const s = (await board()).find((x) => x.sid === sid)!;
    expect(s.agents[0]!.length).toBeLessThanOrEqual(200);
  });

  // Was a FAULT (fixed): the library writer cut every event field at 1 MiB but wrote writer.start's meta
  // whole: an agent name of 10 MB made line 1 longer than the 5 MiB ingest takes per line (413 for ever).
  // The writer now cuts every string of meta to 1,000 units (lib/log/write/field-limits.ts cutMeta) and names it.
  it('an agent name of 10 MB still lets the segment be uploaded', async () => {
    const s = openSession(srv.workDir, { agent: 'x'.repeat(10_000_000) });
    s.message({ user_id: 'priya', text: 'big name' });
    s.end();
    const local = readLocal(s);
    const a = await postChunk(srv, srv.tenant.admin, local.sid, local.w, 0, local.bytes);
    expect(a.status, a.text.slice(0, 300)).toBe(201);
  });
});
