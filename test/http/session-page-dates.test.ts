/**
 * The session page says WHEN things happened (issue 14 finding 2), over real HTTP with the local stores:
 * a session recorded in the past across midnight (2025-06-14 23:58 to 2025-06-15 00:03 UTC, as an import
 * of an old transcript would be) shows a day heading before its first row and where the date changes,
 * every row time carries the whole ts as its title, and the header says when it ran (first and last
 * event, with dates) and, apart from that, when it was uploaded (today).
 */
import { beforeAll, describe, expect, it } from 'vitest';
import { openSession } from '../../lib/log/index.js';
import { request } from '../support/http.js';
import { readLocal } from '../support/segments.js';
import { useServer } from '../support/server.js';
import { upload } from '../support/stored.js';

const srv = useServer({ tokens: { board: ['board'] } });
let sid = '';
const page = (path: string) =>
  request(srv, 'GET', path, { headers: { cookie: `hansard_board=${srv.tokens.board}` } });

beforeAll(async () => {
  let now = Date.parse('2025-06-14T23:58:00Z') * 1000;
  const s = openSession(srv.workDir, { agent: 'claude-code' }, { clock: () => now });
  sid = s.sid;
  const minute = () => {
    now += 60_000_000;
  };
  minute();
  s.message({ user_id: 'ana', text: 'run the nightly job' });
  for (let i = 0; i < 3; i++) {
    minute();
    s.note({ author: 'ops', text: `step ${i}` });
  }
  minute();
  s.end();
  await upload(srv, srv.tenant.admin, readLocal({ sid, w: s.w, dir: s.dir, path: s.path }));
});

describe('dates on the timeline', () => {
  it('heads each day, before the first row and where the date changes', async () => {
    const a = await page(`/sessions/${sid}`);
    expect(a.status).toBe(200);
    const list = a.text.slice(a.text.indexOf('id="rows-list"'));
    const days = [
      ...list.matchAll(/<li class="day" data-day="([\d-]+)"><h4><time datetime="[\d-]+">([^<]+)</g),
    ];
    expect(days.map((d) => [d[1], d[2]])).toEqual([
      ['2025-06-14', 'Saturday 14 June 2025'],
      ['2025-06-15', 'Sunday 15 June 2025'],
    ]);
    // the first heading comes before the first row; the second before the first row of the 15th
    expect(list.indexOf('data-day="2025-06-14"')).toBeLessThan(list.indexOf('data-pos='));
    const second = list.indexOf('data-day="2025-06-15"');
    expect(list.slice(0, second)).toContain('2025-06-14T23:59:00');
    expect(list.slice(0, second)).not.toContain('2025-06-15T00:');
    expect(list.slice(second)).toContain('2025-06-15T00:00:00');
  });

  it('gives every row time its whole ts as the title', async () => {
    const a = await page(`/sessions/${sid}`);
    const times = [...a.text.matchAll(/<time datetime="([^"]+)"( title="([^"]+)")?>\d{2}:\d{2}:\d{2}</g)];
    expect(times.length).toBeGreaterThanOrEqual(6);
    for (const m of times) expect(m[3], m[0]).toBe(m[1]);
    expect(times.map((m) => m[1]!.slice(0, 10))).toContain('2025-06-14');
  });

  it('says when the session ran and, apart from that, when it was uploaded', async () => {
    const a = await page(`/sessions/${sid}`);
    const ran = /<span data-when="ran">(.*?)<\/span>/s.exec(a.text)![1]!.replace(/<[^>]+>/g, '');
    expect(ran).toBe('Ran Saturday 14 June 2025, 23:58:00 to Sunday 15 June 2025, 00:03:00 UTC.');
    const up = /<span data-when="uploaded" class="muted">(.*?)<\/span>/s
      .exec(a.text)![1]!
      .replace(/<[^>]+>/g, '');
    const today = new Date().toISOString().slice(0, 10);
    expect(up).toMatch(/^Uploaded \w+day \d{1,2} \w+ \d{4}, \d{2}:\d{2}:\d{2} to \d{2}:\d{2}:\d{2} UTC\.$/);
    expect(a.text).toContain(`<time datetime="${today}T`);
  });
});
