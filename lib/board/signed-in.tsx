/**
 * Who is signed in, on every board page (issue 29 item 4): the header's second line naming the person
 * (their name or email, and role) or saying the browser signed in with a link token, the person's "Mine"
 * link to their sessions (`/people/{user_id}` of the ids linked to them) and the admin pages' links for an
 * admin; and the "Sign out" form with its form token, on the title's line.
 *
 * Pages get the viewer through `ViewerContext` (hono/jsx context), which the page routes provide around
 * every page they render (`boardHtml` in lib/http/routes/pages/board-html.tsx): so no page component
 * passes it down, and a page rendered without it (a refusal before the sign-in was read) shows no
 * signed-in header rather than a form that cannot work.
 */
import { createContext } from 'hono/jsx';
import type { Role } from '../contract/sign-in.js';
import { escapeControl } from '../log/format/escape.js';
import { personHref } from './components.js';

/** The browser a page is drawn for, as its header shows it. */
export type BoardViewer =
  | {
      kind: 'person';
      /** lower case */
      email: string;
      /** as the provider gave it, or null */
      name: string | null;
      role: Role;
      /** the person ids linked to them (`hansard people link`), in the order stored */
      user_ids: readonly string[];
      /** may open the admin pages (`/alerts`, `/audit`, `/tokens`) */
      admin: boolean;
      /** the form token of this sign-in (lib/http/form-token.ts): every board form carries it as `csrf` */
      csrf: string;
    }
  | {
      /** signed in with a link token (the cookie holds a token), as a local user is */
      kind: 'token';
      admin: boolean;
      csrf: string;
    };

/** The viewer of the page being rendered; null: not known (the header then shows no sign-in). */
export const ViewerContext = createContext<BoardViewer | null>(null);

/** The admin pages, as the header links them (admins only: the pages answer others 403). */
export const ADMIN_PAGES: readonly { href: string; label: string }[] = [
  { href: '/alerts', label: 'Alerts' },
  { href: '/audit', label: 'Audit' },
  { href: '/tokens', label: 'Tokens' },
];

/** The "Sign out" form: `POST /logout` with the sign-in's form token. */
export function SignOutForm({ csrf }: { csrf: string }) {
  return (
    <form class="inline sign-out" method="post" action="/logout">
      <input type="hidden" name="csrf" value={csrf} />
      <button type="submit">Sign out</button>
    </form>
  );
}

/**
 * A person's link to their own sessions: "Mine" for one linked id, a short list for several, and for
 * none the command an admin runs to link them, saying what its USER_ID is (a viewer does not know the
 * word; nothing is linked, as there is nothing of theirs to link to yet).
 */
function MineLinks({ email, userIds }: { email: string; userIds: readonly string[] }) {
  if (userIds.length === 0) {
    return (
      <p class="mine-hint muted">
        No sessions are linked to you yet; ask an admin to link you:{' '}
        <code>hansard people link USER_ID {escapeControl(email)}</code>, where USER_ID is the name your
        sessions record you as (the user_id on your sessions' pages, usually your login name).
      </p>
    );
  }
  if (userIds.length === 1) {
    return (
      <a class="mine" href={personHref(userIds[0]!)}>
        Mine
      </a>
    );
  }
  return (
    <span class="mine">
      Mine:{' '}
      <ul class="mine-ids">
        {userIds.map((id) => (
          <li>
            <a href={personHref(id)}>{escapeControl(id)}</a>
          </li>
        ))}
      </ul>
    </span>
  );
}

/**
 * The header's second line: who is signed in, their "Mine" link(s) and, for an admin, the admin pages.
 * (The "Sign out" form stays on the title's line: `SignOutForm`.)
 */
export function SignedInBar({ viewer }: { viewer: BoardViewer }) {
  return (
    <div class="signed-in">
      {viewer.kind === 'person' ? (
        <>
          <p class="who-am-i">
            Signed in as{' '}
            <strong title={viewer.name ? escapeControl(viewer.email) : undefined}>
              {escapeControl(viewer.name ?? viewer.email)}
            </strong>{' '}
            <span class="role" data-role={viewer.role}>
              ({viewer.role})
            </span>
          </p>
          <MineLinks email={viewer.email} userIds={viewer.user_ids} />
        </>
      ) : (
        <p class="who-am-i muted">Signed in with a link token</p>
      )}
      {viewer.admin ? (
        <nav class="board-nav" aria-label="admin pages">
          {ADMIN_PAGES.map((p) => (
            <a href={p.href}>{p.label}</a>
          ))}
        </nav>
      ) : null}
    </div>
  );
}
