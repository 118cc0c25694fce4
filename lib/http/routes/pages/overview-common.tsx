/**
 * What the overview's routes share (`GET /`, `/people/{user_id}`, `/agents/{agent}`, and the live
 * updates `GET /board/events`, `GET /board/fragment`): the query they take (the filters, `?page=`,
 * `?limit=`), the call of `getOverview` with a view's fixed filter, the ETag as a header value, and the
 * check of the live routes, which answer JSON errors rather than redirect (a script reads them).
 */
import type { Context, MiddlewareHandler } from 'hono';
import { z } from 'zod';
import { OverviewPage, type OverviewView } from '../../../board/overview.js';
import { BadPageLinkPage } from '../../../board/pages.js';
import { STATES } from '../../../contract/status.js';
import { getOverview } from '../../../service/board/overview.js';
import { type Overview, OverviewFilters } from '../../../service/board/overview-schemas.js';
import { requireScope } from '../../../service/shared/context.js';
import type { AppError } from '../../../service/shared/errors.js';
import { type AppEnv, requireAuth } from '../../auth.js';
import { boardHtml } from './board-html.js';

/** `?page=`: a page of the overview, from 1. */
const Page = z
  .string()
  .regex(/^\d{1,5}$/, 'a page is a whole number from 1')
  .transform(Number)
  .pipe(z.number().int().min(1))
  .optional()
  .describe('the page, from 1 (default 1)');

/** `?limit=`: rows per page. */
const PageLimit = z
  .string()
  .regex(/^\d{1,3}$/, 'a limit is a whole number from 1 to 200')
  .transform(Number)
  .pipe(z.number().int().min(1).max(200))
  .optional()
  .describe('sessions on a page, 1 to 200 (default 50)');

/** The overview's query: its filters (an empty value is no filter, as a GET form sends it), page, limit. */
export const OverviewQuery = OverviewFilters.extend({
  state: z
    .union([z.literal(''), z.enum([...STATES, 'none'])])
    .optional()
    .describe('only sessions whose latest report has this state (`none`: no report; empty: any)'),
  page: Page,
  limit: PageLimit,
});
export type OverviewQuery = z.infer<typeof OverviewQuery>;

/** The query of the live routes: the overview's, and which view's links the region carries. */
export const LiveQuery = OverviewQuery.extend({
  view: z.enum(['person', 'agent']).optional().describe("render the region as the person's or agent's view"),
});
export type LiveQuery = z.infer<typeof LiveQuery>;

/** The view a live request renders: the person's or agent's named by `?view=` and its filter, or all. */
export function liveView(q: LiveQuery): OverviewView {
  if (q.view === 'person' && q.person) return { kind: 'person', id: q.person };
  if (q.view === 'agent' && q.agent) return { kind: 'agent', id: q.agent };
  return { kind: 'all' };
}

/** The filters of a validated query, empty values dropped, the view's own filter set. */
export function filtersOf(q: OverviewQuery, view: OverviewView): OverviewFilters {
  const f: OverviewFilters = {};
  if (q.state) f.state = q.state;
  if (q.agent) f.agent = q.agent;
  if (q.person) f.person = q.person;
  if (q.q?.trim()) f.q = q.q.trim();
  if (view.kind === 'person') f.person = view.id;
  if (view.kind === 'agent') f.agent = view.id;
  return f;
}

/** The overview of the request's tenant for `q` in `view`. */
export function overviewFor(c: Context<AppEnv>, q: OverviewQuery, view: OverviewView): Promise<Overview> {
  return getOverview({ ctx: c.get('ctx'), filters: filtersOf(q, view), page: q.page ?? 1, limit: q.limit });
}

/** An overview's ETag as the header carries it: quoted, as RFC 9110 has it. */
export function etagHeader(o: Overview): string {
  return o.etag.startsWith('"') ? o.etag : `"${o.etag}"`;
}

/**
 * The page of `view` (`GET /`, `/people/{user_id}`, `/agents/{agent}`): the overview, with the live
 * updates the deployment can serve (`AppDeps.live`).
 */
export async function overviewPage(c: Context<AppEnv>, q: OverviewQuery, view: OverviewView) {
  const overview = await overviewFor(c, q, view);
  const { live } = c.get('services');
  return boardHtml(c, <OverviewPage overview={overview} view={view} live={live} limit={q.limit} />);
}

/** A link to the overview that cannot be shown (a bad `?page=`, `?limit=` or filter): 400, a page. */
export function badOverviewLink(c: Context<AppEnv>, err: AppError) {
  return boardHtml(
    c,
    <BadPageLinkPage message={`That page of the board cannot be shown: ${err.message}.`} />,
    400,
  );
}

/**
 * The live routes' check: the board's cookie (or a bearer token) with the `board` scope, else a JSON
 * error (401, 403): a script asked, not a person, so no redirect to sign-in.
 */
export const liveAuth: MiddlewareHandler<AppEnv> = async (c, next) => {
  await requireAuth(c.get('services').deps, true)(c, async () => {});
  requireScope(c.get('ctx'), 'board');
  return next();
};
