/**
 * `hansard search QUERY... [--json] [--limit N] [--cursor C]` and `hansard search --reindex [SID] [--wait]`
 * (issue 30 item 3, docs/search.md): the tenant's sessions searched through `GET /v1/search`, each hit
 * printed with its session, row, who and when, the snippet with the matches marked (bold on a terminal,
 * «» otherwise) and the board's link to the row; and the index rebuilt from the stored segments
 * (`POST /v1/search/reindex`, admin), waiting with `--wait` until `GET /v1/search/status` says it is done.
 */
import type { Command } from 'commander';
import type { SearchAnswer, SearchHit, SearchStatus } from '../../contract/search.js';
import { DEFAULT_SEARCH_LIMIT, MAX_SEARCH_LIMIT } from '../../contract/search.js';
import { escapeControl } from '../../log/format/escape.js';
import { ServerError } from '../api/client.js';
import { clientFrom, retryNotice } from '../api/config.js';
import { ExitError, FailureError, UsageError } from '../api/errors.js';
import { type Io, printJson } from '../api/io.js';
import { SearchApi } from '../api/search.js';
import { durationSeconds } from './duration.js';
import { jsonOption } from './options.js';

/** The options of `hansard search`, as commander parses them. */
export interface SearchOptions {
  json?: boolean;
  limit?: string;
  cursor?: string;
  reindex?: boolean;
  wait?: boolean;
  status?: boolean;
  timeout: string;
  url?: string;
  token?: string;
}

/** How long `--reindex --wait` waits at most by default, and at most at all, in seconds. */
const DEFAULT_WAIT = '10m';
const MAX_WAIT_SECONDS = 24 * 3600;
/** How often `--wait` asks the server, in ms. */
export const WAIT_POLL_MS = 1000;

const AFTER = `
The query language (all of it, and what is searchable: docs/search.md):
  billing migration            both words, in the same message, output, action, note or report
  "terraform apply"            a phrase: its words adjacent, in order (quote it for the shell too)
  parser -flaky                parser, and not flaky; -"a phrase" excludes a phrase
  agent:codex agent:claude-code  filters; values of one filter are alternatives, filters all hold
  person:priya  person:"Priya Shah"  tool:bash  session:s_01J…
  type:message|output|action|note|correction|report
  state:working|blocked|needs_review|done|unknown
  after:2026-12-01  before:2026-12-07T12:00:00Z  after:7d  after:12h  after:30m
Case and punctuation do not matter: billing_migration is the phrase "billing migration".

Examples:
  hansard search billing migration
  hansard search '"terraform apply"' agent:codex after:7d
  hansard search 'person:priya parser -flaky' --limit 5
  hansard search parser --json                         the API's answer, as JSON
  hansard search parser --cursor <next cursor>         the next page (the command prints it)
  hansard search --reindex                             rebuild the tenant's index (admin token)
  hansard search --reindex s_01J… --wait               one session, and wait until it is indexed
  hansard search --status                              how far the index is behind ingest

Several words are joined by spaces; one argument holding spaces (and no quote or filter) is a phrase, and
among several arguments, a filter whose value holds spaces gets its quotes back (person:"Priya Shah").
Each hit prints its session's title, the session and row, its type, agent, person and tool, the text
around the match with the matches marked, and the board's link to the row. Exit codes: 0 (also with no
hits), 2 for a query that does not parse (the message says what and at which character).`;

export function registerSearch(program: Command, io: Io): void {
  program
    .command('search')
    .description("search the tenant's sessions: messages, outputs, actions, notes, reports (docs/search.md)")
    .argument('[query...]', 'the query: words, "phrases", -exclusions, filters such as agent:codex')
    .option('--limit <n>', `hits to print, 1 to ${MAX_SEARCH_LIMIT} (default ${DEFAULT_SEARCH_LIMIT})`)
    .option('--cursor <cursor>', 'the next page: the cursor the previous page printed')
    .option(
      '--reindex',
      'rebuild the index from the stored segments: of SID, or of every session (admin token)',
    )
    .option('--wait', 'with --reindex: wait until the rebuild is indexed, printing progress')
    .option('--status', "how far the tenant's index is behind ingest, and its size")
    .option('--timeout <duration>', 'with --wait: give up after this long (90s, 10m, 1h)', DEFAULT_WAIT)
    .option('--url <url>', 'server URL (env HANSARD_URL)')
    .option(
      '--token <token>',
      'token with the read (or board) scope; admin for --reindex (env HANSARD_TOKEN)',
    )
    .addOption(jsonOption())
    // `-flaky` is a word to exclude, not an option: unknown options are the query's (checked below).
    .allowUnknownOption()
    .addHelpText('after', AFTER)
    .action((words: string[], o: SearchOptions) => search(words, o, io));
}

/**
 * The query the arguments make: joined by spaces, an argument that holds whitespace but no quote and no
 * filter made a phrase (the shell took its quotes: `hansard search "terraform apply"`), a leading `-` kept
 * outside it.
 * @throws UsageError for an argument that looks like a long option this command does not have
 */
export function queryOf(words: readonly string[]): string {
  return words
    .map((w) => {
      if (/^--[A-Za-z]/.test(w)) {
        throw new UsageError(
          `${w.split('=')[0]} is not an option of hansard search (see --help); to search for it, put it in quotes inside the query: '"${w}"'`,
        );
      }
      // One of several arguments that is a filter whose value holds spaces: the shell took its quotes
      // (`person:"Priya Shah" parser`), so they go back around the value.
      const filter = /^([A-Za-z_]{1,20}):(\S.*\s.*)$/s.exec(w.trim());
      if (words.length > 1 && filter && !w.includes('"')) return `${filter[1]}:"${filter[2]}"`;
      if (!/\s/.test(w.trim()) || w.includes('"') || /(?:^|\s)-?[A-Za-z_]{1,20}:\S/.test(w)) return w;
      const neg = w.trimStart().startsWith('-');
      return `${neg ? '-' : ''}"${w.trim().slice(neg ? 1 : 0)}"`;
    })
    .join(' ')
    .trim();
}

/** `value` quoted for a POSIX shell when it needs it (the next-page hint is a command to paste). */
function shellQuote(value: string): string {
  return /^[A-Za-z0-9_@%+=:,./-]+$/.test(value) ? value : `'${value.replaceAll("'", `'\\''`)}'`;
}

/** @throws UsageError for a --limit that is not 1 to `MAX_SEARCH_LIMIT` */
function limitOf(v: string | undefined): number | undefined {
  if (v === undefined) return undefined;
  if (!/^\d{1,3}$/.test(v) || Number(v) < 1 || Number(v) > MAX_SEARCH_LIMIT) {
    throw new UsageError(`--limit ${v} is not a number from 1 to ${MAX_SEARCH_LIMIT}`);
  }
  return Number(v);
}

/**
 * `hansard search`: a page of hits (or, with `--reindex`, a rebuild). See the module's doc.
 * @throws UsageError (exit 2) for bad flags or no query; ExitError(2) after printing a `bad_query`;
 *   ServerError / NetworkError from the server; FailureError when `--wait` gives up
 */
export async function search(words: string[], o: SearchOptions, io: Io): Promise<void> {
  if (o.reindex) return reindex(words, o, io);
  if (o.status) return status(words, o, io);
  if (o.wait) throw new UsageError('--wait goes with --reindex');
  const q = queryOf(words);
  if (!q) {
    throw new UsageError(
      'give a query: hansard search billing migration, or hansard search --help for the query language',
    );
  }
  const limit = limitOf(o.limit);
  const api = new SearchApi(clientFrom(o, io.env, retryNotice(io)));
  let answer: SearchAnswer;
  try {
    answer = await api.search({
      q,
      ...(limit !== undefined ? { limit } : {}),
      ...(o.cursor !== undefined ? { cursor: o.cursor } : {}),
    });
  } catch (err) {
    // A query that does not parse: the server's sentence, and where (not "the server refused").
    if (!o.json && err instanceof ServerError && err.code === 'bad_query') {
      io.stderr.write(badQueryText(q, err));
      throw new ExitError(2);
    }
    throw err;
  }
  if (o.json) return printJson(io, answer);
  printHits(io, q, answer, api.origin, { paged: o.cursor !== undefined, limit });
}

/** A `bad_query` as the terminal shows it: the message, and the query with a caret under the character. */
function badQueryText(q: string, err: ServerError): string {
  const lines = [`hansard: bad query: ${escapeControl(err.message)}`];
  const at = err.details.position;
  const shown = escapeControl(q);
  // The caret lines up only when escaping changed nothing before the character.
  if (typeof at === 'number' && at >= 1 && at <= q.length + 1 && shown === q) {
    lines.push(`  ${q}`, `  ${' '.repeat(at - 1)}^`);
  }
  lines.push('hint: hansard search --help shows the query language with examples');
  return `${lines.join('\n')}\n`;
}

/** Marks a snippet's hits: bold on a terminal (unless NO_COLOR), «…» otherwise. */
function marker(io: Io): (text: string) => string {
  const bold = io.stdout.isTTY === true && !io.env.NO_COLOR;
  return bold ? (t) => `\x1b[1m${t}\x1b[22m` : (t) => `«${t}»`;
}

/** One hit's lines: title; sid, ts, what and who; the snippet; the link. */
function hitLines(h: SearchHit, n: number, mark: (t: string) => string, origin: string): string[] {
  const who = [
    h.type === 'action' && h.tool ? `action ${h.tool}` : h.type,
    h.agent ? `agent ${h.agent}` : null,
    h.person ? `person ${h.person}` : null,
    h.tool && h.type !== 'action' ? `tool ${h.tool}` : null,
    h.state ? `state ${h.state}` : 'no report',
    h.corrected ? 'corrected' : null,
  ].filter((x): x is string => x !== null);
  const snippet = h.snippet
    .map((p) => (p.hit ? mark(escapeControl(p.text)) : escapeControl(p.text)))
    .join('');
  return [
    `${n}. ${escapeControl(h.title ?? '(untitled session)')}`,
    `   ${h.sid}  ${escapeControl(h.ts)}  ${escapeControl(who.join(' · '))}`,
    `   ${snippet}`,
    `   ${origin}${h.link}`,
  ];
}

function printHits(
  io: Io,
  q: string,
  a: SearchAnswer,
  origin: string,
  page: { paged: boolean; limit: number | undefined },
): void {
  const out: string[] = [];
  if (a.hits.length === 0) {
    out.push(page.paged ? 'no more hits' : `no hits for ${escapeControl(q)}`);
    if (a.session_only !== null) {
      out.push(`note: this token searches session ${a.session_only} only`);
    } else if (!page.paged) {
      out.push(
        'hint: try fewer words, a word instead of a phrase, or fewer filters; hansard search --help shows the language',
      );
    }
  } else {
    const mark = marker(io);
    a.hits.forEach((h, i) => {
      out.push(...hitLines(h, i + 1, mark, origin), '');
    });
    out.pop();
  }
  if (a.pending !== null && a.pending > 0) {
    out.push(
      `note: ${a.pending} change${a.pending === 1 ? ' is' : 's are'} still being indexed${a.lag_seconds ? ` (the oldest ${Math.round(a.lag_seconds)} s ago)` : ''}: the newest lines, and the sessions of a rebuild, may be missing; hansard search --status shows how far`,
    );
  }
  if (a.depth_limited) {
    out.push(
      '',
      'more hits exist past the deepest page a search reaches: narrow the query (more words, or filters such as session:, type:, after:)',
    );
  }
  if (a.next_cursor) {
    const limit = page.limit !== undefined ? ` --limit ${page.limit}` : '';
    out.push('', `more: hansard search ${shellQuote(q)}${limit} --cursor ${a.next_cursor}`);
  }
  io.stdout.write(`${out.join('\n')}\n`);
}

/**
 * `hansard search --reindex [SID] [--wait]`: queues the rebuild; with `--wait`, asks for the status every
 * `WAIT_POLL_MS` and prints it when it changes, until nothing is queued or `--timeout` has passed.
 * @throws UsageError for more than one SID; FailureError when the wait runs out
 */
async function reindex(words: string[], o: SearchOptions, io: Io): Promise<void> {
  if (words.length > 1) throw new UsageError('--reindex takes at most one session id (s_…), or none for all');
  if (o.cursor !== undefined || o.limit !== undefined) {
    throw new UsageError('--cursor and --limit are for a query, not --reindex');
  }
  const timeout = durationSeconds('--timeout', o.timeout, MAX_WAIT_SECONDS);
  const api = new SearchApi(clientFrom(o, io.env, retryNotice(io)));
  const sid = words[0] ?? null;
  const queued = await api.reindex(sid);
  if (!o.wait) {
    if (o.json) return printJson(io, queued);
    io.stdout.write(
      `queued the rebuild of ${queued.sessions} session${queued.sessions === 1 ? '' : 's'} (${queued.writers} writer${queued.writers === 1 ? '' : 's'}): ` +
        'their hits come back as they are indexed; hansard search --status shows how far (next time, --reindex --wait waits here)\n',
    );
    return;
  }
  const started = Date.now();
  let said = '';
  for (;;) {
    const s = await api.status();
    const line = statusLine(s);
    if (!o.json && line !== said) io.stderr.write(`${line}\n`);
    said = line;
    if (s.queued === null || s.queued === 0) {
      if (o.json) return printJson(io, { ...queued, status: s });
      io.stdout.write(
        `reindexed ${queued.sessions} session${queued.sessions === 1 ? '' : 's'}${s.docs === null ? '' : `: ${s.docs} documents in the index`}\n`,
      );
      return;
    }
    if (Date.now() - started >= timeout * 1000) {
      throw new FailureError(
        `the rebuild is still going after ${o.timeout} (${s.queued} queued); it goes on on the server: hansard search --status shows how far`,
      );
    }
    await new Promise((r) => setTimeout(r, WAIT_POLL_MS));
  }
}

/** A status as one line: what is queued, how far behind, how much is indexed. */
function statusLine(s: SearchStatus): string {
  if (s.docs === null) return 'this token is bound to one session: the index of the tenant is not its to see';
  const size = `${s.docs} document${s.docs === 1 ? '' : 's'} indexed${s.bytes === null ? '' : ` (${bytesText(s.bytes)})`}`;
  if (s.queued === null) return `${size}; the queue is the platform's (lag unknown)`;
  return `queued: ${s.queued}, lag ${s.lag_seconds ?? 0} s, ${size}`;
}

/** Bytes as the upload prints them: B, KiB, MiB, GiB. */
function bytesText(n: number): string {
  const units = ['B', 'KiB', 'MiB', 'GiB'];
  let v = n;
  let u = 0;
  while (v >= 1024 && u < units.length - 1) {
    v /= 1024;
    u += 1;
  }
  return u === 0 ? `${n} B` : `${v.toFixed(1)} ${units[u]}`;
}

/** `hansard search --status`: the status as a line, or as JSON. */
async function status(words: string[], o: SearchOptions, io: Io): Promise<void> {
  if (words.length > 0) throw new UsageError('--status takes no query');
  const s = await new SearchApi(clientFrom(o, io.env, retryNotice(io))).status();
  if (o.json) return printJson(io, s);
  io.stdout.write(`${statusLine(s)}\n`);
}
