/**
 * Search from the client side (issue 30; docs/search.md): `GET /v1/search`, `GET /v1/search/status` and
 * `POST /v1/search/reindex`, as `hansard search` asks for them. The answers are the contract's shapes
 * (lib/contract/search.ts); the query is sent as typed, the server parses it.
 *
 * @example
 *   const api = new SearchApi(clientFrom({}, process.env));
 *   const page = await api.search({ q: 'agent:codex "terraform apply"', limit: 10 });
 *   for (const h of page.hits) console.log(h.sid, h.link);
 */
import type { ReindexAnswer, SearchAnswer, SearchStatus } from '../../contract/search.js';
import type { ApiClient } from './client.js';

/** The calls of the search routes; each throws the client's `ServerError` / `NetworkError`. */
export class SearchApi {
  constructor(private readonly client: ApiClient) {}

  /** The server's URL, without a trailing slash: a hit's `link` is a path of it (the board). */
  get origin(): string {
    return this.client.url;
  }

  /** `GET /v1/search` (scope read or board). @throws ServerError 400 `bad_query` for a query that does not parse */
  async search(p: { q: string; limit?: number; cursor?: string }): Promise<SearchAnswer> {
    const q = new URLSearchParams({ q: p.q });
    if (p.limit !== undefined) q.set('limit', String(p.limit));
    if (p.cursor !== undefined) q.set('cursor', p.cursor);
    return (await this.client.request('GET', `/v1/search?${q}`)).body as SearchAnswer;
  }

  /** `GET /v1/search/status` (scope read or board). */
  async status(): Promise<SearchStatus> {
    return (await this.client.request('GET', '/v1/search/status')).body as SearchStatus;
  }

  /** `POST /v1/search/reindex` (scope admin): one session, or every session when `sid` is null. */
  async reindex(sid: string | null): Promise<ReindexAnswer> {
    const body: { sid?: string } = sid === null ? {} : { sid };
    return (
      await this.client.request('POST', '/v1/search/reindex', {
        body: JSON.stringify(body),
        contentType: 'application/json',
      })
    ).body as ReindexAnswer;
  }
}
