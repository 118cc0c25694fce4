/**
 * A page that goes on to another address at once (issue 29): the provider's sign-in after the board's
 * organisation form, the provider's sign-out after the board's sign-out. A board form's answer may not
 * redirect to another origin (the CSP's `form-action 'self'` binds redirects too), so the answer is this
 * page, whose `<meta http-equiv="refresh">` starts a navigation of its own; the link is there for a
 * browser that does not follow it.
 */
import { escapeControl } from '../log/format/escape.js';
import { Layout } from './layout.js';

/**
 * @param title the page's title
 * @param message one plain sentence: what happened and where the browser goes now
 * @param href where to go (the provider's URL, or a board path)
 * @param linkText the link's text
 */
export function ContinuePage({
  title,
  message,
  href,
  linkText,
}: {
  title: string;
  message: string;
  href: string;
  linkText: string;
}) {
  return (
    <Layout title={title} refreshTo={href}>
      <p role="status">{escapeControl(message)}</p>
      <p>
        <a href={href}>{escapeControl(linkText)}</a>
      </p>
    </Layout>
  );
}

/**
 * A page that asks before going on (issue 29: login CSRF): another site sent the browser to start a
 * sign-in, which must not happen without the person choosing it. The link is this board's own, so
 * following it is a same-origin navigation that goes on.
 * @param message one plain sentence: what following the link does
 */
export function ConfirmPage({
  title,
  message,
  href,
  linkText,
}: {
  title: string;
  message: string;
  href: string;
  linkText: string;
}) {
  return (
    <Layout title={title}>
      <p>{escapeControl(message)}</p>
      <p>
        <a class="button" href={href}>
          {escapeControl(linkText)}
        </a>{' '}
        or <a href="/login">go to the sign-in page</a>.
      </p>
    </Layout>
  );
}
