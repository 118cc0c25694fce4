/**
 * `hansard tenant oidc set|show|remove`, `hansard people list|link|unlink|role` and `hansard audit-log`
 * (issue 29 items 1, 2 and 4), run in-process against a server on loopback (the app over the real SQLite
 * store, with the local sealer) and a real OpenID provider (`oidc-provider`) for the discovery check: the
 * secret read from a file (one trailing newline dropped, never printed, refused when missing or empty),
 * the redirect URI printed to register, the token's own tenant (`--tenant` checked), usage errors exit 2
 * before any request, `--json` everywhere, `--help` with examples.
 */
import { execFileSync } from 'node:child_process';
import { chmodSync, mkdtempSync, writeFileSync } from 'node:fs';
import { type AddressInfo, createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { LocalSecretSealer } from '../../../lib/deploy/local-sealer.js';
import { DEFAULT_SIGN_IN_CONFIG } from '../../../lib/service/sign-in/deps.js';
import { runHansard } from '../../support/cli.js';
import { type OidcProvider, startOidcProvider } from '../../support/oidc-provider.js';
import { useServer } from '../../support/server.js';

const cwd = mkdtempSync(join(tmpdir(), 'hansard-sign-in-cli-'));
const sealer = new LocalSecretSealer(join(cwd, 'keys'));
const srv = useServer({
  tenants: ['acme', 'globex'],
  tokens: { reader: ['read'], globex: { tenant: 'globex', scopes: ['admin'] } },
  deps: { signIn: { sealer, config: DEFAULT_SIGN_IN_CONFIG } },
  // the 5xx of a wrong issuer is logged by the app, on purpose
  mayLog: /^answered 502 provider_unavailable /,
});
const hansard = (...argv: string[]) =>
  runHansard(argv, { cwd, env: { HANSARD_URL: srv.url, HANSARD_TOKEN: srv.admin } });

const SECRET = 'cli-secret-9q2m-never-printed';
let op: OidcProvider;
beforeAll(async () => {
  op = await startOidcProvider({
    clients: [{ client_id: 'hansard', client_secret: SECRET, redirect_uris: ['http://127.0.0.1/cb'] }],
  });
  // readable by their owner only, as docs/sign-in.md says to keep a secret file
  writeFileSync(join(cwd, 'secret'), `${SECRET}\n`, { mode: 0o600 });
  writeFileSync(join(cwd, 'crlf-secret'), `${SECRET}\r\n`, { mode: 0o600 });
  writeFileSync(join(cwd, 'empty'), '\n', { mode: 0o600 });
  writeFileSync(join(cwd, 'big'), 'x'.repeat(64 * 1024 + 1), { mode: 0o600 });
  writeFileSync(join(cwd, 'shared-secret'), `${SECRET}\n`);
  chmodSync(join(cwd, 'shared-secret'), 0o644); // whatever the umask
  execFileSync('mkfifo', [join(cwd, 'fifo')]);
});
afterAll(async () => {
  await op?.stop();
});

const set = (...more: string[]) =>
  hansard('tenant', 'oidc', 'set', '--issuer', op.issuer, '--client-id', 'hansard', ...more);

describe('hansard tenant oidc', () => {
  it('set: checks the issuer, prints the redirect URI to register, never the secret', async () => {
    const r = await set('--client-secret-file', 'secret', '--role-map', 'eng-leads=admin,eng=member');
    expect(r.code, r.err).toBe(0);
    expect(r.out).toBe(`${srv.url}/login/oidc/callback\n`);
    expect(r.err).toContain('OIDC sign-in set for tenant acme');
    expect(r.err).toContain(`${srv.url}/login?signed_out=1`);
    expect(`${r.out}${r.err}`).not.toContain(SECRET);
    const stored = (await srv.stores.state.getOidcSettings('acme'))!;
    // the file's trailing newline is not part of the secret
    expect(await sealer.open('acme', stored.client_secret_sealed)).toBe(SECRET);
    expect(stored.role_map).toEqual({ 'eng-leads': 'admin', eng: 'member' });
  });

  it('set --json --no-check: domains lower-cased, --default-role none is no default, a CRLF file read as one line', async () => {
    const r = await hansard(
      'tenant',
      'oidc',
      'set',
      '--issuer',
      'http://127.0.0.1:9/nobody',
      '--client-id',
      'hansard',
      '--client-secret-file',
      'crlf-secret',
      '--allowed-domains',
      'Example.com, b.example.org',
      '--groups-claim',
      'roles',
      '--default-role',
      'none',
      '--no-check',
      '--tenant',
      'acme',
      '--json',
    );
    expect(r.code, r.err).toBe(0);
    const view = JSON.parse(r.out);
    expect(view).toMatchObject({
      tenant: 'acme',
      issuer: 'http://127.0.0.1:9/nobody',
      allowed_domains: ['example.com', 'b.example.org'],
      groups_claim: 'roles',
      default_role: null,
      redirect_uri: `${srv.url}/login/oidc/callback`,
    });
    expect(view).not.toHaveProperty('client_secret');
    const stored = (await srv.stores.state.getOidcSettings('acme'))!;
    expect(await sealer.open('acme', stored.client_secret_sealed)).toBe(SECRET);
  });

  it('set: a wrong issuer is refused by the server at once (exit 1), naming it', async () => {
    const r = await hansard(
      'tenant',
      'oidc',
      'set',
      '--issuer',
      `${op.issuer}/wrong`,
      '--client-id',
      'hansard',
      '--client-secret-file',
      'secret',
    );
    expect(r.code).toBe(1);
    expect(r.err).toContain(`${op.issuer}/wrong`);
    expect(r.err).toContain('hansard: the sign-in provider could not be used: ');
    expect(r.err).not.toContain('the server refused');
    expect(r.err).toContain('(502 provider_unavailable)');
    // answered at once: a retry would ask the same provider the same question
    expect(r.err).not.toContain('retrying');
    expect(r.err).not.toContain(SECRET);
  });

  it('set: bad input is refused with exit 2 before any request, never echoing the secret', async () => {
    const cases: [string[], string][] = [
      [
        ['--client-secret-file', 'missing'],
        'cannot read --client-secret-file missing: there is no such file',
      ],
      [['--client-secret-file', 'empty'], '--client-secret-file empty is empty'],
      [['--client-secret-file', '.'], 'it is a directory'],
      // refused by what stat says, before any read: a FIFO or /dev/zero would block or never end
      [['--client-secret-file', 'fifo'], 'cannot read --client-secret-file fifo: it is not a regular file'],
      [['--client-secret-file', '/dev/zero'], 'it is not a regular file'],
      [['--client-secret-file', 'big'], '--client-secret-file big holds more than 64 KiB'],
      [['--client-secret-file', 'secret', '--role-map', 'eng=owner'], '"owner" of eng is not a role'],
      [['--client-secret-file', 'secret', '--role-map', 'eng'], '"eng" is not group=role'],
      [['--client-secret-file', 'secret', '--allowed-domains', 'a@b.com'], '"a@b.com" is not a domain name'],
      [['--client-secret-file', 'secret', '--default-role', 'owner'], "argument 'owner' is invalid"],
      [['--client-secret-file', 'secret', '--tenant', 'Not A Tenant'], 'is not a tenant name'],
    ];
    for (const id of ['', '  ']) {
      cases.push([
        ['--client-secret-file', 'secret', '--client-id', id],
        '--client-id is empty: give the client id the provider shows',
      ]);
    }
    const before = await srv.stores.state.getOidcSettings('acme');
    for (const [more, said] of cases) {
      const r = await set(...more);
      expect(r.code, `${more.join(' ')}: ${r.err}`).toBe(2);
      expect(r.err).toContain(said);
      expect(r.err).not.toContain(SECRET);
    }
    const badIssuer = await hansard(
      'tenant',
      'oidc',
      'set',
      '--issuer',
      'http://idp.example.com',
      '--client-id',
      'x',
      '--client-secret-file',
      'secret',
    );
    expect(badIssuer.code).toBe(2);
    expect(badIssuer.err).toContain('http:// only on a loopback host');
    expect(await srv.stores.state.getOidcSettings('acme')).toEqual(before);
  });

  it('set: an --issuer that is not a URL is a usage error (exit 2) naming the form, before any request', async () => {
    for (const issuer of ['accounts.google.com', 'not-a-url', 'https://', 'https://exa mple.com']) {
      const args = ['tenant', 'oidc', 'set', '--issuer', issuer, '--client-id', 'x'];
      const r = await hansard(...args, '--client-secret-file', 'secret');
      expect(r.code, `${issuer}: ${r.err}`).toBe(2);
      expect(r.err).toContain('the issuer must be an https:// URL such as https://accounts.google.com');
      expect(r.err).not.toContain('TypeError');
      const json = await hansard(...args, '--client-secret-file', 'secret', '--json');
      expect(json.code).toBe(2);
      expect(JSON.parse(json.err).error.code).toBe('usage');
    }
  });

  it('--tenant other than the token’s own: exit 2 naming both, nothing set in either', async () => {
    const r = await set('--client-secret-file', 'secret', '--tenant', 'globex');
    expect(r.code).toBe(2);
    expect(r.err).toContain(
      "the token is of tenant acme, not globex: these commands act on the token's own tenant",
    );
    expect(await srv.stores.state.getOidcSettings('globex')).toBeNull();
  });

  it('show: the settings in lines and as JSON, never the secret', async () => {
    const r = await hansard('tenant', 'oidc', 'show');
    expect(r.code, r.err).toBe(0);
    expect(r.out).toContain('issuer                    http://127.0.0.1:9/nobody');
    expect(r.out).toContain(`redirect_uri              ${srv.url}/login/oidc/callback`);
    expect(r.out).toContain('default_role              none (refused until given a role)');
    // docs/sign-in.md step 3: show "says only that it is set"
    expect(r.out).toContain('client_secret             set (sealed; never shown)\n');
    const json = await hansard('tenant', 'oidc', 'show', '--json');
    expect(JSON.parse(json.out)).toMatchObject({ tenant: 'acme', client_id: 'hansard' });
    // --json is the server's answer as it is
    expect(JSON.parse(json.out)).not.toHaveProperty('client_secret');
    expect(`${r.out}${json.out}`).not.toContain(SECRET);
  });

  it('remove: exit 0; then show says there is none (null as JSON), and remove again is done already (exit 0)', async () => {
    const r = await hansard('tenant', 'oidc', 'remove');
    expect(r.code, r.err).toBe(0);
    expect(r.out).toBe('OIDC sign-in removed for tenant acme: link tokens keep working\n');
    const show = await hansard('tenant', 'oidc', 'show');
    expect(show.code).toBe(0);
    // the command's answer: on stdout
    expect(show.out).toContain('tenant acme has no OIDC sign-in');
    expect(show.err).toBe('');
    expect((await hansard('tenant', 'oidc', 'show', '--json')).out.trim()).toBe('null');
    const again = await hansard('tenant', 'oidc', 'remove');
    expect(again.code, again.err).toBe(0);
    expect(again.out).toBe('no sign-in was set for tenant acme: nothing to remove\n');
    expect(again.err).toBe('');
    const json = await hansard('tenant', 'oidc', 'remove', '--json');
    expect(json.code, json.err).toBe(0);
    expect(JSON.parse(json.out)).toEqual({ tenant: 'acme', removed: false });
  });

  it('a token without admin is refused (exit 2) and told which scope to use', async () => {
    const r = await runHansard(['tenant', 'oidc', 'show'], {
      cwd,
      env: { HANSARD_URL: srv.url, HANSARD_TOKEN: srv.tokens.reader },
    });
    expect(r.code).toBe(2);
    expect(r.err).toContain('admin');
  });

  it('--help says these go through the server, with examples', async () => {
    const help = await hansard('tenant', 'oidc', '--help');
    expect(help.code).toBe(0);
    expect(help.out).toContain('These commands go through a server');
    expect(help.out).toContain('unlike tenant create');
    expect(help.out).toContain('hansard tenant oidc set --issuer https://accounts.google.com');
    const setHelp = await hansard('tenant', 'oidc', 'set', '--help');
    expect(setHelp.out).toContain('--client-secret-file <file>');
    expect(setHelp.out).toContain('--no-check');
    expect(setHelp.out).toContain("--role-map 'eng-leads=admin,eng=member'");
    // the exit code of a provider that cannot be used, as the top-level help tells them apart
    expect(setHelp.out).toContain('exit 1: the sign-in provider could not be used');
    const top = await hansard('--help');
    expect(top.out).toContain(
      'Exit codes: 0 success, 1 failure (of the server, or of a service it uses such as a sign-in provider),\n2 usage error or request refused by the server (4xx).',
    );
  });

  it('a server nobody answers at: the hint names --server, the flag these commands take', async () => {
    // a loopback port nothing listens on: refused at once, not retried
    const port = await new Promise<number>((done) => {
      const probe = createServer().listen(0, '127.0.0.1', () => {
        const { port } = probe.address() as AddressInfo;
        probe.close(() => done(port));
      });
    });
    const gone = { HANSARD_URL: `http://127.0.0.1:${port}`, HANSARD_TOKEN: srv.admin };
    for (const argv of [['tenant', 'oidc', 'show'], ['people', 'list'], ['audit-log'], ['alerts', 'list']]) {
      const r = await runHansard(argv, { cwd, env: gone });
      expect(r.code, r.err).toBe(1);
      expect(r.err).toContain('point HANSARD_URL (or --server) at the server you use');
      expect(r.err).not.toContain('--url');
    }
    // a command that takes --url is told --url
    const replay = await runHansard(['replay', 's_01KZVVGRNTBMSD610TK2GA9BFS'], { cwd, env: gone });
    expect(replay.code, replay.err).toBe(1);
    expect(replay.err).toContain('point HANSARD_URL (or --url) at the server you use');
  });
});

describe('hansard people', () => {
  it('link, unlink and role change a person and print them; list shows everyone', async () => {
    let r = await hansard('people', 'link', 'priya', 'Priya@Example.com');
    expect(r.code, r.err).toBe(0);
    expect(r.out).toBe('priya@example.com  mapped  priya  never signed in\n');
    r = await hansard('people', 'link', 'priya-laptop', 'priya@example.com', '--json');
    expect(JSON.parse(r.out)).toMatchObject({
      email: 'priya@example.com',
      user_ids: ['priya', 'priya-laptop'],
    });
    r = await hansard('people', 'unlink', 'priya', 'priya@example.com');
    expect(r.out).toBe('priya@example.com  mapped  priya-laptop  never signed in\n');
    r = await hansard('people', 'role', 'sam@example.com', 'admin');
    expect(r.out).toBe('sam@example.com  admin   -  never signed in\n');
    r = await hansard('people', 'role', 'sam@example.com', 'mapped', '--json');
    expect(JSON.parse(r.out).role).toBeNull();
    r = await hansard('people', 'role', 'sam@example.com', 'none');
    expect(r.out).toContain('sam@example.com  none');
    // as a sign-in leaves it: the provider's name for them, and when
    const sam = (await srv.stores.state.getPerson('acme', 'sam@example.com'))!;
    await srv.stores.state.putPerson(
      { ...sam, name: 'Sam Okafor', last_sign_in_at: '2026-12-01T09:30:00.000Z', version: sam.version + 1 },
      sam.version,
    );
    const list = await hansard('people', 'list');
    expect(list.code, list.err).toBe(0);
    expect(list.out).toBe(
      [
        'EMAIL              NAME        ROLE    PERSON IDS    LAST SIGN-IN',
        'priya@example.com  -           mapped  priya-laptop  never',
        'sam@example.com    Sam Okafor  none    -             2026-12-01T09:30:00.000Z',
        '',
      ].join('\n'),
    );
    const json = await hansard('people', 'list', '--json');
    expect(JSON.parse(json.out).map((p: { email: string }) => p.email)).toEqual([
      'priya@example.com',
      'sam@example.com',
    ]);
  });

  it('refuses a bad role or email with exit 2 before any request, and an unknown person’s unlink with a hint', async () => {
    const role = await hansard('people', 'role', 'sam@example.com', 'owner');
    expect(role.code).toBe(2);
    expect(role.err).toContain('"owner" is not a role: use viewer, member, admin, none, mapped');
    const email = await hansard('people', 'link', 'priya', 'not an email');
    expect(email.code).toBe(2);
    expect(email.err).toContain('is not an email address');
    const unknown = await hansard('people', 'unlink', 'x', 'nobody@example.com');
    expect(unknown.code).toBe(2);
    expect(unknown.err).toContain('hansard people list');
  });
});

describe('a tenant with nothing yet', () => {
  it('people list and audit-log say so on stdout (their answer), nothing on stderr; --json: []', async () => {
    const env = { HANSARD_URL: srv.url, HANSARD_TOKEN: srv.tokens.globex };
    const people = await runHansard(['people', 'list'], { cwd, env });
    expect(people.code, people.err).toBe(0);
    expect(people.out).toBe(
      'no people yet: they appear at their first sign-in, or with hansard people link\n',
    );
    expect(people.err).toBe('');
    const audit = await runHansard(['audit-log'], { cwd, env });
    expect(audit.code, audit.err).toBe(0);
    expect(audit.out).toBe('the audit list is empty\n');
    expect(audit.err).toBe('');
    expect((await runHansard(['people', 'list', '--json'], { cwd, env })).out.trim()).toBe('[]');
    expect((await runHansard(['audit-log', '--json'], { cwd, env })).out.trim()).toBe('[]');
  });
});

describe('hansard audit-log', () => {
  it('lists what was done, newest first, by whom and from where', async () => {
    const r = await hansard('audit-log', '--limit', '200');
    expect(r.code, r.err).toBe(0);
    const lines = r.out.split('\n').filter(Boolean);
    expect(lines[0]).toMatch(
      / {2}token:tok_[0-9A-Z]{26} {2}person\.set {5}sam@example\.com {2}role none {2}\[api\]$/,
    );
    expect(lines.some((l) => l.includes('oidc.set') && l.includes('(tenant)'))).toBe(true);
    expect(lines.some((l) => l.includes('oidc.remove'))).toBe(true);
    expect(r.out).not.toContain(SECRET);
    const json = await hansard('audit-log', '--limit', '1', '--json');
    const entries = JSON.parse(json.out);
    expect(entries).toHaveLength(1);
    expect(entries[0]).toMatchObject({ action: 'person.set', target: 'sam@example.com', via: 'api' });
  });

  it('refuses a bad --limit with exit 2', async () => {
    for (const limit of ['0', '201', 'ten']) {
      const r = await hansard('audit-log', '--limit', limit);
      expect(r.code).toBe(2);
      expect(r.err).toContain('is not a number from 1 to 200');
    }
  });
});

describe('hansard people role outside the allowed domains', () => {
  it('sets the role, and warns on stderr that the person is refused until their domain is allowed', async () => {
    const on = await hansard(
      'tenant',
      'oidc',
      'set',
      '--issuer',
      'http://127.0.0.1:9/nobody',
      '--client-id',
      'hansard',
      '--client-secret-file',
      'secret',
      '--allowed-domains',
      'example.com',
      '--no-check',
    );
    expect(on.code, on.err).toBe(0);
    const r = await hansard('people', 'role', 'dana@elsewhere.org', 'member');
    expect(r.code, r.err).toBe(0);
    expect(r.out).toBe('dana@elsewhere.org  member  -  never signed in\n');
    expect(r.err).toBe(
      'hansard: warning: elsewhere.org is not among the domains tenant acme lets in (example.com): dana@elsewhere.org is refused at sign-in until it is (hansard tenant oidc set --allowed-domains)\n',
    );
    expect((await srv.stores.state.getPerson('acme', 'dana@elsewhere.org'))?.role).toBe('member');
    const json = await hansard('people', 'role', 'dana@elsewhere.org', 'admin', '--json');
    expect(JSON.parse(json.out).role).toBe('admin');
    expect(json.err).toContain('hansard: warning: elsewhere.org is not among the domains');
    // at an allowed domain, or removing someone: nothing to warn about
    for (const argv of [
      ['people', 'role', 'sam@example.com', 'viewer'],
      ['people', 'role', 'dana@elsewhere.org', 'none'],
    ]) {
      const quiet = await hansard(...argv);
      expect(quiet.code, quiet.err).toBe(0);
      expect(quiet.err).toBe('');
    }
  });
});

describe('hansard people link: the person id', () => {
  it('refuses one with a control or invisible character, or a space at either end (exit 2, before any request)', async () => {
    for (const id of ['pri\nya', '\u001b[31mpriya', 'pri\u202eya', 'pri\u200bya', ' priya', 'priya\t', '']) {
      const r = await hansard('people', 'link', id, 'priya@example.com');
      expect(r.code, `${JSON.stringify(id)}: ${r.err}`).toBe(2);
      expect(r.err).toContain('a person id is a user_id as the record shows it');
      // the refusal shows the id escaped: it cannot move the cursor or start a line
      expect(r.err.split('\n').filter(Boolean)).toHaveLength(1);
      expect(r.err).not.toContain('\u001b');
    }
    expect((await srv.stores.state.getPerson('acme', 'priya@example.com'))?.user_ids).toEqual([
      'priya-laptop',
    ]);
  });

  it('takes what a writer may record: spaces inside, punctuation, other scripts', async () => {
    for (const id of ['Priya Raman', 'ops!bot', 'josé']) {
      const r = await hansard('people', 'link', id, 'ids@example.com');
      expect(r.code, `${id}: ${r.err}`).toBe(0);
    }
    expect((await srv.stores.state.getPerson('acme', 'ids@example.com'))?.user_ids).toEqual([
      'Priya Raman',
      'ops!bot',
      'josé',
    ]);
  });
});

describe('hansard people unlink of an id not linked', () => {
  it('says it was not linked (exit 0), changing nothing', async () => {
    const before = await srv.stores.state.getPerson('acme', 'priya@example.com');
    const r = await hansard('people', 'unlink', 'priya-desktop', 'Priya@example.com');
    expect(r.code, r.err).toBe(0);
    expect(r.out).toBe(
      'priya-desktop was not linked to priya@example.com: nothing to unlink (linked: priya-laptop)\n',
    );
    expect(r.err).toBe('');
    const json = await hansard('people', 'unlink', 'priya-desktop', 'priya@example.com', '--json');
    expect(json.code, json.err).toBe(0);
    expect(JSON.parse(json.out)).toMatchObject({ email: 'priya@example.com', user_ids: ['priya-laptop'] });
    // no write, so no audit entry either
    expect(await srv.stores.state.getPerson('acme', 'priya@example.com')).toEqual(before);
  });
});

describe('hansard tenant oidc set: the secret file’s mode', () => {
  it('set: a secret file others can read is taken, with a warning naming chmod 600 (as ssh warns)', async () => {
    const r = await set('--client-secret-file', 'shared-secret', '--no-check');
    expect(r.code, r.err).toBe(0);
    expect(r.err).toContain(
      'hansard: warning: --client-secret-file shared-secret can be read by others than you (mode 644): chmod 600 shared-secret\n',
    );
    expect(r.err).not.toContain(SECRET);
    const own = await set('--client-secret-file', 'secret', '--no-check');
    expect(own.code, own.err).toBe(0);
    expect(own.err).not.toContain('warning');
  });
});
