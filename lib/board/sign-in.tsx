/**
 * The pages of team sign-in's refusals and failures (issue 29 items 2 and 3), rendered by the OIDC routes
 * (lib/http/routes/pages/oidc.tsx): a person the tenant does not let in is told why and whom to ask; a
 * sign-in that did not finish (an expired or replayed flow, a provider that is down) says to start again.
 * Neither page is signed in: the header shows no one. hono/jsx escapes HTML; what the provider or an admin
 * wrote (an email, a group name, a reason) also goes through `escapeControl` (issue 8.4).
 */
import { escapeControl } from '../log/format/escape.js';
import type { Refusal } from '../service/sign-in/roles.js';
import { Layout } from './layout.js';

/** The sign-in page with the organisation form's tenant prefilled (none: the plain page). */
const loginHref = (tenant?: string) => (tenant ? `/login?tenant=${encodeURIComponent(tenant)}` : '/login');

/** Whether an entry of `ask` is an admin's email (it has an `@`); else it is a bare group name. */
const isEmail = (s: string) => s.includes('@');

/** What a refused person can do about it, by why they were refused (the sign-in service's `why`). */
const WHAT_TO_ASK: Record<Refusal, string> = {
  domain: 'To come in, sign in with an account at a domain this board lets in, or ask',
  removed: 'If that is a mistake, ask',
  unmapped: 'Ask',
};
const TO_DO: Record<Refusal, string> = {
  domain: 'to let your domain in',
  removed: 'to give you a role again',
  unmapped: 'to give you a role on this board',
};

/**
 * Whom a refused person may ask, in words that fit why they were refused: each admin's email (a
 * `mailto:` link) and each group whose members are this board's admins ("anyone in the group X"); none
 * (the service names no one, as for a domain refusal): whoever runs hansard for their team.
 * @param ask admin emails (with `@`) and bare group names, as the sign-in service gives them
 * @param why the refusal; absent: read as `unmapped` (no role given)
 */
function WhomToAsk({ ask, why = 'unmapped' }: { ask: readonly string[]; why?: Refusal | undefined }) {
  if (ask.length === 0) {
    return (
      <p>
        {WHAT_TO_ASK[why]} whoever runs hansard for your team {TO_DO[why]}.
      </p>
    );
  }
  return (
    <>
      <p>
        {WHAT_TO_ASK[why]} one of these {TO_DO[why]}:
      </p>
      <ul class="ask">
        {ask.map((a) =>
          isEmail(a) ? (
            <li>
              <a href={`mailto:${encodeURIComponent(a).replace('%40', '@')}`}>{escapeControl(a)}</a>, an admin
              of this board
            </li>
          ) : (
            <li>
              anyone in the group <code>{escapeControl(a)}</code> (its members are this board's admins)
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
 * @param why the refusal's kind, which words the advice: a domain not let in, a person removed, no role
 * @param ask admin emails (with `@`) and bare group names to ask (may be empty)
 */
export function SignInRefusedPage({
  tenant,
  email,
  reason,
  why,
  ask,
}: {
  tenant: string;
  email: string | null;
  reason: string;
  why?: Refusal | undefined;
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
      <WhomToAsk ask={ask} why={why} />
      <p>
        Once they have, or to use another account, <a href={loginHref(tenant)}>sign in again</a>. (Your
        provider may still have you signed in: sign out there to choose another account.)
      </p>
    </Layout>
  );
}

/**
 * A sign-in that did not finish (the OIDC routes choose the status): the sign-in took too long or was
 * already used, the provider answered an error or could not be reached. Says what happened and to start
 * again.
 * @param message what happened, one plain sentence
 * @param tenant the tenant the sign-in was for, when known: "Start again" prefills it
 */
export function SignInErrorPage({ message, tenant }: { message: string; tenant?: string | undefined }) {
  return (
    <Layout title="sign-in did not finish">
      <p class="error" role="alert">
        {escapeControl(message)}
      </p>
      <p>
        Nothing was signed in. <a href={loginHref(tenant)}>Start again</a>; if it keeps failing, tell whoever
        runs hansard for your team what this page says.
      </p>
    </Layout>
  );
}
