/**
 * `hansard people list|link|unlink|role` (issue 29 items 2 and 4; docs/sign-in.md): a tenant's people,
 * their sign-in identities by email, through the server's `/v1/people` with an admin token
 * (lib/client/api/sign-in.ts). `link USER_ID EMAIL` makes the board's /people/{USER_ID} that person's own
 * ("my sessions"); `role EMAIL ROLE` sets their own role over what the role map gives.
 */
import type { Command } from 'commander';
import {
  EmailAddress,
  normalEmail,
  PERSON_ROLES,
  PersonId,
  type PersonView,
} from '../../contract/sign-in.js';
import { escapeControl, hasControl } from '../../log/format/escape.js';
import { clientFrom, retryNotice } from '../api/config.js';
import { UsageError } from '../api/errors.js';
import { type Io, printJson } from '../api/io.js';
import { type PersonChange, SignInApi } from '../api/sign-in.js';
import { jsonOption } from './options.js';

/** What `people role` takes: a role, `none` (refused), or `mapped` (back to the role map). */
const ROLE_WORDS = [...PERSON_ROLES, 'mapped'] as const;
/** Most pages `people list` reads (200 people each). */
const MAX_PAGES = 50;

const HELP = `
Examples:
  hansard people list
  hansard people link priya priya@example.com     the record's person priya is priya@example.com
  hansard people unlink priya priya@example.com
  hansard people role sam@example.com admin       sam is an admin whatever the role map says
  hansard people role sam@example.com none        sam is refused at their next request
  hansard people role sam@example.com mapped      back to what the tenant's role map gives

Roles: viewer (board, read), member (+ report), admin (+ tokens, alerts, sign-in).
Needs an admin token (--token or HANSARD_TOKEN); the server is --server or HANSARD_URL.`;

/** The options every `people` subcommand takes. */
export interface PeopleOptions {
  server?: string;
  token?: string;
  json?: boolean;
}

export function registerPeople(program: Command, io: Io): void {
  const people = program
    .command('people')
    .description(
      "a tenant's people: link sign-in identities to the record's person ids, set roles (admin token)",
    )
    .addHelpText('after', HELP);
  const common = (c: Command) =>
    c
      .option('--server <url>', 'hansard server URL (env HANSARD_URL)')
      .option('--token <token>', 'admin token (env HANSARD_TOKEN)')
      .addOption(jsonOption());

  common(people.command('list').description('every person: email, own role, linked person ids, last sign-in'))
    .addHelpText('after', '\nExample:\n  hansard people list --json')
    .action((o: PeopleOptions) => listPeople(o, io));
  common(people.command('link <user_id> <email>').description('link a person id of the record to an email'))
    .addHelpText('after', '\nExample:\n  hansard people link priya priya@example.com')
    .action((userId: string, email: string, o: PeopleOptions) =>
      changePerson(email, { link: [personId(userId)] }, o, io),
    );
  common(people.command('unlink <user_id> <email>').description('unlink a person id from an email'))
    .addHelpText('after', '\nExample:\n  hansard people unlink priya priya@example.com')
    .action((userId: string, email: string, o: PeopleOptions) =>
      unlinkPerson(personId(userId), email, o, io),
    );
  common(
    people
      .command('role <email> <role>')
      .description(`set a person's own role: ${ROLE_WORDS.join('|')} (mapped: the role map decides)`),
  )
    .addHelpText(
      'after',
      '\nExamples:\n  hansard people role sam@example.com admin\n  hansard people role sam@example.com mapped\n\n' +
        "An email outside the tenant's allowed domains gets the role with a warning: it is refused at\n" +
        'sign-in until its domain is allowed (hansard tenant oidc set --allowed-domains).',
    )
    .action((email: string, role: string, o: PeopleOptions) =>
      changePerson(email, { role: roleWord(role) }, o, io),
    );
}

function api(o: PeopleOptions, io: Io): SignInApi {
  return new SignInApi(
    clientFrom({ url: o.server, urlFlag: '--server', token: o.token }, io.env, retryNotice(io)),
  );
}

/**
 * A person id as `link`/`unlink` take it. A writer's `user_id` may be any text (`--user 'Priya Raman'`
 * records a space, and punctuation or other scripts are as valid), so only what no one types on purpose is
 * refused: a control or invisible character (a newline, an escape, a bidi override, a zero-width space:
 * what the record shows escaped) and a space at either end.
 * @throws UsageError (exit 2) for what is not a person id, showing it escaped
 */
function personId(text: string): string {
  const why = !PersonId.safeParse(text).success
    ? 'is not 1 to 200 characters'
    : hasControl(text)
      ? 'holds a control or invisible character'
      : text.trim() !== text
        ? 'has a space at one end'
        : null;
  if (why) {
    throw new UsageError(
      `person id ${escapeControl(JSON.stringify(text.slice(0, 80)))} ${why}: a person id is a user_id as the record shows it ` +
        '(the board’s /people/{id}, hansard replay), 1 to 200 characters with no control or invisible character and no space at either end',
    );
  }
  return text;
}

/** @throws UsageError (exit 2) for what is not an email address */
function email(text: string): string {
  const key = normalEmail(text);
  if (!EmailAddress.safeParse(key).success) {
    throw new UsageError(
      `${JSON.stringify(text.slice(0, 80))} is not an email address such as priya@example.com`,
    );
  }
  return key;
}

/** `mapped` → null; a role or `none` as it is. @throws UsageError (exit 2) for anything else */
function roleWord(text: string): PersonChange['role'] {
  if (!(ROLE_WORDS as readonly string[]).includes(text)) {
    throw new UsageError(`${JSON.stringify(text.slice(0, 40))} is not a role: use ${ROLE_WORDS.join(', ')}`);
  }
  return text === 'mapped' ? null : (text as NonNullable<PersonChange['role']>);
}

/** A person in one line: `email  role  ids  last sign-in`. */
function line(p: PersonView): string {
  const role = p.role ?? 'mapped';
  const ids = p.user_ids.length ? p.user_ids.join(',') : '-';
  return `${p.email}  ${role.padEnd(6)}  ${ids}  ${p.last_sign_in_at ? `signed in ${p.last_sign_in_at}` : 'never signed in'}`;
}

/** The columns of `people list`: a header, then a person a row. */
const COLUMNS = ['EMAIL', 'NAME', 'ROLE', 'PERSON IDS', 'LAST SIGN-IN'] as const;

/** A person as `people list` shows them, a cell a column (`-` for none). */
function cells(p: PersonView): string[] {
  return [
    p.email,
    p.name ?? '-',
    p.role ?? 'mapped',
    p.user_ids.length ? p.user_ids.join(',') : '-',
    p.last_sign_in_at ?? 'never',
  ];
}

/**
 * `rows` as aligned columns, two spaces apart, the last unpadded; each cell escaped first (a name is the
 * provider's, an id a writer's: neither moves the cursor or forges a row). Widths are counted in UTF-16
 * units, so a wide character may shift its row a little.
 */
function table(rows: readonly (readonly string[])[]): string {
  const escaped = rows.map((r) => r.map((c) => escapeControl(c)));
  const widths = escaped[0]?.map((_, i) => Math.max(...escaped.map((r) => r[i]?.length ?? 0))) ?? [];
  return escaped
    .map((r) => `${r.map((c, i) => (i === r.length - 1 ? c : c.padEnd(widths[i] ?? 0))).join('  ')}\n`)
    .join('');
}

/** `hansard people list`: every page, as a table with a header row, or all of them as one JSON list. */
export async function listPeople(o: PeopleOptions, io: Io): Promise<void> {
  const sign = api(o, io);
  const all: PersonView[] = [];
  let cursor: string | undefined;
  for (let page = 0; page < MAX_PAGES; page++) {
    const got = await sign.listPeople(200, cursor);
    all.push(...got.people);
    if (got.next === null) break;
    cursor = got.next;
  }
  if (o.json) return printJson(io, all);
  if (all.length === 0) {
    io.stdout.write('no people yet: they appear at their first sign-in, or with hansard people link\n');
    return;
  }
  io.stdout.write(table([[...COLUMNS], ...all.map(cells)]));
}

/**
 * `people link|unlink|role`: the change, then the person as it is now. A role given (not `none`) to an
 * email outside the tenant's allowed domains is set all the same, with a warning on stderr (`outsideWarning`).
 */
export async function changePerson(
  address: string,
  change: PersonChange,
  o: PeopleOptions,
  io: Io,
): Promise<void> {
  const sign = api(o, io);
  const person = await sign.setPerson(email(address), change);
  if (change.role !== undefined && change.role !== 'none') {
    const warning = await outsideWarning(sign, person.email);
    if (warning) io.stderr.write(`hansard: warning: ${escapeControl(warning)}\n`);
  }
  if (o.json) return printJson(io, person);
  io.stdout.write(`${escapeControl(line(person))}\n`);
}

/**
 * `people unlink USER_ID EMAIL`: an id the person does not have is said so (exit 0, nothing written, no
 * audit entry: `--json` prints the person as is); a person not known is left to the server's 404.
 */
export async function unlinkPerson(id: string, address: string, o: PeopleOptions, io: Io): Promise<void> {
  const key = email(address);
  const person = await api(o, io).getPerson(key);
  if (person === null || person.user_ids.includes(id)) return changePerson(key, { unlink: [id] }, o, io);
  if (o.json) return printJson(io, person);
  const linked = person.user_ids.length ? person.user_ids.join(', ') : 'none';
  io.stdout.write(
    `${escapeControl(`${id} was not linked to ${person.email}: nothing to unlink (linked: ${linked})`)}\n`,
  );
}

/**
 * Why `email` will be refused at sign-in whatever its role: its domain is not among the tenant's
 * `allowed_domains` (compared whole, as the server's role decision does); null when it is, when any
 * domain is let in, when the tenant has no sign-in, or when the settings cannot be read (the change is
 * made: this is advice, and the person answer has no room for it).
 */
async function outsideWarning(sign: SignInApi, email: string): Promise<string | null> {
  let settings: Awaited<ReturnType<SignInApi['getOidc']>>;
  try {
    settings = await sign.getOidc(await sign.ownTenant());
  } catch {
    return null;
  }
  const allowed = settings?.allowed_domains ?? [];
  const domain = email.slice(email.lastIndexOf('@') + 1);
  if (!settings || allowed.length === 0 || allowed.includes(domain)) return null;
  return (
    `${domain} is not among the domains tenant ${settings.tenant} lets in (${allowed.join(', ')}): ` +
    `${email} is refused at sign-in until it is (hansard tenant oidc set --allowed-domains)`
  );
}
