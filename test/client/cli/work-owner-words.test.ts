/**
 * What `hansard work` says about whose item it is (the new-user trial of issues 24/25), against the real
 * server of `hansard serve` with two people's tokens (two chains): Alice starts an item, Bob tries it.
 * - Bob's refusal says in plain words who may write the item and what to do instead (start his own), for
 *   his token and for a session token made from it; it names no owner and no "chain".
 * - Alice's own token naming another actor is `409 work_mismatch` naming the command that shows the
 *   item's session, system and actor, and `work status` (by id, by session, `--json`) shows them.
 * - Offline (seed 004: heartbeat and status are local-only and work offline), Bob's heartbeat of Alice's
 *   item says ownership was not checked, and `work status` lists the lease it wrote as not acknowledged;
 *   the server's refusal later forgets it.
 * - docs/work.md's first example runs as written in a plain shell; `work status --help` says what it lists.
 */
import { existsSync, mkdtempSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { runCli } from '../../../lib/client/cli/main.js';
import { newId } from '../../../lib/log/format/ids.js';
import { request } from '../../support/http.js';
import { useServer } from '../../support/server.js';

const srv = useServer({ real: true, tokens: { alice: ['report', 'read'], bob: ['report', 'read'] } });

/** Nothing listens on port 1 of loopback: the server is away (connection refused). */
const AWAY = 'http://127.0.0.1:1';

type Run = { code: number; out: string; err: string };

/** `hansard <args>` in this process with exactly `env` (no HANSARD_SESSION_ID unless given). */
async function hansard(args: string[], env: Record<string, string | undefined>): Promise<Run> {
  let out = '';
  let err = '';
  const code = await runCli(args, {
    stdout: { write: (s: string | Uint8Array) => (out += String(s)) },
    stderr: { write: (s: string) => (err += s) },
    env: { HANSARD_URL: srv.url, ...env },
    cwd: tmpdir(),
  });
  return { code, out, err };
}

const person = (name: 'alice' | 'bob') => ({
  HANSARD_STATE_DIR: mkdtempSync(join(tmpdir(), `hansard-work-${name}-`)),
  HANSARD_TOKEN: srv.tokens[name],
  USER: name,
});

/** Alice starts an item in a new session; its id and session. */
async function alicesItem(): Promise<{ id: string; sid: string; alice: ReturnType<typeof person> }> {
  const alice = person('alice');
  const sid = newId('s');
  const r = await hansard(
    ['work', 'start', '--session', sid, '--mode', 'implementing', '--summary', 'Parser error recovery'],
    alice,
  );
  expect([r.code, r.err]).toEqual([0, '']);
  return { id: /started (wk_\w{26})/.exec(r.out)![1]!, sid, alice };
}

describe("another person's work item", () => {
  it("Bob's heartbeat, checkpoint and stop say plainly who may write it and what to do instead, naming no owner", async () => {
    const { id, sid } = await alicesItem();
    const bob = person('bob');
    const as = ['--session', sid, '--actor', 'alice'];
    for (const args of [
      ['heartbeat', id, ...as],
      ['checkpoint', id, ...as, '--summary', 'Taking it over'],
      ['stop', id, ...as, '--completed'],
    ]) {
      const r = await hansard(['work', ...args], bob);
      expect(r.code, args[0]).toBe(2);
      expect(r.err, args[0]).toContain(
        `work ${id} was started with another token: only the token it was started with`,
      );
      expect(r.err, args[0]).toContain('or an admin may renew, change or stop it');
      expect(r.err, args[0]).toContain(
        'To report your own work, start an item of your own: hansard work start',
      );
      expect(r.err, args[0]).toContain('(403 not_owner)');
      expect(r.err, args[0]).not.toMatch(/chain/);
    }
    // A session token Bob made for that session is told the same, as a session token.
    const minted = await request(srv, 'POST', `/v1/sessions/${sid}/tokens`, {
      token: srv.tokens.bob,
      json: { scopes: ['report', 'read'] },
    });
    expect(minted.status).toBe(201);
    const r = await hansard(['work', 'heartbeat', id, ...as], {
      ...bob,
      HANSARD_TOKEN: undefined,
      HANSARD_SESSION_TOKEN: minted.json.token,
    });
    expect(r.code).toBe(2);
    expect(r.err).toContain(
      `work ${id} was started with another token than the one this session token was made from: only`,
    );
    expect(r.err).toContain('start an item of your own: hansard work start');
    expect(r.err).not.toMatch(/chain/);
  });

  it("Alice's token naming another actor is 409 work_mismatch naming the command that shows the item's owner, which shows it", async () => {
    const { id, sid, alice } = await alicesItem();
    const wrong = await hansard(['work', 'heartbeat', id, '--session', sid, '--actor', 'al'], alice);
    expect(wrong.code).toBe(2);
    expect(wrong.err).toContain(`work ${id} was started with another actor than this request names`);
    expect(wrong.err).toContain(`\`hansard work status ${id} --json\` shows them`);
    expect(wrong.err).toContain('(409 work_mismatch)');
    const cp = await hansard(
      ['work', 'checkpoint', id, '--session', sid, '--actor', 'al', '--system', 'codex', '--summary', 'x y'],
      alice,
    );
    expect(cp.code).toBe(2);
    expect(cp.err).toContain('another system and actor than this request names');

    // The command it names, run by someone with no file of the item: the session, system and actor.
    const fresh = person('bob');
    const byId = await hansard(['work', 'status', id, '--json'], fresh);
    expect([byId.code, byId.err]).toEqual([0, '']);
    const items = JSON.parse(byId.out).items as Record<string, unknown>[];
    expect(items.map((i) => [i.id, i.session, i.system, i.actor, i.acknowledged])).toEqual([
      [id, sid, 'hansard-cli', 'alice', true],
    ]);
    const text = await hansard(['work', 'status', id], fresh);
    expect(text.out).toMatch(
      new RegExp(
        `^${id}  implementing  "Parser error recovery"  observed; .*  \\(actor alice, system hansard-cli, session ${sid}\\)\n$`,
      ),
    );
    const bySession = await hansard(['work', 'status', '--session', sid, '--json'], fresh);
    expect(JSON.parse(bySession.out).items).toMatchObject([{ id, system: 'hansard-cli', actor: 'alice' }]);
    // Named right, it works.
    const ok = await hansard(['work', 'heartbeat', id, '--session', sid, '--actor', 'alice'], alice);
    expect([ok.code, ok.err]).toEqual([0, '']);
  });

  it("offline, Bob's heartbeat says ownership was not checked and status lists its lease as not acknowledged; the server's refusal later forgets it", async () => {
    const { id, sid } = await alicesItem();
    const bob = person('bob');
    const as = ['--session', sid, '--actor', 'alice'];
    const hb = await hansard(['work', 'heartbeat', id, ...as], { ...bob, HANSARD_URL: AWAY });
    expect(hb.code).toBe(0);
    expect(hb.out).toMatch(new RegExp(`^${id}: observed on this machine, lease until \\S+; not checked: `));
    expect(hb.out).toContain('nobody checked that it exists or that this token may renew it');
    const json = await hansard(['work', 'heartbeat', id, ...as, '--json'], { ...bob, HANSARD_URL: AWAY });
    expect(JSON.parse(json.out)).toMatchObject({ sent: false, owner_checked: false });

    const st = await hansard(['work', 'status', '--session', sid], { ...bob, HANSARD_URL: AWAY });
    expect(st.code).toBe(0);
    expect(st.out).toMatch(
      new RegExp(
        `^${id}  \\(heartbeat only\\)  observed on this machine \\(lease until [0-9:]+ UTC\\); not acknowledged by the server: `,
      ),
    );
    expect(st.out).toContain(`(actor alice, system hansard-cli, session ${sid})`);
    const sj = await hansard(['work', 'status', '--session', sid, '--json'], { ...bob, HANSARD_URL: AWAY });
    expect(JSON.parse(sj.out).items).toMatchObject([
      { id, session: sid, actor: 'alice', acknowledged: false, shown: 'observed_here', mode: null },
    ]);
    // Without --session too: what this machine holds.
    expect((await hansard(['work', 'status'], { ...bob, HANSARD_URL: AWAY })).out).toContain(id);

    // The server back: it refuses Bob, and this machine stops claiming the item was observed here.
    const back = await hansard(['work', 'heartbeat', id, ...as], bob);
    expect(back.code).toBe(2);
    expect(back.err).toContain('(403 not_owner)');
    expect(existsSync(join(bob.HANSARD_STATE_DIR, 'work', `${id}.lease.json`))).toBe(false);
    const after = await hansard(['work', 'status', '--session', sid], { ...bob, HANSARD_URL: AWAY });
    expect(after.out).toBe(`no work items for ${sid}\n`);
  });
});

describe('what the docs and help say', () => {
  it("docs/work.md's first step runs as written in a plain shell (no HANSARD_SESSION_ID)", async () => {
    const doc = readFileSync(new URL('../../../docs/work.md', import.meta.url), 'utf8');
    const block = /1\. \*\*Start once\*\*[^`]*```sh\n([\s\S]*?)```/.exec(doc)?.[1];
    expect(block).toBeDefined();
    const line = block!
      .split('\n')
      .filter((l) => l.trim() && !l.trim().startsWith('#'))
      .join(' ')
      .replace(/\\ +/g, ' ');
    // Its placeholders: a session id, and the optional [--ttl …].
    const sid = newId('s');
    const command = line.replace(/\[[^\]]*\]/g, '').replace(/s_01K…/g, sid);
    const args = (command.match(/"[^"]*"|\S+/g) ?? []).map((a) => a.replace(/^"|"$/g, ''));
    expect(args.slice(0, 3)).toEqual(['hansard', 'work', 'start']);
    const r = await hansard(args.slice(1), person('alice'));
    expect(r.err).toBe('');
    expect(r.code).toBe(0);
    expect(r.out).toMatch(/^started wk_\w{26}: implementing, observed, lease 15 min\n$/);
  });

  it('work status --help says it lists every item of a session, whoever started it, or of this machine', async () => {
    const r = await hansard(['work', 'status', '--help'], {});
    const help = r.out.replace(/\s+/g, ' ');
    expect(help).not.toContain("the caller's work items");
    expect(help).toContain(
      'with --session (or HANSARD_SESSION_ID) every item of that session, whoever started it',
    );
    expect(help).toContain('else the items of the sessions this machine holds');
    expect(help).toContain('not acknowledged');
  });
});
