/**
 * The frame every board page shares (hono/jsx): the document, its CSS (light and dark from the system's
 * `prefers-color-scheme`, visible focus, rows as stacked cards on a phone), the header with the skip link,
 * the search box and the live indicator, who is signed in (./signed-in.tsx) with the admin pages' links
 * and sign-out, and the footer. No inline script: a page that updates live loads our served assets (./assets.ts), and htmx is
 * configured from a meta tag (no eval), so the pages keep a CSP with `script-src 'self'` only.
 */
import { raw } from 'hono/html';
import { type Child, useContext } from 'hono/jsx';
import { HANSARD_VERSION } from '../version.js';
import { assetHref, liveAssetsPresent } from './assets.js';
import { SEARCH_CSS, SearchBox } from './search-box.js';
import { SignedInBar, SignOutForm, ViewerContext } from './signed-in.js';
import { CSS } from './styles.js';

/**
 * htmx's settings (read from `<meta name="htmx-config">`): no eval (the CSP forbids it), no injected
 * indicator styles (nor inline styles), only our own origin, and a 304 of the conditional poll swaps
 * nothing (a 204 neither; errors do not swap either, they mark the page disconnected).
 */
export const HTMX_CONFIG = JSON.stringify({
  allowEval: false,
  allowScriptTags: false,
  includeIndicatorStyles: false,
  selfRequestsOnly: true,
  historyCacheSize: 0,
  responseHandling: [
    { code: '204', swap: false },
    { code: '304', swap: false },
    { code: '[23]..', swap: true },
    { code: '[45]..', swap: false, error: true },
  ],
});

/** How a page updates itself: server-sent events, a conditional poll, or not at all. */
export type LiveMode = 'sse' | 'poll';

export interface LayoutProps {
  title: string;
  /**
   * a page for a signed-in browser: the header shows who (the `ViewerContext` the page's route provides,
   * lib/http/routes/pages/board-html.tsx), the admin pages' links to an admin, and sign-out
   */
  signedIn?: boolean;
  /** load htmx, its SSE extension and our script, and show the live indicator */
  live?: LiveMode | undefined;
  /**
   * the id of the page's `<main>`, the skip link's target (default `content`); with `ownMain` the page
   * renders that `<main>` itself (the overview: its filters sit before it), else the layout wraps the
   * children in one
   */
  mainId?: string;
  ownMain?: boolean;
  /**
   * go on to this address at once (`<meta http-equiv="refresh">`): how a board form reaches another
   * origin (the provider's sign-in or sign-out) without loosening the CSP's `form-action 'self'`, which
   * also binds the redirects of a form's answer. The page shows a link to it too.
   */
  refreshTo?: string;
  /**
   * the header's search box (issue 30, ./search-box.tsx), drawn on every signed-in page: the query to
   * keep in it (the results page), and whether it was refused (the box then points at the message)
   */
  search?: { q: string; invalid?: boolean };
  children: Child;
}

/** The document around a board page (see the module's doc). */
export function Layout(props: LayoutProps) {
  // Without the scripts (a deployment that left them out) the page is served as a static one.
  const live = props.live && liveAssetsPresent() ? props.live : undefined;
  // Who is signed in, when the page's route provided it (./signed-in.tsx).
  const viewer = useContext(ViewerContext);
  const signedIn = props.signedIn ? viewer : null;
  return (
    <html lang="en">
      <head>
        <meta charset="utf-8" />
        <meta name="viewport" content="width=device-width, initial-scale=1" />
        <meta name="color-scheme" content="light dark" />
        <title>{props.title}</title>
        {/* Our constant stylesheet, not escaped: an escaped quote would void its attribute selectors. */}
        <style>{raw(CSS + SEARCH_CSS)}</style>
        {props.refreshTo ? <meta http-equiv="refresh" content={`0;url=${props.refreshTo}`} /> : null}
        {live ? (
          <>
            <meta name="htmx-config" content={HTMX_CONFIG} />
            <script src={assetHref('htmx.min.js') ?? ''} defer />
            {live === 'sse' ? <script src={assetHref('sse.min.js') ?? ''} defer /> : null}
            <script src={assetHref('board.js') ?? ''} defer />
          </>
        ) : null}
      </head>
      <body>
        <a class="skip" href={`#${props.mainId ?? 'content'}`}>
          Skip to the main content
        </a>
        <header>
          <h1>
            <a href="/">hansard</a> <span class="muted">· {props.title}</span>
          </h1>
          <div class="tools">
            {live ? (
              // Shown by our script once it knows; without JavaScript the page is a static one.
              <p id="live-status" class="live" role="status" aria-live="polite" data-live={live} hidden>
                Connecting for live updates
              </p>
            ) : null}
            {signedIn ? <SignOutForm csrf={signedIn.csrf} /> : null}
          </div>
          {/* After the title's line (title, sign-out): on a phone it takes a line of its own below. */}
          {signedIn ? <SearchBox q={props.search?.q} invalid={props.search?.invalid} /> : null}
          {signedIn ? <SignedInBar viewer={signedIn} /> : null}
        </header>
        {props.ownMain ? props.children : <main id={props.mainId ?? 'content'}>{props.children}</main>}
        <footer class="muted">
          <p>
            hansard {HANSARD_VERSION}. States are agents' own reports, not proof; the transcript is the
            record.
          </p>
          <p>
            <a href="/v1/docs">API reference</a>
          </p>
        </footer>
      </body>
    </html>
  );
}

/** A state as a coloured badge, with its age when known: `blocked 2 h`. */
export function StateBadge({ state, age }: { state: string | null; age?: string | null }) {
  const word = state ? state.replace('_', ' ') : 'no report';
  return <span class={`state ${state ?? 'none'}`}>{age ? `${word} ${age}` : word}</span>;
}
