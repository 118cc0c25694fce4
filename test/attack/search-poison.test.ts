/**
 * Poison for the indexing queue (issue 30 item 5 "never lost"; the drain's "a failing entry is tried again
 * with backoff while the others go on") over real HTTP on loopback with the local stores: lines ingest
 * accepts (201) but whose documents the engine's schema refuses, and what a few such writers do to every
 * other tenant's indexing.
 *
 * Findings fixed:
 * - SEARCH-POISON-LINE (lib/service/search/indexer.ts): a line dated after 2255 (its instant in µs past
 *   2^53), or with a `seq` of -1 or past 2^53, parses and is stored, but its document failed the port's
 *   schema (`at_us`/`seq` safe integers), so the writer's whole batch failed, and was tried again forever:
 *   none of the writer's lines was ever found, the good ones around it included.
 * - SEARCH-POISON-QUEUE (lib/service/search/drain.ts): a pass took the 64 oldest entries and stopped when
 *   none of them was due; 64 entries failing (backing off) at the head of the queue so stopped the indexing
 *   of every tenant for good. One tenant's 64 poisoned writers (a minute's uploads) were enough.
 */
import { mkdirSync, mkdtempSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { SearchAnswer } from '../../lib/contract/search.js';
import { openLocalStores as openLocalStoresForTest } from '../../lib/deploy/local.js';
import { openSession } from '../../lib/log/index.js';
import { request } from '../support/http.js';
import { useServer } from '../support/server.js';

type Writer = ReturnType<typeof openSession>;

describe('lines the index cannot key', () => {
  const srv = useServer({ tenants: ['acme'], tokens: { ingest: ['ingest'], reader: ['read'] } });

  function newWriter(): Writer {
    mkdirSync(srv.workDir, { recursive: true });
    return openSession(mkdtempSync(join(srv.workDir, 'poison-')), { agent: 'codex' });
  }

  async function search(q: string): Promise<SearchAnswer> {
    const r = await request(srv, 'GET', `/v1/search?q=${encodeURIComponent(q)}&limit=50`, {
      token: srv.tokens.reader,
    });
    expect(r.status, r.text).toBe(200);
    return SearchAnswer.parse(r.json);
  }

  async function post(s: Writer, body: string | Buffer): Promise<void> {
    const r = await request(srv, 'POST', `/v1/sessions/${s.sid}/writers/${s.w}/chunks?offset=0`, {
      token: srv.tokens.ingest,
      body,
    });
    expect(r.status, r.text).toBe(201);
  }

  it('a line dated after 2255 is found, and so are the lines around it (SEARCH-POISON-LINE)', async () => {
    const s = newWriter();
    s.message({ user_id: 'priya', text: 'before the future yak' });
    s.message(
      { user_id: 'priya', text: 'far future zebra' },
      { at: Date.parse('2300-01-01T00:00:00Z') * 1000 },
    );
    s.message({ user_id: 'priya', text: 'after the future yak' });
    await post(s, readFileSync(s.path));
    await srv.indexNow();
    expect((await search('yak')).hits).toHaveLength(2);
    expect((await search('zebra')).hits.map((h) => h.ts)).toEqual([expect.stringMatching(/^2300-01-01/)]);
    expect(srv.logged).toEqual([]);
  });

  it.each([
    ['-1', -1],
    ['2^53 + 2', 2 ** 53 + 2],
    ['1e20', 1e20],
  ])(
    'a line with seq %s does not keep the writer’s other lines from being found (SEARCH-POISON-LINE)',
    async (_, seq) => {
      const s = newWriter();
      s.message({ user_id: 'priya', text: `hostile seq line ${String(seq).replace(/\W/g, '')}` });
      s.message({ user_id: 'priya', text: 'the good line gnu' });
      const lines = readFileSync(s.path, 'utf8').split('\n').filter(Boolean);
      const bad = JSON.parse(lines[1]!);
      bad.seq = seq;
      await post(s, `${lines[0]}\n${JSON.stringify(bad)}\n${lines[2]}\n`);
      await srv.indexNow();
      expect((await search(`gnu session:${s.sid}`)).hits).toHaveLength(1);
      expect(srv.logged).toEqual([]);
    },
  );
});

describe('entries that keep failing', () => {
  // A segment store that fails to read the segments of writers whose session's first message says
  // "poison": entries that fail however often they are tried, whatever the documents hold.
  const poisoned = new Set<string>();
  const srv = useServer({
    tenants: ['eve', 'acme'],
    tokens: {
      eveIngest: ['ingest'],
      acmeIngest: { tenant: 'acme', scopes: ['ingest'] },
      acmeRead: { tenant: 'acme', scopes: ['read'] },
    },
    mayLog: /^search: indexing .* failed/,
    stores: (dataDir) => {
      const stores = openLocalStoresForTest(dataDir);
      const read = stores.segments.readSegment.bind(stores.segments);
      stores.segments.readSegment = (key, length, from) => {
        if (poisoned.has(key.w)) throw new Error('this segment cannot be read (test)');
        return read(key, length, from);
      };
      return stores;
    },
  });

  function newWriter(): Writer {
    mkdirSync(srv.workDir, { recursive: true });
    return openSession(mkdtempSync(join(srv.workDir, 'stuck-')), { agent: 'codex' });
  }

  it('do not hold up the rest of the queue (SEARCH-POISON-QUEUE)', async () => {
    // eve: 70 writers whose indexing fails, queued before acme's chunk
    for (let i = 0; i < 70; i++) {
      const s = newWriter();
      s.message({ user_id: 'eve', text: `poison ${i}` });
      poisoned.add(s.w);
      const r = await request(srv, 'POST', `/v1/sessions/${s.sid}/writers/${s.w}/chunks?offset=0`, {
        token: srv.tokens.eveIngest,
        body: readFileSync(s.path),
      });
      expect(r.status, r.text).toBe(201);
    }
    await srv.indexNow();
    // acme's chunk comes after them.
    const a = newWriter();
    a.message({ user_id: 'priya', text: 'acme innocent okapi' });
    const r = await request(srv, 'POST', `/v1/sessions/${a.sid}/writers/${a.w}/chunks?offset=0`, {
      token: srv.tokens.acmeIngest,
      body: readFileSync(a.path),
    });
    expect(r.status, r.text).toBe(201);
    await srv.indexNow();
    const found = await request(srv, 'GET', '/v1/search?q=okapi', { token: srv.tokens.acmeRead });
    expect(found.status).toBe(200);
    expect(SearchAnswer.parse(found.json).hits).toHaveLength(1);
  });
});
