/**
 * The board's signed-in header and sign-in pages as components (issue 29 items 2 and 4; lib/board/
 * signed-in.tsx, sign-in.tsx, pages.tsx): who is signed in (a person's name or email and role, or a link
 * token), a person's "Mine" link for one linked id, a list for several and the command to ask for with
 * none, the admin pages' links for an admin only, the sign-out form carrying the form token; a page
 * rendered without a viewer shows no sign-in; the refusal page says why and whom to ask, the error page
 * to start again, the sign-in page has the organisation form beside the token form. What the provider
 * or an admin wrote is shown as text. The header over HTTP and in Chromium: sign-in-header.browser.test.ts.
 */
import type { Child } from 'hono/jsx';
import { describe, expect, it } from 'vitest';
import { BadPageLinkPage, LoginPage } from '../../lib/board/pages.js';
import { SignInErrorPage, SignInRefusedPage } from '../../lib/board/sign-in.js';
import { type BoardViewer, ViewerContext } from '../../lib/board/signed-in.js';

const CSRF = 'f'.repeat(43);
const person = (over: Partial<Extract<BoardViewer, { kind: 'person' }>> = {}): BoardViewer => ({
  kind: 'person',
  email: 'priya@example.com',
  name: 'Priya Shah',
  role: 'member',
  user_ids: ['priya'],
  admin: false,
  csrf: CSRF,
  ...over,
});

/** A signed-in page (`BadPageLinkPage` has the layout's header) as `viewer` sees it. */
function pageFor(viewer: BoardViewer | null, page: Child = <BadPageLinkPage message="x" />): string {
  return String(<ViewerContext.Provider value={viewer}>{page}</ViewerContext.Provider>);
}

/** The header's HTML. */
const header = (html: string) => html.slice(html.indexOf('<header>'), html.indexOf('</header>'));

describe('the signed-in header', () => {
  it('names a person by name with their role, links their one id as "Mine", and signs out with the form token', () => {
    const h = header(pageFor(person()));
    expect(h).toContain('Signed in as <strong title="priya@example.com">Priya Shah</strong>');
    expect(h).toContain('<span class="role" data-role="member">(member)</span>');
    expect(h).toContain('<a class="mine" href="/people/priya">Mine</a>');
    expect(h).toContain(
      `<form class="inline sign-out" method="post" action="/logout"><input type="hidden" name="csrf" value="${CSRF}"/><button type="submit">Sign out</button></form>`,
    );
    // a member is no admin: no links to the admin pages
    for (const href of ['/alerts', '/audit', '/tokens']) expect(h).not.toContain(`href="${href}"`);
  });

  it('names a person without a name by their email', () => {
    const h = header(pageFor(person({ name: null })));
    expect(h).toContain('Signed in as <strong>priya@example.com</strong>');
  });

  it('lists several linked ids, each a link to its page (the id URL-encoded)', () => {
    const h = header(pageFor(person({ user_ids: ['priya', 'p shah/ci'] })));
    expect(h).toContain('Mine: <ul class="mine-ids">');
    expect(h).toContain('<a href="/people/priya">priya</a>');
    expect(h).toContain('<a href="/people/p%20shah%2Fci">p shah/ci</a>');
    expect(h).not.toContain('>Mine</a>');
  });

  it('with no linked id, says what to ask an admin to run, with their email', () => {
    const h = header(pageFor(person({ user_ids: [] })));
    expect(h).toContain('ask an admin to link you:');
    expect(h).toContain('<code>hansard people link USER_ID priya@example.com</code>');
    // a viewer does not know what a USER_ID is: the hint says, and links nothing
    expect(h).toContain(
      'where USER_ID is the name your sessions record you as (the user_id on your sessions&#39; pages, usually your login name).',
    );
    expect(h.slice(h.indexOf('mine-hint'))).not.toMatch(/<a /);
    expect(h).not.toContain('href="/people/');
  });

  it('links an admin to the alerts, audit and tokens pages', () => {
    const h = header(pageFor(person({ role: 'admin', admin: true })));
    expect(h).toContain(
      '<nav class="board-nav" aria-label="admin pages"><a href="/alerts">Alerts</a><a href="/audit">Audit</a><a href="/tokens">Tokens</a></nav>',
    );
  });

  it('says a link-token browser signed in with one, with the same sign-out form', () => {
    const h = header(pageFor({ kind: 'token', admin: false, csrf: CSRF }));
    expect(h).toContain('Signed in with a link token');
    expect(h).toContain(`name="csrf" value="${CSRF}"`);
    expect(h).not.toContain('board-nav');
  });

  it('shows what a provider gave as text: markup escaped, bidi and control characters as escapes', () => {
    const h = header(
      pageFor(person({ name: '<img src=x onerror=alert(1)>\u202eevil', user_ids: ['<b>x</b>', 'y'] })),
    );
    expect(h).not.toContain('<img');
    expect(h).not.toContain('\u202e');
    expect(h).toContain('&lt;img src=x onerror=alert(1)&gt;\\u202eevil');
    expect(h).toContain('<a href="/people/%3Cb%3Ex%3C%2Fb%3E">&lt;b&gt;x&lt;/b&gt;</a>');
  });

  it('shows no sign-in on a page rendered without a viewer, nor on the sign-in page', () => {
    for (const html of [pageFor(null), pageFor(person(), <LoginPage />)]) {
      expect(html).not.toContain('action="/logout"');
      expect(html).not.toContain('Signed in');
    }
  });
});

describe('the sign-in page', () => {
  it('has the organisation form (GET /login/oidc, the tenant prefilled, `next` kept) and the token form', () => {
    const html = pageFor(null, <LoginPage next="/sessions/s_1?person=a%20b" tenant="acme" signedOut />);
    const start = html.indexOf('<form class="oidc"');
    const oidc = html.slice(start, html.indexOf('</form>', start) + 7);
    expect(oidc).toContain('method="get" action="/login/oidc"');
    expect(oidc).toContain('<input type="hidden" name="next" value="/sessions/s_1?person=a%20b"/>');
    expect(oidc).toMatch(/<input name="tenant" value="acme"[^>]* required=""\/>/);
    const tokenStart = html.indexOf('<form class="token-sign-in"');
    const token = html.slice(tokenStart, html.indexOf('</form>', tokenStart) + 7);
    // the token form first, as before; the organisation's second
    expect(tokenStart).toBeLessThan(start);
    expect(token).toContain('method="post" action="/login"');
    expect(token).toContain('<input type="hidden" name="next" value="/sessions/s_1?person=a%20b"/>');
    expect(token).toContain('name="token" type="password"');
    expect(html).toContain('You are signed out.');
  });

  it('labels the tenant field "Team (tenant) name", its hint saying the same, and no "board name"', () => {
    const html = pageFor(null, <LoginPage />);
    expect(html).toMatch(
      /<label>Team \(tenant\) name <input name="tenant"[^>]* aria-describedby="tenant-hint"/,
    );
    expect(html).toContain('<p class="muted" id="tenant-hint">Your team&#39;s tenant name on this hansard');
    expect(html).not.toContain('board name');
  });

  it('says a session ended (`ended`) apart from a sign-out, the tenant still prefilled', () => {
    const html = pageFor(null, <LoginPage ended tenant="acme" next="/tokens" />);
    expect(html).toContain('<p class="flash" role="status">Your session ended: sign in again.</p>');
    expect(html).not.toContain('You are signed out.');
    expect(html).toMatch(/<input name="tenant" value="acme"/);
  });

  it('leaves the tenant empty and says nothing of signing out by default', () => {
    const html = pageFor(null, <LoginPage />);
    expect(html).toMatch(/<input name="tenant" autocomplete="organization"/);
    expect(html).not.toContain('name="next"');
    expect(html).not.toContain('signed out');
    expect(html).not.toContain('session ended');
  });
});

describe('the refusal and error pages', () => {
  it('says who was refused where and why, and links each admin email and names each group to ask', () => {
    const html = pageFor(
      null,
      <SignInRefusedPage
        tenant="acme"
        email="sam@example.com"
        reason="No group of yours gives a role on this board, and it has no default role."
        ask={['lead@example.com', 'eng-leads']}
      />,
    );
    expect(html).toContain('<title>sign-in refused</title>');
    expect(html).toContain(
      '<strong>sam@example.com</strong> cannot open the board of <strong>acme</strong>: No group of yours gives a role on this board, and it has no default role.',
    );
    expect(html).toContain('Ask one of these to give you a role on this board:');
    expect(html).toContain('<a href="mailto:lead@example.com">lead@example.com</a>, an admin');
    // a group is named bare by the service: the page says who in it to ask, once
    expect(html).toContain('anyone in the group <code>eng-leads</code>');
    expect(html).not.toContain('whoever manages');
    expect(html).not.toMatch(/anyone in (the )?group.*anyone in/);
    // signing in again goes back to the same tenant's form, prefilled
    expect(html).toContain('<a href="/login?tenant=acme">sign in again</a>');
    expect(html).not.toContain('action="/logout"');
  });

  it('words whom to ask by why: a domain not let in (no one named), a person removed (admins only)', () => {
    const domain = pageFor(
      null,
      <SignInRefusedPage
        tenant="acme"
        email="sam@gmail.com"
        reason="sam@gmail.com is not at a domain tenant acme lets in (acme.test)."
        why="domain"
        ask={[]}
      />,
    );
    expect(domain).toContain(
      'To come in, sign in with an account at a domain this board lets in, or ask whoever runs hansard for your team to let your domain in.',
    );
    expect(domain).not.toContain('give you a role');
    const removed = pageFor(
      null,
      <SignInRefusedPage
        tenant="acme"
        email="sam@acme.test"
        reason="An admin of tenant acme has removed sam@acme.test."
        why="removed"
        ask={['lead@acme.test', 'ops@acme.test']}
      />,
    );
    expect(removed).toContain('If that is a mistake, ask one of these to give you a role again:');
    expect(removed.match(/<li><a href="mailto:/g)).toHaveLength(2);
    expect(removed).not.toContain('anyone in the group');
    const removedNoOne = pageFor(
      null,
      <SignInRefusedPage tenant="acme" email="sam@acme.test" reason="Removed." why="removed" ask={[]} />,
    );
    expect(removedNoOne).toContain(
      'If that is a mistake, ask whoever runs hansard for your team to give you a role again.',
    );
  });

  it('with no one named, says to ask whoever runs hansard for the team; a provider without email is "You"', () => {
    const html = pageFor(null, <SignInRefusedPage tenant="acme" email={null} reason="Refused." ask={[]} />);
    expect(html).toContain('You cannot open the board of <strong>acme</strong>: Refused.');
    expect(html).toContain('Ask whoever runs hansard for your team to give you a role on this board.');
    expect(html).not.toContain('<ul class="ask">');
  });

  it('shows a reason and names as text', () => {
    const html = pageFor(
      null,
      <SignInRefusedPage
        tenant="acme"
        email="<i>@x"
        reason={'<script>x</script>\u202e'}
        ask={['<b>g</b>']}
      />,
    );
    expect(html).not.toMatch(/<script>x|<i>@|<b>g|\u202e/);
    expect(html).toContain('&lt;script&gt;x&lt;/script&gt;\\u202e');
  });

  it('says a failed sign-in signed nothing in and links to start again', () => {
    const html = pageFor(null, <SignInErrorPage message="The sign-in took too long (over 10 minutes)." />);
    expect(html).toContain('The sign-in took too long (over 10 minutes).');
    expect(html).toContain('<a href="/login">Start again</a>');
    // the sign-in page is named once (the message may name it too)
    expect(html.match(/sign-in page/g) ?? []).toHaveLength(0);
  });

  it('links "Start again" to the tenant’s prefilled form when the tenant is known', () => {
    const html = pageFor(
      null,
      <SignInErrorPage
        tenant="acme ops"
        message="The sign-in was already used: start again from the sign-in page."
      />,
    );
    expect(html).toContain('<a href="/login?tenant=acme%20ops">Start again</a>');
    expect(html.match(/sign-in page/g)).toHaveLength(1);
  });
});
