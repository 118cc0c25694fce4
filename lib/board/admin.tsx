/**
 * The board's admin pages of team sign-in (issue 29 item 4), beside the alerts page (./alerts.tsx): the
 * audit list (`GET /audit`: who did what, to what, when, from where, newest first, a page at a time) and
 * the tenant's tokens (`GET /tokens`, a "Revoke" button on each live one), and the page a viewer who is no
 * admin gets instead. hono/jsx escapes HTML; what people and tokens wrote (labels, emails, details) also
 * goes through `escapeControl` (issue 8.4).
 */
import { AUDIT_RETENTION_DAYS, type AuditEntryView } from '../contract/sign-in.js';
import { escapeControl } from '../log/format/escape.js';
import type { TokenView } from '../service/tokens/schemas.js';
import { When } from './components.js';
import { Layout } from './layout.js';

/** What an admin-only page is, for its refusal: `the audit list`, `the tokens page`. */
export type AdminPageName = 'the audit list' | 'the tokens page' | 'the alerts page';

/**
 * An admin page for a signed-in viewer who is no admin (403): a person whose role is not admin, or a
 * browser signed in with a token without the `admin` scope or bound to one session. Says what to ask for.
 * @param person the signed-in person's role, or null for a token sign-in
 * @param has the token's scopes (a token sign-in)
 */
export function AdminOnlyPage({
  what,
  next,
  person,
  has,
  bound,
}: {
  what: AdminPageName;
  /** the page's path, to sign in again and come back */
  next: string;
  person: { role: string } | null;
  has: readonly string[];
  bound: boolean;
}) {
  return (
    <Layout title={`${what.replace(/^the /, '')}: admins only`} signedIn>
      <p class="error">{what.replace(/^t/, 'T')} is for the admins of this tenant.</p>
      {person ? (
        <p>
          You are signed in with the role <strong>{person.role}</strong>. Ask an admin of this tenant for the
          admin role (<code>hansard people role EMAIL admin</code>, or a group the tenant maps to admin).
        </p>
      ) : (
        <p>
          This browser is signed in with a token that has {has.length ? has.join(', ') : 'no scopes'}
          {bound ? ', bound to one session' : ''}. Ask an admin of this tenant for a board sign-in token with
          the <code>admin</code> scope, made with{' '}
          <code>hansard token create --scopes board,admin --label "board admin"</code>, then sign in with it
          at <a href={`/login?next=${encodeURIComponent(next)}`}>sign in</a>.
        </p>
      )}
      <p>
        Back to the <a href="/">board</a>.
      </p>
    </Layout>
  );
}

/** Who did it, as the audit list shows it: a person's email, or `token tk_…`. */
function Actor({ a }: { a: AuditEntryView['actor'] }) {
  return a.kind === 'person' ? (
    <span data-actor="person">{escapeControl(a.email)}</span>
  ) : (
    <span data-actor="token">
      token <code>{a.token_id}</code>
    </span>
  );
}

/**
 * `GET /audit`: the tenant's audit entries newest first (who, what, target, when, via, detail), `next`
 * the link to the page after (null: the last page). `first`: this is the first page.
 */
export function AuditPage({
  entries,
  next,
  first,
  now,
}: {
  entries: readonly AuditEntryView[];
  next: string | null;
  first: boolean;
  now: string;
}) {
  return (
    <Layout title="audit" signedIn>
      <p class="muted">
        What people and tokens did on this tenant (tokens, alerts, sign-in settings, people), newest first;
        kept {AUDIT_RETENTION_DAYS} days. <code>GET /v1/audit-log</code> lists the same for a script.
      </p>
      {entries.length === 0 ? (
        <p class="empty">{first ? 'Nothing recorded yet.' : 'No more entries.'}</p>
      ) : (
        <table class="audit">
          <thead>
            <tr>
              <th scope="col">When</th>
              <th scope="col">Who</th>
              <th scope="col">What</th>
              <th scope="col">Target</th>
              <th scope="col">Via</th>
              <th scope="col">Detail</th>
            </tr>
          </thead>
          <tbody>
            {entries.map((e) => (
              <tr data-id={e.id} data-action={e.action}>
                <td data-label="When">
                  <When iso={e.at} now={now} />
                </td>
                <td data-label="Who">
                  <Actor a={e.actor} />
                </td>
                <td data-label="What">
                  <code class="action">{e.action}</code>
                </td>
                <td data-label="Target">
                  {e.target ? <code>{escapeControl(e.target)}</code> : 'the tenant'}
                </td>
                <td data-label="Via">{e.via}</td>
                <td data-label="Detail">{e.detail ? escapeControl(e.detail) : ''}</td>
              </tr>
            ))}
          </tbody>
        </table>
      )}
      {first && !next ? null : (
        <nav class="pages" aria-label="audit pages">
          {first ? null : <a href="/audit">Newest</a>}
          {next ? (
            <a href={`/audit?cursor=${encodeURIComponent(next)}`} rel="next">
              Older
            </a>
          ) : null}
        </nav>
      )}
    </Layout>
  );
}

/** A token's state at `now`: revoked, expired or live. */
export function tokenState(t: TokenView, now: string): 'live' | 'revoked' | 'expired' {
  if (t.revoked_at !== null) return 'revoked';
  if (t.expires_at !== null && Date.parse(t.expires_at) <= Date.parse(now)) return 'expired';
  return 'live';
}

/** What a "Revoke" redirect says on the tokens page (`?revoked=`, `?gone=`). */
export type TokensFlash = { kind: 'revoked'; id: string } | { kind: 'gone' } | null;

/**
 * `GET /tokens`: the tenant's tokens, live ones first then newest first (id, label, scopes, bound
 * session, created, last used, expiry, state), a "Revoke" button on each live one. `self` is the id of the
 * token this browser signed in with (revoking it signs this browser out), null for a person.
 */
export function TokensPage({
  tokens,
  self,
  csrf,
  flash,
  now,
}: {
  tokens: readonly TokenView[];
  self: string | null;
  csrf: string;
  flash: TokensFlash;
  now: string;
}) {
  const rank = { live: 0, expired: 1, revoked: 2 } as const;
  const rows = tokens
    .map((t) => ({ t, state: tokenState(t, now) }))
    .sort((a, b) => rank[a.state] - rank[b.state] || b.t.created_at.localeCompare(a.t.created_at));
  return (
    <Layout title="tokens" signedIn>
      {flash?.kind === 'revoked' ? (
        <p class="flash" role="status">
          Token <code>{flash.id}</code> was revoked, and with it every token minted from it: they no longer
          work. The audit list names who did it.
        </p>
      ) : flash?.kind === 'gone' ? (
        <p class="flash error" role="status">
          That token no longer exists: nothing was revoked.
        </p>
      ) : null}
      <p class="muted">
        This tenant's tokens, never their secrets. Make one with <code>hansard token create</code>; a revoked
        token stops working at once, with every token minted from it.
      </p>
      {rows.length === 0 ? (
        <p class="empty">No tokens.</p>
      ) : (
        <table class="tokens">
          <thead>
            <tr>
              <th scope="col">Token</th>
              <th scope="col">Scopes</th>
              <th scope="col">Created</th>
              <th scope="col">Last used</th>
              <th scope="col">Expires</th>
              <th scope="col">State</th>
            </tr>
          </thead>
          <tbody>
            {rows.map(({ t, state }) => (
              <tr data-token={t.id} data-state={state}>
                <td data-label="Token">
                  <code>{t.id}</code>
                  {t.label ? <> {escapeControl(t.label)}</> : null}
                  {t.id === self ? <strong> (this browser's sign-in)</strong> : null}
                  {t.session ? (
                    <div class="muted">
                      bound to session <a href={`/sessions/${t.session}`}>{t.session}</a>
                    </div>
                  ) : null}
                  {t.parent ? (
                    <div class="muted">
                      minted by <code>{t.parent}</code>
                    </div>
                  ) : null}
                </td>
                <td data-label="Scopes">{t.scopes.join(', ') || 'none'}</td>
                <td data-label="Created">
                  <When iso={t.created_at} now={now} />
                </td>
                <td data-label="Last used">
                  {t.last_used_at ? <When iso={t.last_used_at} now={now} /> : 'never'}
                </td>
                <td data-label="Expires">{t.expires_at ? <When iso={t.expires_at} now={now} /> : 'never'}</td>
                <td data-label="State">
                  {state === 'live' ? (
                    <form class="inline" method="post" action={`/tokens/${t.id}/revoke`}>
                      <input type="hidden" name="csrf" value={csrf} />
                      <button type="submit" aria-label={`Revoke ${t.id}`}>
                        Revoke
                      </button>
                    </form>
                  ) : state === 'revoked' && t.revoked_at ? (
                    <>
                      revoked <When iso={t.revoked_at} now={now} />
                    </>
                  ) : (
                    state
                  )}
                </td>
              </tr>
            ))}
          </tbody>
        </table>
      )}
    </Layout>
  );
}
