/** `hansard session report --state S --note N` (seed 000, docs/spec): an agent's status report. */
import { type Command, Option } from 'commander';
import { isId } from '../log/ids.js';
import { STATES } from '../service/status-schemas.js';
import { clientFrom, retryNotice } from './config.js';
import { UsageError } from './errors.js';
import { type Io, printJson } from './io.js';
import { jsonOption } from './options.js';

export function registerSession(program: Command, io: Io): void {
  const session = program.command('session').description('report on a session');
  session
    .command('report')
    .description('post a status report: what the agent says it is doing (a declaration, not proof)')
    .addOption(new Option('--state <state>', 'the state').choices([...STATES]).makeOptionMandatory())
    .option('--note <text>', 'one line, at most 240 characters', '')
    .option(
      '--events <json>',
      'declared events, a JSON array of at most 4: [{"kind":"evidence","evidence":[{"type":"test","ref":"npm test","result":"passed"}]}]; kinds plan, decision, assumption, evidence, blocked, lesson',
    )
    .addOption(new Option('--session <sid>', 'the session id').env('HANSARD_SESSION_ID'))
    .addOption(
      new Option('--session-token <token>', 'a session-bound token (instead of HANSARD_TOKEN)').env(
        'HANSARD_SESSION_TOKEN',
      ),
    )
    .option('--url <url>', 'server URL (env HANSARD_URL)')
    .option('--token <token>', 'token with the report scope (env HANSARD_TOKEN)')
    .addOption(jsonOption())
    .addHelpText(
      'after',
      '\nExample:\n  hansard session report --session s_… --state working --note "Checking the implementation"',
    )
    .action(
      async (o: {
        state: string;
        note: string;
        events?: string;
        session?: string;
        sessionToken?: string;
        url?: string;
        token?: string;
        json?: boolean;
      }) => {
        if (!o.session) throw new UsageError('which session? pass --session s_… or set HANSARD_SESSION_ID');
        if (!isId('s', o.session))
          throw new UsageError(`--session ${o.session} is not a session id (s_ followed by a ULID)`);
        let events: unknown = [];
        if (o.events !== undefined) {
          try {
            events = JSON.parse(o.events);
          } catch {
            throw new UsageError('--events is not valid JSON: give an array such as [{"kind":"plan"}]');
          }
        }
        const client = clientFrom({ url: o.url, token: o.sessionToken ?? o.token }, io.env, retryNotice(io));
        const res = await client.request('POST', `/v1/sessions/${o.session}/status`, {
          body: JSON.stringify({ state: o.state, note: o.note, events }),
          contentType: 'application/json',
        });
        if (o.json) return printJson(io, res.body);
        io.stdout.write(`reported ${o.state} for ${o.session}\n`);
        // A report may come before the segments, but a mistyped id also looks like this: say so.
        if ((res.body as { writers?: number }).writers === 0) {
          io.stderr.write(
            `note: the server has no segments of ${o.session} yet. If you expected some, check the session id ` +
              '(hansard upload prints it; the board lists it under "no segments yet").\n',
          );
        }
      },
    );
}
