/**
 * `hansard keys list|rotate [--data DIR] [--json]` (issue 15.2): the local deployment's digest signing
 * keys (lib/audit/local-keyring.ts), kept in `DIR/keys/`. An operator's command: it works on the data
 * directory itself, beside a running server (which reads the keys again at each digest, so a rotation
 * takes effect at the next one). On AWS the key is a KMS key: rotate it there (docs/deploy.md).
 */
import { existsSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { type Command, Option } from 'commander';
import { UsageError } from '../api/errors.js';
import { type Io, printJson } from '../api/io.js';
import { jsonOption } from './options.js';

interface KeysOptions {
  data: string;
  json?: boolean;
}

const dataOption = () =>
  new Option(
    '--data <dir>',
    'the data directory (as `hansard serve --data`; one serve has started in: it holds state.sqlite)',
  )
    .env('HANSARD_DATA_DIR')
    .default('./.hansard');

export function registerKeys(program: Command, io: Io): void {
  const keys = program
    .command('keys')
    .description('the Ed25519 keys that sign the session digests of a local data directory')
    .addHelpText(
      'after',
      `
Every few minutes, and when a writer ends, hansard serve writes a signed digest per session: the SHA-256
of each chunk stored since the previous digest, chained to that digest's signature. Anyone holding the
public key can then check an exported bundle offline (hansard verify --digests BUNDLE --public-key KEY).

The keys live in DIR/keys/: KEY_ID.pem is the private key (mode 0600: back it up like a password),
KEY_ID.json its public half. hansard serve makes the first on its first start. Public keys are served
at GET /v1/keys. A rotated key is retired, never deleted: what it signed stays verifiable.

Examples:
  hansard keys list                        the keys of ./.hansard, the current one marked
  hansard keys list --json                 the same as GET /v1/keys answers it
  hansard keys rotate --data /srv/hansard  a new current key; the old one is retired`,
    );
  keys
    .command('list')
    .description('list the signing keys, oldest first; the current one signs new digests')
    .addOption(dataOption())
    .addOption(jsonOption())
    .action((o: KeysOptions) => listKeys(o, io));
  keys
    .command('rotate')
    .description(
      'make a new current signing key and retire the old one (kept, still verifies what it signed)',
    )
    .addOption(dataOption())
    .addOption(jsonOption())
    .addHelpText(
      'after',
      `
Rotate when a private key may have leaked, or on your schedule. Digests already written keep their
key_id and verify with the retired key; give auditors the new public key (GET /v1/keys, or
hansard keys list --json). A running hansard serve signs with the new key from its next digest.`,
    )
    .action((o: KeysOptions) => rotateKeys(o, io));
}

/**
 * Prints the keys of `o.data` (text: one line each; `--json`: `{keys: PublicKeyInfo[]}` as GET /v1/keys).
 * @throws UsageError (exit 2) when `o.data` is not a hansard data directory (no state.sqlite)
 */
export async function listKeys(o: KeysOptions, io: Io): Promise<void> {
  const { LocalKeyring } = await import('../../audit/local-keyring.js');
  const keyring = new LocalKeyring(dataDir(o, io));
  const keys = keyring.list();
  if (o.json) {
    printJson(io, { keys });
    return;
  }
  if (keys.length === 0) {
    io.stderr.write(`no signing key in ${keyring.dir} yet: hansard serve makes one on its first start\n`);
    return;
  }
  const current = keys.filter((k) => k.retired_at === null).at(-1)?.key_id;
  for (const k of keys) {
    const state = k.key_id === current ? 'current' : k.retired_at ? `retired ${k.retired_at}` : 'not used';
    io.stdout.write(`${k.key_id}  created ${k.created_at}  ${state}\n`);
  }
}

/**
 * Makes a new current key in `o.data` and retires the others; prints the new key (`--json`: `{current,
 * retired}`).
 * @throws UsageError (exit 2) when `o.data` is not a hansard data directory (no state.sqlite): a typo
 *   must not make a keys/ folder and a key nobody signs with
 */
export async function rotateKeys(o: KeysOptions, io: Io): Promise<void> {
  const { LocalKeyring } = await import('../../audit/local-keyring.js');
  const keyring = new LocalKeyring(dataDir(o, io));
  const { current, retired } = keyring.rotate();
  if (o.json) {
    printJson(io, { current, retired });
    return;
  }
  io.stdout.write(`${current.key_id}\n`);
  io.stderr.write(
    `new signing key ${current.key_id} in ${keyring.dir}; ${
      retired.length === 0
        ? 'no key was retired'
        : `retired ${retired.map((k) => k.key_id).join(', ')} (kept: it still verifies what it signed)`
    }\nits public key: hansard keys list --json, or GET /v1/keys of the server\n`,
  );
}

/**
 * The data directory `o.data` names, absolute, once it is known to be one: a hansard data directory holds
 * the state database `state.sqlite`, made by the first `hansard serve` or `hansard tenant create --data`
 * (lib/deploy/local-stores.ts).
 * @throws UsageError naming the folder and how to name the right one
 */
function dataDir(o: KeysOptions, io: Io): string {
  const dir = resolve(io.cwd, o.data);
  const fix =
    'pass the folder hansard serve uses with --data DIR or HANSARD_DATA_DIR (its startup line says "data in DIR")';
  if (!existsSync(dir)) throw new UsageError(`there is no data directory at ${dir}: ${fix}`);
  if (!existsSync(join(dir, 'state.sqlite'))) {
    throw new UsageError(`${dir} is not a hansard data directory (it holds no state.sqlite): ${fix}`);
  }
  return dir;
}
