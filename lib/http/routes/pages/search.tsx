/**
 * The board's search page (issue 30 item 3, lib/board/search.tsx): `GET /search?q=&cursor=`, the hits of
 * `GET /v1/search` for the signed-in browser, the query in the header's box and in the address. No query:
 * a short help of the language; a query that does not parse: a 400 page saying what and where beside the
 * box; a deployment without a search index, or a query that took too long: a 503 page saying so.
 */
import type { Context } from 'hono';
import { z } from 'zod';
import { SearchPage, type SearchView } from '../../../board/search.js';
import { MAX_QUERY_CHARS } from '../../../contract/search.js';
import { searchSessions } from '../../../service/search/search.js';
import { AppError } from '../../../service/shared/errors.js';
import { type AppEnv, pageAuth } from '../../auth.js';
import { defineRoute, page, redirect } from '../../route.js';
import { boardHtml } from './board-html.js';

/** Hits a page of the board's search shows. */
export const SEARCH_PAGE_HITS = 20;

/** The page of `view` at `status`. */
function searchPage(c: Context<AppEnv>, view: SearchView, status: 200 | 400 | 503 = 200) {
  return boardHtml(c, <SearchPage view={view} now={c.get('ctx').now().toISOString()} />, status);
}

/** A refusal of the search as the page shows it; anything else is the app's error. */
function refusal(c: Context<AppEnv>, q: string, err: unknown) {
  if (!(err instanceof AppError)) throw err;
  switch (err.code) {
    case 'bad_query':
      return searchPage(c, { kind: 'bad', q, message: err.message }, 400);
    case 'invalid_cursor':
      return searchPage(
        c,
        {
          kind: 'bad',
          q,
          message: 'That page of hits cannot be shown: its cursor is not one this board gave. Search again.',
        },
        400,
      );
    case 'search_unavailable':
      return searchPage(
        c,
        {
          kind: 'unavailable',
          q,
          message:
            'Search is not available on this server: it has no search index. Ask its operator (docs/search.md).',
        },
        503,
      );
    case 'search_timeout':
      return searchPage(
        c,
        {
          kind: 'unavailable',
          q,
          message:
            'The search took too long and was stopped. Narrow it: more words, a phrase, or filters such as agent:, after: or session:.',
        },
        503,
      );
    default:
      throw err;
  }
}

export const searchPageRoute = defineRoute({
  route: {
    method: 'get',
    path: '/search',
    operationId: 'searchPage',
    tags: ['board pages'],
    summary: "Search the tenant's sessions",
    description: [
      `The hits of \`GET /v1/search\`, ${SEARCH_PAGE_HITS} a page, each linking to its timeline row; the`,
      'query stays in the header’s box and the address. Without `q`: a short help of the query language.',
      'A query that does not parse: a 400 page saying what and where.',
    ].join(' '),
    middleware: [pageAuth],
    request: {
      query: z.object({
        q: z.string().optional().describe('the query, as typed (docs/search.md)'),
        cursor: z.string().max(200).optional().describe('the page after the one that linked here'),
      }),
    },
    responses: {
      200: page('the hits, or the help of the query language when there is no query'),
      302: redirect('not signed in: to the sign-in page', '/login'),
      400: page('a query that does not parse, or a cursor this board did not give: a page saying why'),
      503: page('this server has no search index, or the query took too long: a page saying so'),
    },
  },
  auth: 'cookie',
  scopes: ['board'],
  onInvalid: (err, c) => searchPage(c, { kind: 'bad', q: c.req.query('q') ?? '', message: err.message }, 400),
  handler: async (c) => {
    const { q: raw, cursor } = c.req.valid('query');
    const q = (raw ?? '').slice(0, MAX_QUERY_CHARS * 2);
    if (q.trim() === '') return searchPage(c, { kind: 'help' });
    try {
      const answer = await searchSessions(c.get('ctx'), {
        q,
        limit: SEARCH_PAGE_HITS,
        ...(cursor ? { cursor } : {}),
      });
      return searchPage(c, { kind: 'hits', q, answer, first: !cursor });
    } catch (err) {
      return refusal(c, q, err);
    }
  },
});
