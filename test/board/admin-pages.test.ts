/**
 * The board's admin pages of issue 29 item 4 over plain HTTP on loopback (lib/http/routes/pages/audit.tsx,
 * tokens.tsx), the local stores in a real SQLite file: `GET /audit` and `GET /tokens` answer an admin's
 * sign-in (the audit list newest first, 50 a page, its "Older" link to the next), refuse a board viewer
 * with a page (403) and send a signed-out browser to sign in; the tokens page's "Revoke" form is refused
 * from another origin, without the form token, with another sign-in's, and for a viewer who is no admin,
 * and revokes nothing then; the board's own form revokes the token (the API then refuses it) and the
 * audit list names the token that did it, via the board. Every signed-in page's header carries the
 * sign-out form's token, and `POST /logout` without it is refused.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { mintToken } from '../../lib/service/index.js';
import { type BoardFixture, startBoard } from './overview-fixture.js';

let f: BoardFixture;
/** a board sign-in with the admin scope, and a second one (another form token) */
let admin = '';
let adminId = '';
let otherAdmin = '';

async function page(path: string, cookie: string | null) {
  const res = await fetch(`${f.base}${path}`, {
    redirect: 'manual',
    headers: cookie === null ? {} : { cookie: `hansard_board=${cookie}` },
  });
  return { status: res.status, location: res.headers.get('location'), text: await res.text() };
}

/** The form token `cookie`'s pages carry (the header's sign-out form). */
async function formTokenOf(cookie: string, path = '/'): Promise<string> {
  const p = await page(path, cookie);
  expect(p.status).toBe(200);
  const m = /action="\/logout"><input type="hidden" name="csrf" value="([A-Za-z0-9_-]{43})"/.exec(p.text);
  expect(m, 'a form token in the header').not.toBeNull();
  return m![1]!;
}

/** POSTs a board form to `path` with `fields` and `headers`, as a browser (or a forger) would. */
async function post(
  path: string,
  cookie: string,
  fields: Record<string, string>,
  headers: Record<string, string>,
) {
  const res = await fetch(`${f.base}${path}`, {
    method: 'POST',
    redirect: 'manual',
    headers: {
      cookie: `hansard_board=${cookie}`,
      'content-type': 'application/x-www-form-urlencoded',
      ...headers,
    },
    body: new URLSearchParams(fields).toString(),
  });
  return { status: res.status, location: res.headers.get('location'), text: await res.text() };
}

/** A fresh token of the tenant to revoke: its secret and id. */
async function victim(label: string): Promise<{ secret: string; id: string }> {
  const m = await mintToken(f.stores.state, 'local', { scopes: ['read'], label }, new Date());
  return { secret: m.token, id: m.record.id };
}

/** Whether the API still takes `secret`. */
async function works(secret: string): Promise<boolean> {
  const res = await fetch(`${f.base}/v1/tokens/self`, { headers: { authorization: `Bearer ${secret}` } });
  if (res.status !== 200 && res.status !== 401) throw new Error(`tokens/self: ${res.status}`);
  return res.status === 200;
}

beforeAll(async () => {
  f = await startBoard();
  const now = new Date();
  const a = await mintToken(
    f.stores.state,
    'local',
    { scopes: ['board', 'admin'], label: 'board admin' },
    now,
  );
  admin = a.token;
  adminId = a.record.id;
  otherAdmin = (await mintToken(f.stores.state, 'local', { scopes: ['board', 'admin'] }, now)).token;
}, 30_000);

afterAll(async () => {
  await f?.close();
});

describe('the header of every signed-in page', () => {
  it('says a link-token browser is signed in with one, and links an admin to the admin pages', async () => {
    for (const path of ['/', '/people/priya', '/agents/claude-code', '/alerts', '/audit', '/tokens']) {
      const p = await page(path, admin);
      expect(p.status, path).toBe(200);
      expect(p.text, path).toContain('Signed in with a link token');
      expect(p.text, path).toContain('<a href="/audit">Audit</a><a href="/tokens">Tokens</a>');
      expect(p.text, path).toMatch(/action="\/logout"><input type="hidden" name="csrf" value="[\w-]{43}"/);
    }
  });

  it('gives a board viewer no admin links, and the form token of its own sign-in', async () => {
    const p = await page('/', f.board);
    expect(p.text).toContain('Signed in with a link token');
    expect(p.text).not.toContain('aria-label="admin pages"');
    expect(await formTokenOf(f.board)).not.toBe(await formTokenOf(admin));
    // the same sign-in, the same token on every page
    expect(await formTokenOf(admin, '/tokens')).toBe(await formTokenOf(admin, '/'));
  });

  it('refuses POST /logout without the form token (403), the cookie kept', async () => {
    const res = await post('/logout', f.board, {}, { origin: f.base });
    expect(res.status).toBe(403);
    expect(res.location).toBeNull();
  });
});

describe('GET /login', () => {
  it('says a session ended (`?ended=1`, where an ended session is sent) with the tenant prefilled and `next` kept', async () => {
    const p = await page('/login?ended=1&tenant=local&next=%2Ftokens', null);
    expect(p.status).toBe(200);
    expect(p.text).toContain('Your session ended: sign in again.');
    expect(p.text).not.toContain('You are signed out.');
    expect(p.text).toMatch(/<input name="tenant" value="local"/);
    expect(p.text).toContain('<input type="hidden" name="next" value="/tokens"/>');
    const out = await page('/login?signed_out=1', null);
    expect(out.text).toContain('You are signed out.');
    expect(out.text).not.toContain('session ended');
  });
});

describe('GET /audit and GET /tokens', () => {
  it('answer a board viewer without the admin scope 403 with a page naming the token to ask for', async () => {
    for (const path of ['/audit', '/tokens']) {
      const p = await page(path, f.board);
      expect(p.status, path).toBe(403);
      expect(p.text).toContain('hansard token create --scopes board,admin');
      expect(p.text).toContain(`href="/login?next=${encodeURIComponent(path)}"`);
      expect(p.text).not.toContain(adminId);
    }
  });

  it('send a signed-out browser to sign in, and back after', async () => {
    for (const path of ['/audit', '/tokens']) {
      const p = await page(path, null);
      expect(p.status).toBe(302);
      expect(p.location).toBe(`/login?next=${encodeURIComponent(path)}`);
    }
  });

  it("lists the tenant's tokens with a Revoke form on each live one, and marks this browser's own", async () => {
    const v = await victim('to list');
    const p = await page('/tokens', admin);
    expect(p.status).toBe(200);
    expect(p.text).toMatch(new RegExp(`<tr data-token="${v.id}" data-state="live">`));
    expect(p.text).toContain(`action="/tokens/${v.id}/revoke"`);
    expect(p.text).toContain('to list');
    expect(p.text).toMatch(
      new RegExp(`<code>${adminId}</code> board admin<strong> \\(this browser&#39;s sign-in\\)`),
    );
    // never a secret
    expect(p.text).not.toMatch(/hns_[0-9A-Za-z]{43}/);
  });

  it('says when a live token expires ahead ("in 30 days"), not "just now"', async () => {
    const m = await mintToken(
      f.stores.state,
      'local',
      { scopes: ['read'], label: 'a month', ttl_seconds: 30 * 86_400 },
      new Date(),
    );
    const p = await page('/tokens', admin);
    const row = new RegExp(`<tr data-token="${m.record.id}" data-state="live">.*?</tr>`).exec(p.text)?.[0];
    expect(row, 'the token’s row').toBeDefined();
    expect(row).toMatch(
      /<td data-label="Expires"><time datetime="[^"]+" title="[^"]+">in 30 days<\/time><\/td>/,
    );
  });

  it('pages the audit list newest first, 50 a page, through its "Older" link', async () => {
    // 55 token.create entries through the API, labelled in order
    for (let k = 0; k < 55; k++) {
      const res = await fetch(`${f.base}/v1/tokens`, {
        method: 'POST',
        headers: { authorization: `Bearer ${f.admin}`, 'content-type': 'application/json' },
        body: JSON.stringify({ scopes: ['read'], label: `paged ${k}` }),
      });
      expect(res.status).toBe(201);
    }
    const first = await page('/audit', admin);
    expect(first.status).toBe(200);
    const rows = (html: string) => [...html.matchAll(/<tr data-id="(au_[0-9A-Z]{26})"/g)].map((m) => m[1]!);
    const ids1 = rows(first.text);
    expect(ids1).toHaveLength(50);
    // newest first: the last one made heads the list; ids are in time order
    expect(first.text.indexOf('paged 54')).toBeLessThan(first.text.indexOf('paged 53'));
    expect([...ids1].sort().reverse()).toEqual(ids1);
    expect(first.text).not.toContain('>Newest</a>');
    const older = /<a href="(\/audit\?cursor=[^"]+)" rel="next">Older<\/a>/.exec(first.text)?.[1];
    expect(older, 'an Older link').toBeDefined();
    const second = await page(older!.replaceAll('&amp;', '&'), admin);
    expect(second.status).toBe(200);
    const ids2 = rows(second.text);
    expect(ids2.length).toBeGreaterThanOrEqual(5);
    expect(ids2.some((id) => ids1.includes(id))).toBe(false);
    expect(ids2[0]! < ids1.at(-1)!).toBe(true);
    expect(second.text).toContain('<a href="/audit">Newest</a>');
  });

  it('refuses a cursor the board did not give with a page (400)', async () => {
    const p = await page('/audit?cursor=not-a-cursor', admin);
    expect(p.status).toBe(400);
    expect(p.text).toContain('That page of the audit list cannot be shown');
  });
});

describe('POST /tokens/{id}/revoke', () => {
  it('is refused from another origin, without the form token, with another sign-in’s, or for a viewer; nothing revoked', async () => {
    const v = await victim('not to revoke');
    const csrf = await formTokenOf(admin, '/tokens');
    const path = `/tokens/${v.id}/revoke`;
    const tries = [
      ['another origin', admin, { csrf }, { origin: 'https://evil.example' }],
      ['another site', admin, { csrf }, { 'sec-fetch-site': 'cross-site' }],
      ['no form token', admin, {}, { origin: f.base }],
      ['a wrong form token', admin, { csrf: 'x'.repeat(43) }, { origin: f.base }],
      ['another sign-in’s', admin, { csrf: await formTokenOf(otherAdmin) }, { origin: f.base }],
      ['a viewer', f.board, { csrf: await formTokenOf(f.board) }, { origin: f.base }],
    ] as const;
    for (const [what, cookie, fields, headers] of tries) {
      const r = await post(path, cookie, fields, headers);
      expect(r.status, what).toBe(403);
      expect(r.location, what).toBeNull();
      expect(r.text, what).toMatch(/nothing was revoked|hansard token create/);
    }
    expect(await works(v.secret)).toBe(true);
  });

  it("revokes from the board's own form: the API refuses the token, and the audit list names who did it", async () => {
    const v = await victim('to revoke');
    expect(await works(v.secret)).toBe(true);
    const csrf = await formTokenOf(admin, '/tokens');
    const r = await post(`/tokens/${v.id}/revoke`, admin, { csrf }, { 'sec-fetch-site': 'same-origin' });
    expect(r.status).toBe(303);
    expect(r.location).toBe(`/tokens?revoked=${v.id}`);
    expect(await works(v.secret)).toBe(false);
    const back = await page(r.location!, admin);
    expect(back.text).toContain(`Token <code>${v.id}</code> was revoked`);
    expect(back.text).toMatch(new RegExp(`<tr data-token="${v.id}" data-state="revoked">`));
    expect(back.text).not.toContain(`action="/tokens/${v.id}/revoke"`);

    const audit = await page('/audit', admin);
    expect(audit.status).toBe(200);
    const row = /<tr data-id="au_[0-9A-Z]{26}" data-action="token.revoke">.*?<\/tr>/.exec(audit.text)?.[0];
    expect(row, 'an audit row of the revocation').toBeDefined();
    expect(row).toContain(`token <code>${adminId}</code>`);
    expect(row).toContain(`<code>${v.id}</code>`);
    expect(row).toContain('<td data-label="Via">board</td>');
    const stored = await f.stores.state.listAudit('local', { limit: 10 });
    expect(stored.items.find((e) => e.target === v.id)).toMatchObject({
      action: 'token.revoke',
      actor: { kind: 'token', token_id: adminId },
      via: 'board',
    });
  });

  it('sends back to the page saying it is gone for a token the tenant does not hold', async () => {
    const csrf = await formTokenOf(admin, '/tokens');
    const r = await post(
      '/tokens/tok_01KZVVGRNTBMSD610TK2GA9BFS/revoke',
      admin,
      { csrf },
      { origin: f.base },
    );
    expect(r.status).toBe(303);
    expect(r.location).toBe('/tokens?gone=1');
    expect((await page(r.location!, admin)).text).toContain('That token no longer exists');
  });

  it('answers a page (400) for a path that is not a token id', async () => {
    const csrf = await formTokenOf(admin, '/tokens');
    const r = await post('/tokens/hns_nope/revoke', admin, { csrf }, { origin: f.base });
    expect(r.status).toBe(400);
    expect(r.text).toContain('That token cannot be revoked');
  });
});
