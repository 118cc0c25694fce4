/**
 * Links to rows of a session's timeline (issue 14 finding 3): a row on the page being rendered is `#anchor`;
 * a row on another page (the timeline comes 200 rows a page) is `/sessions/{sid}?at=<anchor>#<anchor>`,
 * which the page route answers with the page holding it (lib/service/timeline/page.ts `at`), keeping
 * `?person=`. The page being rendered is given by `RowLinks.Provider`; without one (a page with no
 * timeline, the status-only page) `RowA` is its text alone.
 */
import { type Child, createContext, useContext } from 'hono/jsx';

/** What the page gives its rows: the session, the person filter, and the anchors of its rows. */
export interface RowLinkPage {
  sid: string;
  person: string | null;
  onPage: ReadonlySet<string>;
}

export const RowLinks = createContext<RowLinkPage | null>(null);

/** `anchor`'s link from `page` (see the module's doc). */
export function rowLink(page: RowLinkPage | null, anchor: string): string {
  if (page === null || page.onPage.has(anchor)) return `#${anchor}`;
  const q = new URLSearchParams();
  q.set('at', anchor);
  if (page.person !== null) q.set('person', page.person);
  return `/sessions/${page.sid}?${q.toString()}#${anchor}`;
}

/** The link to row `anchor` from the page being rendered (call it in a component). */
export function useRowHref(): (anchor: string) => string {
  const page = useContext(RowLinks);
  return (anchor) => rowLink(page, anchor);
}

/**
 * `<a>` to row `anchor` from the page being rendered (`title`: its hover text, e.g. a full ts); the text
 * alone on a page with no timeline (the status-only page: there is no row to go to).
 */
export function RowA({
  anchor,
  title,
  children,
}: {
  anchor: string;
  title?: string | undefined;
  children?: Child;
}) {
  const page = useContext(RowLinks);
  if (page === null) return <span title={title}>{children}</span>;
  return (
    <a href={rowLink(page, anchor)} title={title}>
      {children}
    </a>
  );
}
