/**
 * `hansard search` (issue 30 item 3, lib/client/cli/cmd-search.ts) as a real process: the CLI built from
 * this checkout (`bin/hansard`, test/support/built-cli.ts) against the real server of `hansard serve` on
 * loopback (its SQLite index, its drain): hits printed readably with the matches marked «» (stdout is not
 * a terminal) and the board link, the next page's command, no hits (exit 0), a bad query (exit 2, the
 * server's message and a caret), `--json`, `--reindex --wait` and `--status`.
 */
import { execFile } from 'node:child_process';
import { describe, expect, it } from 'vitest';
import { SearchAnswer } from '../../../lib/contract/search.js';
import { useBuiltCli } from '../../support/built-cli.js';
import { runHansard } from '../../support/cli.js';
import { request } from '../../support/http.js';
import { type LocalSegment, writeSession } from '../../support/segments.js';
import { useServer } from '../../support/server.js';
import { upload } from '../../support/stored.js';

const srv = useServer({ real: true, digester: false, tokens: { reader: ['read'], ingest: ['ingest'] } });
const cli = useBuiltCli('search-cli');

interface Run {
  code: number;
  out: string;
  err: string;
}

/** `bin/hansard search ARGS` with the reader's token (or `token`). */
function hansard(args: string[], token?: string): Promise<Run> {
  return new Promise((done) => {
    execFile(
      process.execPath,
      [cli.bin, 'search', ...args],
      {
        env: {
          PATH: process.env.PATH ?? '',
          HOME: srv.workDir,
          NO_COLOR: '1',
          HANSARD_URL: srv.url,
          HANSARD_TOKEN: token ?? srv.tokens.reader,
        },
      },
      (err, out, errOut) => done({ code: err ? Number(err.code ?? 1) : 0, out, err: errOut }),
    );
  });
}

const sessions: LocalSegment[] = [];

async function setUp() {
  if (sessions.length > 0) return;
  sessions.push(writeSession(srv.workDir, { agent: 'codex', text: 'migrate the billing schema' }));
  for (let i = 0; i < 3; i++) {
    sessions.push(writeSession(srv.workDir, { agent: 'claude-code', text: `payments dashboard ${i}` }));
  }
  for (const s of sessions) await upload(srv, srv.admin, s);
  await srv.indexNow();
}

describe('hansard search', () => {
  it('prints each hit: title, session, what and who, the marked snippet and the board link', async () => {
    await setUp();
    const r = await hansard(['billing', 'schema']);
    expect(r.code, r.err).toBe(0);
    const sid = sessions[0]!.sid;
    const lines = r.out.trimEnd().split('\n');
    expect(lines[0]).toBe('1. migrate the billing schema');
    expect(lines[1]).toMatch(new RegExp(`^   ${sid}  \\S+  message · person priya`));
    expect(lines[2]).toBe('   migrate the «billing» «schema»');
    expect(lines[3]).toMatch(
      new RegExp(`^   ${srv.url.replaceAll('.', '\\.')}/sessions/${sid}\\?at=e-\\S+#e-\\S+$`),
    );
    // the link is the board's: it opens that row of the timeline
    const page = await request(srv, 'GET', lines[3]!.trim().slice(srv.url.length).split('#')[0]!, {
      token: srv.admin,
    });
    expect(page.status).toBe(200);
    expect(page.text).toContain(`id="${lines[3]!.split('#')[1]}"`);
  });

  it('takes one argument with a space as a phrase, and -word as an exclusion', async () => {
    await setUp();
    const phrase = await hansard(['schema billing']);
    expect(phrase.code, phrase.err).toBe(0);
    expect(phrase.out).toMatch(/^no hits for "schema billing"/);
    const excluded = await hansard(['payments', '-dashboard', '--limit', '50']);
    expect(excluded.code, excluded.err).toBe(0);
    // the three messages say dashboard: the four sessions' actions and outputs are left
    expect(excluded.out.match(/^\d+\. /gm)).toHaveLength(8);
    expect(excluded.out).not.toMatch(/ {2}message/);
    expect(excluded.out).toContain('«payments»');
  });

  it('pages: --limit, then the printed command with --cursor, until no more', async () => {
    await setUp();
    const first = await hansard(['payments', '--limit', '4']);
    expect(first.code, first.err).toBe(0);
    // The hint keeps the page size the first page was asked with.
    const more = /^more: hansard search payments --limit 4 --cursor (\S+)$/m.exec(first.out);
    expect(more, first.out).not.toBeNull();
    expect(first.out.match(/^\d+\. /gm)).toHaveLength(4);
    const second = await hansard(['payments', '--limit', '50', '--cursor', more![1]!]);
    expect(second.code, second.err).toBe(0);
    // four sessions' actions and outputs, three messages: 11 hits, 4 on the first page
    expect(second.out.match(/^\d+\. /gm)).toHaveLength(7);
    expect(second.out).not.toContain('more: ');
  });

  it('no hits: exit 0, saying so with a hint', async () => {
    await setUp();
    const r = await hansard(['zebra', 'quokka']);
    expect(r.code, r.err).toBe(0);
    expect(r.out).toMatch(/^no hits for zebra quokka\nhint: /);
  });

  it('a bad query: exit 2 with the server’s message and a caret under the character', async () => {
    const r = await hansard(['billing owner:priya']);
    expect(r.code).toBe(2);
    expect(r.out).toBe('');
    expect(r.err).toContain('hansard: bad query: "owner:" is not a filter');
    expect(r.err).toContain('  billing owner:priya\n          ^\n');
    expect(r.err).toContain('hansard search --help');
  });

  it('--json prints the API’s answer', async () => {
    await setUp();
    const r = await hansard(['payments', 'agent:codex', '--json']);
    expect(r.code, r.err).toBe(0);
    const a = SearchAnswer.parse(JSON.parse(r.out));
    expect(a.query.filters).toEqual({ agent: ['codex'] });
    expect(new Set(a.hits.map((h) => h.sid))).toEqual(new Set([sessions[0]!.sid]));
  });

  it('a token without read: exit 2 saying which scope', async () => {
    const r = await hansard(['payments'], srv.tokens.ingest);
    expect(r.code).toBe(2);
    expect(r.err).toMatch(/403 forbidden/);
    expect(r.err).toContain('hansard token create --scopes read');
  });
});

describe('hansard search --reindex and --status', () => {
  it('--reindex --wait rebuilds every session and waits until nothing is queued', async () => {
    await setUp();
    const before = await hansard(['payments', '--json', '--limit', '50']);
    const r = await hansard(['--reindex', '--wait', '--timeout', '2m'], srv.admin);
    expect(r.code, r.err).toBe(0);
    expect(r.out).toMatch(/^reindexed 4 sessions: \d+ documents in the index\n$/);
    expect(r.err).toMatch(/queued: \d+, lag/);
    const after = await hansard(['payments', '--json', '--limit', '50']);
    expect(JSON.parse(after.out).hits).toEqual(JSON.parse(before.out).hits);
  });

  it('--reindex SID queues one session; a read token may not', async () => {
    await setUp();
    const one = await hansard(['--reindex', sessions[1]!.sid], srv.admin);
    expect(one.code, one.err).toBe(0);
    expect(one.out).toMatch(/^queued the rebuild of 1 session \(1 writer\)/);
    const refused = await hansard(['--reindex'], srv.tokens.reader);
    expect(refused.code).toBe(2);
    expect(refused.err).toContain('hansard token create --scopes admin');
  });

  it('--status prints the lag and the size', async () => {
    await setUp();
    await srv.indexNow();
    const r = await hansard(['--status']);
    expect(r.code, r.err).toBe(0);
    expect(r.out).toMatch(/^queued: 0, lag 0 s, \d+ documents indexed \(\d+(\.\d)? (B|KiB|MiB)\)\n$/);
  });
});

describe('hansard search: mistakes caught before any request (in process)', () => {
  const run = (args: string[]) =>
    runHansard(['search', ...args], {
      cwd: srv.workDir,
      // nothing listens there: a request would fail with exit 1, not the usage error (2) expected
      env: { HANSARD_URL: 'http://127.0.0.1:9', HANSARD_TOKEN: `hns_${'x'.repeat(43)}` },
    });

  it.each([
    [[], /give a query/],
    [['payments', '--limt', '3'], /--limt is not an option of hansard search/],
    [['payments', '--limit', '0'], /--limit 0 is not a number from 1 to 50/],
    [['payments', '--wait'], /--wait goes with --reindex/],
    [['--reindex', 's_1', 's_2'], /at most one session id/],
    [['--reindex', '--cursor', 'x'], /--cursor and --limit are for a query/],
    [['--reindex', '--wait', '--timeout', '10'], /--timeout 10 has no unit/],
    [['--status', 'payments'], /--status takes no query/],
  ])('%j: exit 2 saying what is wrong', async (args, message) => {
    const r = await run(args as string[]);
    expect(r.code).toBe(2);
    expect(r.err).toMatch(message);
  });

  it('--help teaches the query language with examples and names docs/search.md', async () => {
    const r = await run(['--help']);
    expect(r.code).toBe(0);
    for (const part of [
      '"terraform apply"',
      'parser -flaky',
      'agent:',
      'person:',
      'tool:',
      'type:',
      'state:',
      'session:',
      'after:7d',
      'before:',
      'docs/search.md',
      '--reindex',
    ]) {
      expect(r.out).toContain(part);
    }
  });
});
