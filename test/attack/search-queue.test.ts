/**
 * Attacks on search's indexing queue (issue 30 item 5 "indexed as it arrives, never lost") with the local
 * stores over real HTTP on loopback: two indexing passes of one writer at once (the server's drain and an
 * `indexNow`, or two processes on one database), a torn last line completed by a later chunk, and two
 * writers uploading while reindexes and drains run, each ending with the index equal to a rebuild.
 *
 * Finding fixed (lib/service/search/indexer.ts): SEARCH-QUEUE-RACE — a pass that found its batch refused
 * (`applyWriter` false: another pass had moved the writer's indexed length) took the writer as indexed and
 * its queue entry was removed, though the other pass had read a shorter segment: the bytes between were
 * never indexed (until that writer's next chunk; never, for a writer that had ended).
 */
import { mkdirSync, mkdtempSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { SearchAnswer, SearchStatus } from '../../lib/contract/search.js';
import { localSearch } from '../../lib/deploy/local-search.js';
import { openSession } from '../../lib/log/index.js';
import { type IndexerDeps, indexQueued } from '../../lib/service/search/indexer.js';
import type { SearchIndex, WriterBatch } from '../../lib/store/search.js';
import { request } from '../support/http.js';
import { useServer } from '../support/server.js';

const srv = useServer({ tenants: ['acme'], tokens: { ingest: ['ingest'], reader: ['read'] } });

type Writer = ReturnType<typeof openSession>;

function newWriter(agent: string, sid?: string): Writer {
  mkdirSync(srv.workDir, { recursive: true });
  return openSession(mkdtempSync(join(srv.workDir, 'queue-')), { agent, ...(sid ? { sid } : {}) });
}

async function post(s: Writer, from: number, to?: number): Promise<number> {
  const bytes = readFileSync(s.path);
  const end = to ?? bytes.length;
  const r = await request(srv, 'POST', `/v1/sessions/${s.sid}/writers/${s.w}/chunks?offset=${from}`, {
    token: srv.tokens.ingest,
    body: bytes.subarray(from, end),
  });
  expect(r.status, r.text).toBe(201);
  return end;
}

async function search(q: string): Promise<SearchAnswer> {
  const r = await request(srv, 'GET', `/v1/search?q=${encodeURIComponent(q)}&limit=50`, {
    token: srv.tokens.reader,
  });
  expect(r.status, r.text).toBe(200);
  return SearchAnswer.parse(r.json);
}

async function drainAll(): Promise<void> {
  for (let i = 0; i < 20 && (await srv.indexNow()) > 0; i++);
  const st = await request(srv, 'GET', '/v1/search/status', { token: srv.tokens.reader });
  expect(SearchStatus.parse(st.json).queued).toBe(0);
}

/** A promise and its resolver. */
function gate(): { wait: Promise<void>; open: () => void } {
  let open = () => {};
  const wait = new Promise<void>((r) => {
    open = r;
  });
  return { wait, open };
}

/** `index` with `before` run ahead of each `applyWriter`. */
function withBefore(index: SearchIndex, before: (b: WriterBatch) => Promise<void>): SearchIndex {
  return {
    indexedLength: (t, s, w) => index.indexedLength(t, s, w),
    applyWriter: async (b) => {
      await before(b);
      return index.applyWriter(b);
    },
    putSessionFacts: (f) => index.putSessionFacts(f),
    dropSession: (t, s) => index.dropSession(t, s),
    query: (t, q) => index.query(t, q),
    stats: (t) => index.stats(t),
    close: () => index.close(),
  };
}

describe('the indexing queue', () => {
  it('two passes of one writer at once lose nothing (SEARCH-QUEUE-RACE)', async () => {
    const search0 = localSearch(srv.stores.state)!;
    const queue = search0.queue!;
    const deps = (index: SearchIndex): IndexerDeps => ({
      segments: srv.stores.segments,
      state: srv.stores.state,
      index,
      now: () => new Date(),
    });
    await drainAll();
    const s = newWriter('codex');
    s.message({ user_id: 'priya', text: 'first chunk words aardvark' });
    let at = await post(s, 0);
    const target = { tenant: 'acme', sid: s.sid, w: s.w };
    const [entryA] = (await queue.takeSearchQueue(64)).filter((e) => e.sid === s.sid && e.w === s.w);

    // Pass A reads the segment as it is now, then waits before it writes.
    const holdA = gate();
    const passA = indexQueued(deps(withBefore(search0.index, () => holdA.wait)), target).then(() =>
      queue.doneSearchQueue(entryA!),
    );

    // A second chunk arrives; pass B reads the longer segment, and A writes just before B does.
    s.message({ user_id: 'priya', text: 'second chunk words bumblebee' });
    s.end();
    at = await post(s, at);
    const [entryB] = (await queue.takeSearchQueue(64)).filter((e) => e.sid === s.sid && e.w === s.w);
    expect(entryB!.version).toBeGreaterThan(entryA!.version);
    await indexQueued(
      deps(
        withBefore(search0.index, async () => {
          holdA.open();
          await passA;
        }),
      ),
      target,
    );
    await queue.doneSearchQueue(entryB!);
    await drainAll();

    expect((await search('aardvark')).hits).toHaveLength(1);
    // The second chunk's words: accepted (201), so found once the queue is empty.
    expect((await search('bumblebee')).hits.map((h) => h.sid)).toEqual([s.sid]);
  });

  it('a chunk with a torn last line is refused, and the line is found once its whole chunk comes', async () => {
    const s = newWriter('codex');
    s.message({ user_id: 'priya', text: 'whole line cormorant' });
    s.message({ user_id: 'priya', text: 'torn line dromedary' });
    s.end();
    const bytes = readFileSync(s.path);
    const torn = bytes.indexOf('dromedary') + 3;
    const refused = await request(srv, 'POST', `/v1/sessions/${s.sid}/writers/${s.w}/chunks?offset=0`, {
      token: srv.tokens.ingest,
      body: bytes.subarray(0, torn),
    });
    expect(refused.status).toBe(400);
    await drainAll();
    expect((await search('cormorant')).hits).toEqual([]);
    expect(await post(s, 0)).toBe(bytes.length);
    await drainAll();
    expect((await search('dromedary')).hits).toHaveLength(1);
    expect((await search('cormorant')).hits).toHaveLength(1);
  });

  it('two writers uploading while reindexes and drains run: the index equals a rebuild', async () => {
    const a = newWriter('codex');
    const b = newWriter('claude-code', a.sid);
    const sizes = { a: 0, b: 0 };
    const work: Promise<unknown>[] = [];
    for (let i = 0; i < 12; i++) {
      a.message({ user_id: 'priya', text: `writer a line ${i} emu${i}` });
      b.output({ turn_id: 't_x', text: `writer b line ${i} flamingo${i}` });
      const fromA = sizes.a;
      const fromB = sizes.b;
      sizes.a = readFileSync(a.path).length;
      sizes.b = readFileSync(b.path).length;
      // chunks of one writer in order; the two writers, the drains and the reindexes at once
      await Promise.all(work.splice(0));
      work.push(post(a, fromA, sizes.a), post(b, fromB, sizes.b), srv.indexNow(), srv.indexNow());
      if (i % 4 === 1) {
        work.push(
          request(srv, 'POST', '/v1/search/reindex', {
            token: srv.tenants.acme.admin,
            json: i % 8 === 1 ? { sid: a.sid } : {},
          }).then((r) => expect(r.status, r.text).toBe(202)),
        );
      }
    }
    await Promise.all(work);
    await drainAll();
    const found = async () => {
      const out: string[] = [];
      for (let i = 0; i < 12; i++) {
        for (const q of [`emu${i}`, `flamingo${i}`]) {
          const hits = (await search(q)).hits;
          out.push(`${q}:${hits.length}`);
        }
      }
      return out;
    };
    const live = await found();
    expect(
      live.every((x) => x.endsWith(':1')),
      live.join(' '),
    ).toBe(true);
    const re = await request(srv, 'POST', '/v1/search/reindex', { token: srv.tenants.acme.admin, json: {} });
    expect(re.status).toBe(202);
    await drainAll();
    expect(await found()).toEqual(live);
  });
});
