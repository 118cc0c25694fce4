/**
 * The board's server-rendered pages (hono/jsx) other than the overview (./overview.tsx) and a session's
 * timeline (./timeline.tsx): sign-in, and the pages that say why something cannot be shown. They share
 * the frame of ./layout.tsx. hono/jsx escapes HTML; what writers and agents wrote also goes through
 * `escapeControl`, so a newline cannot forge a line and a bidi override cannot reorder the page (issue 8.4).
 */
import { escapeControl } from '../log/format/escape.js';
import { Layout } from './layout.js';

/** A board link that cannot be followed (a bad `?page=`, `?limit=` or filter). */
export function BadPageLinkPage({ message }: { message: string }) {
  return (
    <Layout title="not a page of the board" signedIn>
      <p class="error">{message}</p>
      <p>
        Go to the <a href="/">first page</a> of the board.
      </p>
    </Layout>
  );
}

/**
 * Sign-in: the token form, as before (paste a token; the link `hansard serve` prints does this for you: a
 * local user has no provider), and "Sign in with your organisation" (issue 29), a tenant's name submitted
 * to `GET /login/oidc`, whose OpenID provider signs the person in. `next`, a checked path of the
 * board (`safeNext`), goes with both forms so that signing in returns to the page asked for.
 * @param signedOut the browser was just signed out: the page says so
 * @param ended the person's session ended (it ran out, or an admin ended it): the page says to sign in again
 * @param tenant the tenant name to prefill (the last one tried, or the one a link named: `/login?tenant=`)
 */
export function LoginPage({
  error,
  next,
  signedOut,
  ended,
  tenant,
}: {
  error?: string;
  next?: string;
  signedOut?: boolean;
  ended?: boolean;
  tenant?: string;
}) {
  return (
    <Layout title="sign in">
      {ended ? (
        <p class="flash" role="status">
          Your session ended: sign in again.
        </p>
      ) : signedOut ? (
        <p class="flash" role="status">
          You are signed out.
        </p>
      ) : null}
      {error ? <p class="error">{error}</p> : null}
      <h2 id="sign-in-token">Sign in with a token</h2>
      <p>
        Open the board link that <code>hansard serve</code> printed, or paste a token with the{' '}
        <code>board</code> scope (create one with <code>hansard token create --scopes board</code>).
      </p>
      <form class="token-sign-in" method="post" action="/login" aria-labelledby="sign-in-token">
        {next ? <input type="hidden" name="next" value={next} /> : null}
        <label>
          Token <input name="token" type="password" autocomplete="off" size={50} required />
        </label>{' '}
        <button type="submit">Sign in</button>
      </form>
      <h2 id="sign-in-org">Sign in with your organisation</h2>
      <form class="oidc" method="get" action="/login/oidc" aria-labelledby="sign-in-org">
        {next ? <input type="hidden" name="next" value={next} /> : null}
        <label>
          Team (tenant) name{' '}
          <input
            name="tenant"
            value={tenant === undefined ? undefined : escapeControl(tenant)}
            autocomplete="organization"
            aria-describedby="tenant-hint"
            size={30}
            maxlength={63}
            required
          />
        </label>{' '}
        <button type="submit">Continue</button>
      </form>
      <p class="muted" id="tenant-hint">
        Your team's tenant name on this hansard (ask whoever runs hansard for your team); you then sign in at
        your organisation's provider.
      </p>
    </Layout>
  );
}

/**
 * Asked instead of signing in when a board link arrives from another site or from a client that does
 * not say where it came from (lib/http/routes/pages/sign-in.tsx): the tenant it signs in to, and a
 * button that posts the token to `/login`.
 */
export function ConfirmSignInPage({ tenant, token, next }: { tenant: string; token: string; next?: string }) {
  return (
    <Layout title="sign in">
      <p>
        This link signs this browser in to the board of tenant <strong>{escapeControl(tenant)}</strong>.
      </p>
      <p class="muted">
        Continue only if you opened it yourself (it is the link <code>hansard serve</code> printed, or one you
        were given to sign in with). Another site may have sent you here to sign you in to a board of its
        choosing.
      </p>
      <form method="post" action="/login">
        <input type="hidden" name="token" value={token} />
        {next ? <input type="hidden" name="next" value={next} /> : null}
        <button type="submit">Sign in to {escapeControl(tenant)}</button>
      </form>
    </Layout>
  );
}

/**
 * A session page the server will not build now (429): the token already runs `limit` whole-session reads
 * at once (replays, downloads, verifies, inspects, these pages; docs/operations.md "Replay caps").
 */
export function BusyPage({ limit, retryAfterSeconds }: { limit: number; retryAfterSeconds: number }) {
  return (
    <Layout title="busy" signedIn>
      <p class="error">
        This token already reads {limit} whole sessions at once (replays, downloads, verifies or session
        pages), the most it may.
      </p>
      <p>
        Reload this page in {retryAfterSeconds} seconds, once one of them has finished, or go back to the{' '}
        <a href="/">board</a>.
      </p>
    </Layout>
  );
}

/** A page for a missing session (the same for another tenant's). */
export function NotFoundPage() {
  return (
    <Layout title="not found" signedIn>
      <p>
        There is no such session. Back to the <a href="/">board</a>.
      </p>
    </Layout>
  );
}
