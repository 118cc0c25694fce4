/** `hansard token create|list|revoke` (DESIGN §6): token administration on the server (admin scope). */
import type { Command } from 'commander';
import { SCOPES } from '../../contract/scopes.js';
import { escapeControl } from '../../log/format/escape.js';
import { clientFrom, retryNotice } from '../api/config.js';
import { UsageError } from '../api/errors.js';
import { type Io, printJson } from '../api/io.js';
import { jsonOption } from './options.js';

export function registerToken(program: Command, io: Io): void {
  const token = program
    .command('token')
    .description('create, list and revoke API tokens (needs an admin token)');
  const server = (c: Command) =>
    c
      .option('--url <url>', 'server URL (env HANSARD_URL)')
      .option('--token <token>', 'admin token (env HANSARD_TOKEN)');

  server(
    token
      .command('create')
      .description('create a token; its secret is printed once')
      .requiredOption('--scopes <list>', `comma-separated scopes: ${SCOPES.join(', ')}`)
      .option('--session <sid>', 'bind the token to one session id')
      .option('--label <text>', 'a name to recognise it by')
      .option('--ttl <seconds>', 'expire after this many seconds'),
  )
    .addOption(jsonOption())
    .action((o: TokenCreateOptions) => createToken(o, io));

  server(token.command('list').description("list the tenant's tokens (never their secrets)"))
    .addOption(jsonOption())
    .action((o: TokenListOptions) => listTokens(o, io));

  server(token.command('revoke <id>').description('revoke a token by its id (tok_…)')).action(
    (id: string, o: TokenRevokeOptions) => revokeToken(id, o, io),
  );
}

/** The options of `hansard token create`, as commander parses them. */
export interface TokenCreateOptions {
  scopes: string;
  session?: string;
  label?: string;
  ttl?: string;
  url?: string;
  token?: string;
  json?: boolean;
}

/**
 * `hansard token create`: a token with `o.scopes` (comma-separated), bound to a session and expiring when
 * asked; its secret on stdout, once.
 * @throws UsageError for an unknown scope or a `--ttl` that is not whole seconds
 */
export async function createToken(o: TokenCreateOptions, io: Io): Promise<void> {
  const scopes = o.scopes
    .split(',')
    .map((s) => s.trim())
    .filter(Boolean);
  const bad = scopes.filter((s) => !(SCOPES as readonly string[]).includes(s));
  if (bad.length) throw new UsageError(`unknown scope ${bad.join(', ')}: use ${SCOPES.join(', ')}`);
  const ttl = o.ttl === undefined ? null : Number(o.ttl);
  if (ttl !== null && !Number.isInteger(ttl)) throw new UsageError('--ttl is a whole number of seconds');
  const res = await clientFrom(o, io.env, retryNotice(io)).request('POST', '/v1/tokens', {
    body: JSON.stringify({
      scopes,
      session: o.session ?? null,
      label: o.label ?? null,
      ttl_seconds: ttl,
    }),
    contentType: 'application/json',
  });
  const body = res.body as {
    token: string;
    id: string;
    scopes: string[];
    session: string | null;
    expires_at: string | null;
  };
  if (o.json) return printJson(io, body);
  io.stdout.write(`${body.token}\n`);
  io.stderr.write(
    `token ${body.id} with scopes ${body.scopes.join(', ')}${body.session ? `, bound to session ${body.session}` : ''}${body.expires_at ? `, expires ${body.expires_at}` : ''}: shown once, keep it safe\n`,
  );
}

/** The options of `hansard token list`, as commander parses them. */
export interface TokenListOptions {
  url?: string;
  token?: string;
  json?: boolean;
}

/** `hansard token list`: the tenant's tokens, one row each (never a secret), or as JSON. */
export async function listTokens(o: TokenListOptions, io: Io): Promise<void> {
  const res = await clientFrom(o, io.env, retryNotice(io)).request('GET', '/v1/tokens');
  const { tokens } = res.body as { tokens: Array<Record<string, unknown>> };
  if (o.json) return printJson(io, tokens);
  for (const t of tokens) {
    const state = t.revoked_at
      ? 'revoked'
      : t.expires_at && Date.parse(String(t.expires_at)) < Date.now()
        ? 'expired'
        : 'active';
    const expires = t.expires_at
      ? `until ${String(t.expires_at).slice(0, 16).replace('T', ' ')}`
      : 'no expiry';
    const session = t.session ? `session ${String(t.session)}` : 'any session';
    // A label is whatever a token's minter wrote: escaped like the text replay, so it cannot move the
    // cursor, forge a row or retitle the terminal (issue 8.4's kind).
    const row = `${t.id}  ${state.padEnd(7)}  ${(t.scopes as string[]).join(',').padEnd(28)}  ${session.padEnd(38)}  ${expires.padEnd(22)}  ${t.label ?? ''}`;
    io.stdout.write(`${escapeControl(row)}\n`);
  }
}

/** The options of `hansard token revoke`, as commander parses them. */
export interface TokenRevokeOptions {
  url?: string;
  token?: string;
}

/**
 * `hansard token revoke <id>`: revokes the token `id` (tok_…).
 * @throws UsageError when given a secret (hns_…) instead of an id
 */
export async function revokeToken(id: string, o: TokenRevokeOptions, io: Io): Promise<void> {
  // The secret is what people have at hand; the server knows tokens by id only (it stores no secret).
  if (id.startsWith('hns_')) {
    throw new UsageError(
      "revoke takes the token's id (tok_…, shown by hansard token list and when it was created), not the token itself",
    );
  }
  await clientFrom(o, io.env, retryNotice(io)).request('DELETE', `/v1/tokens/${encodeURIComponent(id)}`);
  io.stderr.write(`revoked ${id}\n`);
}
