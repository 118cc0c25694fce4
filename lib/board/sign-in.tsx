/**
 * The pages of team sign-in's refusals and failures (issue 29 items 2 and 3), rendered by the OIDC routes
 * (lib/http/routes/pages/oidc.tsx): a person the tenant does not let in is told why and whom to ask; a
 * sign-in that did not finish (an expired or replayed flow, a provider that is down) says to start again.
 * Neither page is signed in: the header shows no one. hono/jsx escapes HTML; what the provider or an admin
 * wrote (an email, a group name, a reason) also goes through `escapeControl` (issue 8.4).
 */
import { escapeControl } from '../log/format/escape.js';
import { Layout } from './layout.js';

/** Whether an entry of `ask` is an email address (else a group name). */
const isEmail = (s: string) => /^[^\s@]+@[^\s@]+$/.test(s);

/**
 * Whom a refused person may ask: each admin's email (a `mailto:` link) and each group that would give
 * them a role; none: whoever runs hansard for their team.
 */
function WhomToAsk({ ask }: { ask: readonly string[] }) {
  if (ask.length === 0) {
    return <p>Ask whoever runs hansard for your team to give you a role on this board.</p>;
  }
  return (
    <>
      <p>Ask to be let in:</p>
      <ul class="ask">
        {ask.map((a) =>
          isEmail(a) ? (
            <li>
              <a href={`mailto:${encodeURIComponent(a).replace('%40', '@')}`}>{escapeControl(a)}</a>, an admin
              of this board
            </li>
          ) : (
            <li>
              whoever manages the group <code>{escapeControl(a)}</code>, which gives a role on this board
            </li>
          ),
        )}
      </ul>
    </>
  );
}

/**
 * `GET /login/oidc/callback` for a person the tenant refuses (403): signed in at their provider, but with
 * no role here (no group mapped and no default role, an admin set their role to `none`, or their email's
 * domain is not one the tenant allows).
 * @param tenant the tenant they tried
 * @param email the email their provider gave, or null when it gave none
 * @param reason why, one plain sentence (the sign-in service's wording)
 * @param ask admin emails and/or group names to ask (may be empty)
 */
export function SignInRefusedPage({
  tenant,
  email,
  reason,
  ask,
}: {
  tenant: string;
  email: string | null;
  reason: string;
  ask: readonly string[];
}) {
  return (
    <Layout title="sign-in refused">
      <p class="error" role="alert">
        {email ? (
          <>
            <strong>{escapeControl(email)}</strong> cannot open the board of{' '}
            <strong>{escapeControl(tenant)}</strong>:{' '}
          </>
        ) : (
          <>
            You cannot open the board of <strong>{escapeControl(tenant)}</strong>:{' '}
          </>
        )}
        {escapeControl(reason)}
      </p>
      <WhomToAsk ask={ask} />
      <p>
        Once they have, or to use another account, <a href="/login">sign in again</a>. (Your provider may
        still have you signed in: sign out there to choose another account.)
      </p>
    </Layout>
  );
}

/**
 * A sign-in that did not finish (the OIDC routes choose the status): the sign-in took too long or was
 * already used, the provider answered an error or could not be reached. Says what happened and to start
 * again.
 * @param message what happened, one plain sentence
 */
export function SignInErrorPage({ message }: { message: string }) {
  return (
    <Layout title="sign-in did not finish">
      <p class="error" role="alert">
        {escapeControl(message)}
      </p>
      <p>
        Nothing was signed in. <a href="/login">Start again</a> from the sign-in page; if it keeps failing,
        tell whoever runs hansard for your team what this page says.
      </p>
    </Layout>
  );
}
