/**
 * `hansard work status` shows what a waiting item waits on (docs/work.md): its line ends with
 * `waiting on <kind>[:<ref>]: <reason>`, and `--json` has `waiting_on` per item; an item that is no longer
 * waiting shows none. Against the real server of `hansard serve`.
 */
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { runCli } from '../../../lib/client/cli/main.js';
import { newId } from '../../../lib/log/format/ids.js';
import { useServer } from '../../support/server.js';

const SID = newId('s');
const srv = useServer({ real: true, tokens: { bound: { scopes: ['report', 'read'], session: SID } } });

async function work(args: string[], env: Record<string, string>) {
  let out = '';
  let err = '';
  const code = await runCli(['work', ...args], {
    stdout: { write: (s: string | Uint8Array) => (out += String(s)) },
    stderr: { write: (s: string) => (err += s) },
    env: { HANSARD_URL: srv.url, USER: 'priya', ...env },
    cwd: tmpdir(),
  });
  return { code, out, err };
}

describe('hansard work status', () => {
  it('shows what a waiting item waits on, in its line and in --json', async () => {
    const env = {
      HANSARD_STATE_DIR: mkdtempSync(join(tmpdir(), 'hansard-work-wait-')),
      HANSARD_SESSION_ID: SID,
      HANSARD_SESSION_TOKEN: srv.tokens.bound,
    };
    const start = async (summary: string) => {
      const r = await work(['start', '--mode', 'implementing', '--summary', summary], env);
      expect(r.code, r.err).toBe(0);
      return /started (wk_[0-9A-Z]{26})/.exec(r.out)![1]!;
    };
    const waiting = await start('Parser error recovery');
    const active = await start('Lexer cleanup');
    const w = await work(
      ['wait', waiting, '--on', 'review:PR-12', '--reason', 'Needs a maintainer review'],
      env,
    );
    expect(w.code, w.err).toBe(0);
    const ci = await start('Release notes');
    expect((await work(['wait', ci, '--on', 'ci', '--reason', 'The build runs'], env)).code).toBe(0);

    const s = await work(['status'], env);
    expect(s.code, s.err).toBe(0);
    const line = (id: string) => s.out.split('\n').find((l) => l.startsWith(id))!;
    // what it waits on ends the freshness; whose the item is closes the line
    expect(line(waiting)).toMatch(
      /observed; .*; waiting on review:PR-12: Needs a maintainer review {2}\(actor [^,]+, system hansard-cli, session s_\w+\)$/,
    );
    expect(line(ci)).toMatch(/; waiting on ci: The build runs {2}\(actor /);
    expect(line(active)).not.toContain('waiting on');

    const j = JSON.parse((await work(['status', '--json'], env)).out) as {
      items: {
        id: string;
        waiting_on: { dependency: { kind: string; ref?: string }; reason: string } | null;
      }[];
    };
    const byId = new Map(j.items.map((i) => [i.id, i]));
    expect(byId.get(waiting)!.waiting_on).toMatchObject({
      dependency: { kind: 'review', ref: 'PR-12' },
      reason: 'Needs a maintainer review',
    });
    expect(byId.get(active)!.waiting_on).toBeNull();
  }, 60_000);
});
