/**
 * The alerts page's "Send a test" form over plain HTTP on loopback (issue 28 item 5; lib/http/routes/pages/
 * alerts.tsx): a POST from another origin (`Origin`, or `Sec-Fetch-Site: cross-site`), one without the
 * form token or with another sign-in's, and one from a board viewer without the admin scope are all
 * refused and queue nothing; the board's own form, as a browser sends it, queues one test for that target
 * alone. And `GET /alerts`: admins only, signed-out browsers sent to sign in; target URLs masked.
 */
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { maskTargetUrl } from '../../lib/board/alerts.js';
import { LocalSecretSealer } from '../../lib/deploy/local-sealer.js';
import { DEFAULT_ALERT_CONFIG } from '../../lib/service/alerts/deps.js';
import { mintToken } from '../../lib/service/index.js';
import { type BoardFixture, startBoard } from './overview-fixture.js';

const sealer = new LocalSecretSealer(mkdtempSync(join(tmpdir(), 'hansard-alert-key-')));
const config = { ...DEFAULT_ALERT_CONFIG, allowPrivateTargets: true };

let f: BoardFixture;
/** a board sign-in with the admin scope, and a second one (another form token) */
let admin = '';
let otherAdmin = '';
let target = '';

/** The outbox as a test sees it: every event, due or not. */
const outbox = () => f.stores.state.listDueEvents('9999-12-31T00:00:00.000Z', 100);

async function page(path: string, cookie: string | null) {
  const res = await fetch(`${f.base}${path}`, {
    redirect: 'manual',
    headers: cookie === null ? {} : { cookie: `hansard_board=${cookie}` },
  });
  return { status: res.status, location: res.headers.get('location'), text: await res.text() };
}

/** The form token in the alerts page `cookie` sees. */
async function formTokenOf(cookie: string): Promise<string> {
  const p = await page('/alerts', cookie);
  expect(p.status).toBe(200);
  const m = /name="csrf" value="([A-Za-z0-9_-]{43})"/.exec(p.text);
  expect(m, 'a form token in the page').not.toBeNull();
  return m![1]!;
}

/** POSTs the test form for `id` with `fields` and `headers`, as a browser (or a forger) would. */
async function postTest(
  id: string,
  cookie: string,
  fields: Record<string, string>,
  headers: Record<string, string>,
) {
  const res = await fetch(`${f.base}/alerts/${id}/test`, {
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

beforeAll(async () => {
  f = await startBoard({ alerts: { sealer, config } });
  const now = new Date();
  admin = (await mintToken(f.stores.state, 'local', { scopes: ['board', 'admin'] }, now)).token;
  otherAdmin = (await mintToken(f.stores.state, 'local', { scopes: ['board', 'admin'] }, now)).token;
  const res = await fetch(`${f.base}/v1/alerts`, {
    method: 'POST',
    headers: { authorization: `Bearer ${f.admin}`, 'content-type': 'application/json' },
    body: JSON.stringify({
      url: 'https://hooks.slack.com/services/T000/B000/XXXXXXXXsecret',
      format: 'slack',
    }),
  });
  expect(res.status).toBe(201);
  target = ((await res.json()) as { id: string }).id;
}, 30_000);

afterAll(async () => {
  await f?.close();
});

describe('GET /alerts', () => {
  it('shows an admin the target with its Slack URL masked after /services', async () => {
    const p = await page('/alerts', admin);
    expect(p.status).toBe(200);
    expect(p.text).toContain('https://hooks.slack.com/services/…');
    expect(p.text).not.toContain('XXXXXXXXsecret');
    expect(p.text).not.toContain('T000');
    expect(p.text).toContain(`action="/alerts/${target}/test"`);
  });

  it('shows a label and agent names as text: markup escaped, bidi and control characters as escapes', async () => {
    const res = await fetch(`${f.base}/v1/alerts`, {
      method: 'POST',
      headers: { authorization: `Bearer ${f.admin}`, 'content-type': 'application/json' },
      body: JSON.stringify({
        url: 'https://example.com/hook',
        label: '<img src=x onerror=alert(1)>\u202eevil',
        agents: ['<script>x</script>'],
      }),
    });
    expect(res.status).toBe(201);
    const id = ((await res.json()) as { id: string }).id;
    const p = await page('/alerts', admin);
    expect(p.text).not.toContain('<img src=x');
    expect(p.text).not.toContain('<script>x');
    expect(p.text).not.toContain('\u202e');
    expect(p.text).toContain('&lt;img src=x onerror=alert(1)&gt;\\u202eevil');
    expect(p.text).toContain('&lt;script&gt;x&lt;/script&gt;');
    await fetch(`${f.base}/v1/alerts/${id}`, {
      method: 'DELETE',
      headers: { authorization: `Bearer ${f.admin}` },
    });
  });

  it('answers a board viewer without the admin scope 403, naming the command for the token to ask for', async () => {
    const p = await page('/alerts', f.board);
    expect(p.status).toBe(403);
    expect(p.text).toContain('hansard token create --scopes board,admin');
    expect(p.text).not.toContain(target);
    expect(p.text).not.toContain('hooks.slack.com');
  });

  it('sends a signed-out browser to sign in, and back here after', async () => {
    const p = await page('/alerts', null);
    expect(p.status).toBe(302);
    expect(p.location).toBe('/login?next=%2Falerts');
  });
});

describe('POST /alerts/{id}/test', () => {
  it('is refused from another origin, with the right form token, and queues nothing', async () => {
    const csrf = await formTokenOf(admin);
    const before = await outbox();
    const tries: Record<string, string>[] = [
      { origin: 'https://evil.example' },
      { 'sec-fetch-site': 'cross-site' },
      { origin: 'null' },
      {},
    ];
    for (const headers of tries) {
      const a = await postTest(target, admin, { csrf }, headers);
      expect(a.status, JSON.stringify(headers)).toBe(403);
      expect(a.text).toContain('That button was not pressed on this board');
      expect(a.text).toContain('nothing was sent');
    }
    expect(await outbox()).toEqual(before);
  });

  it('is refused from the board’s origin without the form token, or with another sign-in’s, and queues nothing', async () => {
    const theirs = await formTokenOf(otherAdmin);
    const mine = await formTokenOf(admin);
    expect(theirs).not.toBe(mine);
    const before = await outbox();
    const tries: Record<string, string>[] = [
      {},
      { csrf: '' },
      { csrf: theirs },
      // ours with its last character changed, and as many characters that are not base64url
      { csrf: `${mine.slice(0, 42)}${mine.endsWith('A') ? 'B' : 'A'}` },
      { csrf: 'é'.repeat(43) },
    ];
    for (const fields of tries) {
      const a = await postTest(target, admin, fields, { origin: f.base, 'sec-fetch-site': 'same-origin' });
      expect(a.status, JSON.stringify(fields)).toBe(403);
      expect(a.text).toContain('nothing was sent');
    }
    expect(await outbox()).toEqual(before);
  });

  it('is refused to a board viewer without the admin scope, even with a valid form token of its own', async () => {
    const before = await outbox();
    // the viewer's own form token, as the page would compute it if it had one
    const { createHmac } = await import('node:crypto');
    const csrf = createHmac('sha256', f.board).update('hansard board form token v1').digest('base64url');
    const a = await postTest(target, f.board, { csrf }, { origin: f.base });
    expect(a.status).toBe(403);
    expect(a.text).toContain('hansard token create --scopes board,admin');
    expect(await outbox()).toEqual(before);
  });

  it('from the board’s own form: one test event for this target, and back to the page with a flash', async () => {
    const csrf = await formTokenOf(admin);
    const before = await outbox();
    const a = await postTest(target, admin, { csrf }, { origin: f.base, 'sec-fetch-site': 'same-origin' });
    expect(a.status, a.text).toBe(303);
    expect(a.location).toBe(`/alerts?sent=${target}`);
    const after = await outbox();
    expect(after.length).toBe(before.length + 1);
    const added = after.find((e) => !before.some((b) => b.id === e.id))!;
    expect(added).toMatchObject({ kind: 'alert.test', only_target: target, sid: null, tenant: 'local' });
    const back = await page(a.location!, admin);
    expect(back.text).toContain('A test event was queued for https://hooks.slack.com/services/…');
  });

  it('a session-bound token with board and admin is refused the page and the button, queueing nothing', async () => {
    const sid = await f.record('claude-code', 'priya', 'bound');
    const bound = (
      await mintToken(f.stores.state, 'local', { scopes: ['board', 'admin'], session: sid }, new Date())
    ).token;
    const p = await page('/alerts', bound);
    expect(p.status).toBe(403);
    expect(p.text).toContain('bound to one session');
    expect(p.text).not.toContain(target);
    const before = await outbox();
    const { createHmac } = await import('node:crypto');
    const csrf = createHmac('sha256', bound).update('hansard board form token v1').digest('base64url');
    const a = await postTest(target, bound, { csrf }, { origin: f.base });
    expect(a.status).toBe(403);
    expect(await outbox()).toEqual(before);
  });

  it('an API client with an admin token in Authorization needs neither the origin nor the form token', async () => {
    const before = await outbox();
    const res = await fetch(`${f.base}/alerts/${target}/test`, {
      method: 'POST',
      redirect: 'manual',
      headers: { authorization: `Bearer ${f.admin}`, 'content-type': 'application/x-www-form-urlencoded' },
      body: '',
    });
    expect(res.status).toBe(303);
    expect((await outbox()).length).toBe(before.length + 1);
    // while the same request carried by the board's cookie is refused
    const a = await postTest(target, admin, {}, {});
    expect(a.status).toBe(403);
    expect((await outbox()).length).toBe(before.length + 1);
  });

  it('a target removed meanwhile: back to the page saying so, nothing queued', async () => {
    const csrf = await formTokenOf(admin);
    const before = await outbox();
    const gone = 'at_01JZZZZZZZZZZZZZZZZZZZZZZZ';
    const a = await postTest(gone, admin, { csrf }, { origin: f.base });
    expect(a.status).toBe(303);
    expect(a.location).toBe('/alerts?gone=1');
    expect(await outbox()).toEqual(before);
  });
});

describe('maskTargetUrl', () => {
  it('keeps the host and a first path word, masks the rest, never shows a user, query or fragment', () => {
    expect(maskTargetUrl('https://hooks.slack.com/services/T0/B0/abc')).toBe(
      'https://hooks.slack.com/services/…',
    );
    expect(maskTargetUrl('https://example.com/8f3a9c2e-token')).toBe('https://example.com/…');
    expect(maskTargetUrl('https://example.com/hook')).toBe('https://example.com/hook');
    expect(maskTargetUrl('https://example.com/hook?key=s3cret')).toBe('https://example.com/hook?…');
    expect(maskTargetUrl('https://example.com/?key=s3cret')).toBe('https://example.com/?…');
    expect(maskTargetUrl('https://user:pw@example.com:8443/')).toBe('https://example.com:8443');
    expect(maskTargetUrl('not a url')).toBe('(not a URL)');
  });
});
