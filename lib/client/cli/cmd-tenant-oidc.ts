/**
 * `hansard tenant oidc set|show|remove` (issue 29 item 1; docs/sign-in.md): a tenant's OpenID Connect
 * sign-in, through the server's `/v1/tenants/{t}/oidc` with an admin token (lib/client/api/sign-in.ts).
 * Unlike `tenant create`, these go through a server: the tenant is the token's own (`--tenant`, when
 * given, is checked against it). The client secret is read from a file, never from the command line
 * (where `ps` and shell history would show it), and never printed.
 */
import { closeSync, constants, fstatSync, openSync, readSync, type Stats, statSync } from 'node:fs';
import { resolve } from 'node:path';
import { type Command, Option } from 'commander';
import { DomainName, IssuerUrl, type OidcSettingsView, ROLES, type Role } from '../../contract/sign-in.js';
import { escapeControl } from '../../log/format/escape.js';
import { clientFrom, retryNotice } from '../api/config.js';
import { UsageError } from '../api/errors.js';
import { type Io, printJson } from '../api/io.js';
import { type OidcSettingsRequest, SignInApi } from '../api/sign-in.js';
import { jsonOption } from './options.js';

/** Longest client secret the server takes, in characters (the contract's `OidcSettingsInput`). */
const MAX_SECRET_CHARS = 4096;
/** Largest secret file read, in bytes: refused by its size before any read (a secret is one line). */
const MAX_SECRET_FILE_BYTES = 64 * 1024;
/** A tenant name as the server's paths take it (lib/store/keys.ts `TENANT_PATTERN`). */
const TENANT_NAME = /^[a-z0-9][a-z0-9-]{0,62}$/;

const HELP = `
These commands go through a server (--server or HANSARD_URL) with an admin token of the tenant (--token
or HANSARD_TOKEN), unlike tenant create, which works on the state store: the tenant is the token's own.

Examples:
  hansard tenant oidc set --issuer https://accounts.google.com --client-id 1234.apps.googleusercontent.com \\
      --client-secret-file ./google-secret --allowed-domains example.com --default-role viewer
  hansard tenant oidc set --issuer https://login.microsoftonline.com/TENANT_ID/v2.0 --client-id ID \\
      --client-secret-file ./entra-secret --groups-claim groups --role-map 'GROUP_ID_1=admin,GROUP_ID_2=member'
  hansard tenant oidc show
  hansard tenant oidc remove
Provider set-up for Google, Entra, Keycloak and others: docs/sign-in.md.`;

/** The options every `tenant oidc` subcommand takes. */
export interface OidcServerOptions {
  server?: string;
  token?: string;
  tenant?: string;
  json?: boolean;
}

/** The options of `hansard tenant oidc set`, as commander parses them. */
export interface OidcSetOptions extends OidcServerOptions {
  issuer: string;
  clientId: string;
  clientSecretFile: string;
  allowedDomains?: string;
  groupsClaim?: string;
  roleMap?: string;
  defaultRole?: string;
  /** false with --no-check */
  check: boolean;
}

/** Adds `oidc set|show|remove` under `hansard tenant`. */
export function registerTenantOidc(tenant: Command, io: Io): void {
  const oidc = tenant
    .command('oidc')
    .description("a tenant's OpenID Connect sign-in for the board (through the server, admin token)")
    .addHelpText('after', HELP);
  const common = (c: Command) =>
    c
      .option('--server <url>', 'hansard server URL (env HANSARD_URL)')
      .option('--token <token>', 'admin token of the tenant (env HANSARD_TOKEN)')
      .option('--tenant <name>', "the tenant: the token's own (checked; default: the token's)")
      .addOption(jsonOption());

  common(
    oidc
      .command('set')
      .description("set the tenant's provider and how its people get roles (replaces what was set)")
      .requiredOption('--issuer <url>', 'the provider’s issuer URL (https; http only on loopback)')
      .requiredOption('--client-id <id>', 'the client id the provider gave')
      .requiredOption(
        '--client-secret-file <file>',
        'a file holding the client secret (one trailing newline is dropped; never printed)',
      )
      .option('--allowed-domains <domains>', 'only emails at these domains, comma-separated (default any)')
      .option('--groups-claim <claim>', 'the claim that lists a person’s groups (default groups)')
      .option('--role-map <map>', "group=role pairs, comma-separated: 'eng-leads=admin,eng=member'")
      .addOption(
        new Option(
          '--default-role <role>',
          'the role of a person no group maps (default none: refused)',
        ).choices([...ROLES, 'none']),
      )
      .option('--no-check', 'store without fetching the issuer’s discovery document first'),
  )
    .addHelpText(
      'after',
      `
Examples:
  hansard tenant oidc set --issuer https://keycloak.example.com/realms/eng --client-id hansard \\
      --client-secret-file ./secret --role-map 'eng-leads=admin,eng=member' --default-role viewer
  hansard tenant oidc set --issuer http://127.0.0.1:9090 --client-id test --client-secret-file s --no-check

The server fetches {issuer}/.well-known/openid-configuration first: a wrong or unreachable issuer fails
now (exit 1: the sign-in provider could not be used), not at the first sign-in. Printed on stdout: the redirect URI to register at the provider.
Roles: viewer (board, read), member (+ report), admin (+ tokens, alerts, sign-in); a person in several
groups gets the highest. hansard people role EMAIL ROLE sets one person's own role.`,
    )
    .action((o: OidcSetOptions) => setTenantOidc(o, io));

  common(
    oidc.command('show').description("the tenant's sign-in settings and the URIs to register (no secret)"),
  )
    .addHelpText('after', '\nExample:\n  hansard tenant oidc show --json')
    .action((o: OidcServerOptions) => showTenantOidc(o, io));

  common(
    oidc.command('remove').description('turn OIDC sign-in off for the tenant (link tokens keep working)'),
  )
    .addHelpText('after', '\nExample:\n  hansard tenant oidc remove')
    .action((o: OidcServerOptions) => removeTenantOidc(o, io));
}

function api(o: OidcServerOptions, io: Io): SignInApi {
  return new SignInApi(
    clientFrom({ url: o.server, urlFlag: '--server', token: o.token }, io.env, retryNotice(io)),
  );
}

/**
 * The token's own tenant; `--tenant`, when given, must be it.
 * @throws UsageError (exit 2) for a `--tenant` that is not a tenant name, or not the token's tenant
 */
async function ownTenant(sign: SignInApi, o: OidcServerOptions): Promise<string> {
  if (o.tenant !== undefined && !TENANT_NAME.test(o.tenant)) {
    throw new UsageError(
      `--tenant ${JSON.stringify(o.tenant.slice(0, 80))} is not a tenant name (lower-case letters, digits and -)`,
    );
  }
  const own = await sign.ownTenant();
  if (o.tenant !== undefined && o.tenant !== own) {
    throw new UsageError(
      `the token is of tenant ${own}, not ${o.tenant}: these commands act on the token's own tenant (use an admin token of ${o.tenant})`,
    );
  }
  return own;
}

/**
 * The client secret in `file`: its text less one trailing newline (`\n` or `\r\n`). What `stat` says is
 * checked before a byte is read: a directory, a FIFO or a device (`/dev/zero`, which never ends; a FIFO,
 * which blocks until a writer comes) is refused, and so is a file over `MAX_SECRET_FILE_BYTES` (it is not
 * a secret: it would be read whole). The file is opened non-blocking and checked again by its descriptor,
 * so one swapped in between is refused too, and at most the limit is read. A file that the group or
 * others may read is used, with a warning (`warn`), as ssh warns about a key file.
 * @throws UsageError (exit 2) for a file that cannot be read, is not a regular file, is too large, is
 *   empty, or holds more than the server takes; the message never shows the file's content
 */
export function readSecretFile(file: string, cwd: string, warn: (line: string) => void = () => {}): string {
  const path = resolve(cwd, file);
  const refuse = (why: string) => new UsageError(`cannot read --client-secret-file ${file}: ${why}`);
  let text: string;
  let fd: number | null = null;
  try {
    checkSecretStat(statSync(path), file, refuse);
    fd = openSync(path, constants.O_RDONLY | (constants.O_NONBLOCK ?? 0));
    const st = fstatSync(fd);
    checkSecretStat(st, file, refuse);
    const buf = Buffer.alloc(MAX_SECRET_FILE_BYTES + 1);
    let got = 0;
    while (got < buf.length) {
      const n = readSync(fd, buf, got, buf.length - got, null);
      if (n === 0) break;
      got += n;
    }
    if (got > MAX_SECRET_FILE_BYTES) throw tooLarge(file);
    text = buf.subarray(0, got).toString('utf8');
    if (process.platform !== 'win32' && (st.mode & 0o077) !== 0) {
      const mode = (st.mode & 0o777).toString(8);
      warn(`--client-secret-file ${file} can be read by others than you (mode ${mode}): chmod 600 ${file}`);
    }
  } catch (err) {
    if (err instanceof UsageError) throw err;
    const code = (err as NodeJS.ErrnoException).code;
    throw refuse(
      code === 'ENOENT'
        ? 'there is no such file'
        : code === 'EISDIR'
          ? 'it is a directory'
          : `${code ?? err}`,
    );
  } finally {
    if (fd !== null) closeSync(fd);
  }
  const secret = text.replace(/\r?\n$/, '');
  if (secret.trim() === '') {
    throw new UsageError(
      `--client-secret-file ${file} is empty: put the client secret the provider gave in it (one line)`,
    );
  }
  if (secret.length > MAX_SECRET_CHARS) {
    throw new UsageError(
      `--client-secret-file ${file} holds ${secret.length} characters, more than the ${MAX_SECRET_CHARS} a client secret may have: is it the right file?`,
    );
  }
  return secret;
}

/** @throws UsageError for what is not a regular file of at most `MAX_SECRET_FILE_BYTES` */
function checkSecretStat(st: Stats, file: string, refuse: (why: string) => UsageError): void {
  if (st.isDirectory()) throw refuse('it is a directory');
  if (!st.isFile()) throw refuse('it is not a regular file (a FIFO, a device or a socket): give a file');
  if (st.size > MAX_SECRET_FILE_BYTES) throw tooLarge(file);
}

function tooLarge(file: string): UsageError {
  return new UsageError(
    `--client-secret-file ${file} holds more than ${MAX_SECRET_FILE_BYTES / 1024} KiB: a client secret is one line: is it the right file?`,
  );
}

/** `--role-map 'eng-leads=admin,eng=member'` as a map. @throws UsageError naming the bad pair */
export function parseRoleMap(text: string): Record<string, Role> {
  const map: Record<string, Role> = {};
  for (const pair of text
    .split(',')
    .map((p) => p.trim())
    .filter(Boolean)) {
    const at = pair.lastIndexOf('=');
    const group = pair.slice(0, at).trim();
    const role = pair.slice(at + 1).trim();
    if (at <= 0 || !group) {
      throw new UsageError(`--role-map: ${JSON.stringify(pair)} is not group=role (e.g. eng-leads=admin)`);
    }
    if (!(ROLES as readonly string[]).includes(role)) {
      throw new UsageError(
        `--role-map: ${JSON.stringify(role)} of ${group} is not a role: use ${ROLES.join(', ')}`,
      );
    }
    map[group] = role as Role;
  }
  return map;
}

/** `--allowed-domains a.com,b.com`, lower-cased. @throws UsageError naming a domain that is not one */
function parseDomains(text: string): string[] {
  const domains = text
    .split(',')
    .map((d) => d.trim().toLowerCase())
    .filter(Boolean);
  for (const d of domains) {
    if (!DomainName.safeParse(d).success) {
      throw new UsageError(
        `--allowed-domains: ${JSON.stringify(d)} is not a domain name such as example.com`,
      );
    }
  }
  return domains;
}

/**
 * `--issuer` as the contract takes it. Text `new URL` cannot parse is refused first: zod 4 runs
 * `IssuerUrl`'s refines after `.url()` failed, and their `new URL` would throw out of `safeParse`.
 * @throws UsageError (exit 2) naming the issuer and what one looks like
 */
function checkIssuer(text: string): void {
  const shown = JSON.stringify(text.slice(0, 200));
  if (!URL.canParse(text)) {
    throw new UsageError(
      `--issuer ${shown} is not a URL: the issuer must be an https:// URL such as https://accounts.google.com`,
    );
  }
  const issuer = IssuerUrl.safeParse(text);
  if (!issuer.success) throw new UsageError(`--issuer ${shown}: ${issuer.error.issues[0]?.message}`);
}

/**
 * `hansard tenant oidc set`: checks the options and reads the secret file before any request, then sets
 * the settings; prints the redirect URI to register at the provider (stdout) and what was set (stderr).
 * @throws UsageError (exit 2) for bad options or secret file, or a `--tenant` not the token's
 */
export async function setTenantOidc(o: OidcSetOptions, io: Io): Promise<void> {
  checkIssuer(o.issuer);
  if (o.clientId.trim() === '') {
    throw new UsageError('--client-id is empty: give the client id the provider shows');
  }
  const settings: OidcSettingsRequest = {
    issuer: o.issuer,
    client_id: o.clientId,
    client_secret: readSecretFile(o.clientSecretFile, io.cwd, (line) =>
      io.stderr.write(`hansard: warning: ${escapeControl(line)}\n`),
    ),
    ...(o.allowedDomains !== undefined ? { allowed_domains: parseDomains(o.allowedDomains) } : {}),
    ...(o.groupsClaim !== undefined ? { groups_claim: o.groupsClaim } : {}),
    ...(o.roleMap !== undefined ? { role_map: parseRoleMap(o.roleMap) } : {}),
    ...(o.defaultRole !== undefined
      ? { default_role: o.defaultRole === 'none' ? null : (o.defaultRole as Role) }
      : {}),
  };
  const sign = api(o, io);
  const tenant = await ownTenant(sign, o);
  const view = await sign.setOidc(tenant, settings, o.check);
  if (o.json) return printJson(io, view);
  io.stdout.write(`${view.redirect_uri}\n`);
  io.stderr.write(
    `${escapeControl(`OIDC sign-in set for tenant ${view.tenant}: ${view.issuer}, client ${view.client_id}`)}\n` +
      `Register the redirect URI above at the provider, and as post-logout redirect URI:\n` +
      `  ${view.post_logout_redirect_uri}\n` +
      (o.check ? '' : 'Not checked (--no-check): the first sign-in will tell whether the issuer answers.\n'),
  );
}

/** The settings in lines, as `show` prints them. */
function describe(v: OidcSettingsView): string[] {
  const map = Object.entries(v.role_map).map(([g, r]) => `${g}=${r}`);
  return [
    `tenant                    ${v.tenant}`,
    `issuer                    ${v.issuer}`,
    `client_id                 ${v.client_id}`,
    // Settings never exist without a secret (the API takes none without one); it is never answered.
    'client_secret             set (sealed; never shown)',
    `allowed_domains           ${v.allowed_domains.length ? v.allowed_domains.join(',') : '(any)'}`,
    `groups_claim              ${v.groups_claim}`,
    `role_map                  ${map.length ? map.join(',') : '(none)'}`,
    `default_role              ${v.default_role ?? 'none (refused until given a role)'}`,
    `redirect_uri              ${v.redirect_uri}`,
    `post_logout_redirect_uri  ${v.post_logout_redirect_uri}`,
    `updated                   ${v.updated_at} by ${v.updated_by}`,
  ];
}

/** `hansard tenant oidc show`: the settings (never the secret); none set: a line saying so, on stdout as the answer (`--json`: null). */
export async function showTenantOidc(o: OidcServerOptions, io: Io): Promise<void> {
  const sign = api(o, io);
  const tenant = await ownTenant(sign, o);
  const view = await sign.getOidc(tenant);
  if (o.json) return printJson(io, view);
  if (!view) {
    io.stdout.write(`tenant ${tenant} has no OIDC sign-in: set one with hansard tenant oidc set\n`);
    return;
  }
  // What an admin typed (a client id, group names) is escaped: it cannot move the cursor or forge a line.
  for (const line of describe(view)) io.stdout.write(`${escapeControl(line)}\n`);
}

/**
 * `hansard tenant oidc remove`: `{tenant, removed}` (`--json`) or a line saying it. Idempotent: a tenant
 * with nothing set (the server's 404 for the token's own tenant) is done already, exit 0, `removed: false`.
 */
export async function removeTenantOidc(o: OidcServerOptions, io: Io): Promise<void> {
  const sign = api(o, io);
  const tenant = await ownTenant(sign, o);
  const removed = await sign.removeOidc(tenant);
  if (o.json) return printJson(io, { tenant, removed });
  io.stdout.write(
    removed
      ? `OIDC sign-in removed for tenant ${tenant}: link tokens keep working\n`
      : `no sign-in was set for tenant ${tenant}: nothing to remove\n`,
  );
}
