/**
 * Attack (issue 24 item 2, lib/log/analyse/evidence-match.ts): commands whose exit 0 comes from something other
 * than the command a claim names, recorded by an observed writer (the hook), then a report claiming
 * `npm test` (or `make check`) passed. Each trick is its own session, so no honest run of the command
 * is there to decide. Over real HTTP, the verdict read back from `GET …/status`.
 */
import { mkdirSync, mkdtempSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { openSession, type SessionWriter } from '../../lib/log/index.js';
import { request } from '../support/http.js';
import { readLocal } from '../support/segments.js';
import { useServer } from '../support/server.js';
import { upload } from '../support/stored.js';

const srv = useServer({ tokens: { reader: ['read'], reporter: ['report'], capture: ['ingest'] } });

const past = (s: number) => (Date.now() - 600_000 + s * 1000) * 1000;

/** A session whose hook writer recorded each of `runs` (`[input, exit]`), uploaded; its id. */
async function session(runs: [unknown, number][]): Promise<string> {
  mkdirSync(srv.workDir, { recursive: true });
  const w: SessionWriter = openSession(mkdtempSync(join(srv.workDir, 'trick-')), {
    agent: 'codex',
    provenance: 'hook',
  });
  runs.forEach(([input, exit], i) => {
    const t = w.turnStart({ context_message_ids: null }, { at: past(i * 10) });
    const a = w.action({ turn_id: t.turn_id, tool: 'Bash', input }, { at: past(i * 10 + 1) });
    w.actionResult(
      { action_id: a.id, status: exit === 0 ? 'ok' : 'error', exit_code: exit },
      { at: past(i * 10 + 2) },
    );
  });
  w.close();
  await upload(srv, srv.tokens.capture, readLocal({ sid: w.sid, w: w.w, dir: w.dir, path: w.path }));
  return w.sid;
}

async function verdict(sid: string, type: string, ref: string, result = 'passed') {
  const r = await request(srv, 'POST', `/v1/sessions/${sid}/status`, {
    token: srv.tokens.reporter,
    json: {
      state: 'needs_review',
      note: 'done',
      events: [{ kind: 'evidence', evidence: [{ type, ref, result }] }],
    },
  });
  expect(r.status, r.text).toBe(201);
  const s = await request(srv, 'GET', `/v1/sessions/${sid}/status`, { token: srv.tokens.reader });
  return s.json.events[0].evidence[0].check as { verdict: string; matched_by: string | null; reason: string };
}

/** Commands that exit 0 whatever `npm test` did: a shell runs something after it, or instead of it. */
const SEPARATED = [
  'npm test || true',
  'npm test; true',
  'npm test\t;true',
  'npm test ;true',
  'npm test -- || true',
  'npm test &>/dev/null; true',
  'npm test &>/dev/null; exit 0',
  'npm test & wait',
  'npm test | tee test.log',
  'npm test 2>&1 | cat',
  'npm test #\ntrue',
  'npm test\nexec true',
  'npm test \\\n; true',
  'npm test <<EOF\nx\nEOF\ntrue',
  'npm test `true`',
  'npm test $(exit 0)',
  // ${IFS} written apart: a parameter expansion, not a template placeholder
  ['npm test $', '{IFS}||true'].join(''),
  'npm test\u00a0||\u00a0true',
  'npm test\u2028true',
  'npm test\u0085true',
  'npm test\r\ntrue',
  '  npm   test  ;  true',
  'npm test; (exit 0)',
  'npm test && false || true',
  'npm test ; { true; }',
];

describe('commands a shell reads as more than the claimed one', () => {
  it('none of the separated forms supports "npm test passed" (string input)', async () => {
    for (const command of SEPARATED) {
      const sid = await session([[{ command }, 0]]);
      const v = await verdict(sid, 'test', 'npm test');
      expect(v.verdict, JSON.stringify(command)).toBe('unsupported');
    }
  });

  it('nor as a Codex argv through a shell (bash -lc, sh -c, zsh -c, /bin/bash -c)', async () => {
    for (const sh of ['bash', 'sh', 'zsh', '/bin/bash', '/usr/bin/zsh']) {
      for (const command of ['npm test || true', 'npm test\ntrue', 'npm test; exit 0']) {
        const sid = await session([[{ command: [sh, sh.endsWith('bash') ? '-lc' : '-c', command] }, 0]]);
        const v = await verdict(sid, 'test', 'npm test');
        expect(v.verdict, `${sh} ${JSON.stringify(command)}`).toBe('unsupported');
      }
    }
  });

  it('a look-alike space or an invisible character in the command or the ref is not "npm test"', async () => {
    for (const command of [
      'npm\u00a0test',
      'npm\u3000test',
      'npm\u200btest',
      'npm te\u200bst',
      'npm tes\u0074\u0301',
    ]) {
      const sid = await session([[{ command }, 0]]);
      const v = await verdict(sid, 'test', 'npm test');
      expect(v.verdict, JSON.stringify(command)).toBe('unsupported');
    }
    // the ref spelled with a look-alike does not find the failed run's exit 1 gone either
    const sid = await session([[{ command: 'npm test' }, 1]]);
    for (const ref of ['npm\u00a0test', 'ｎｐｍ ｔｅｓｔ']) {
      const v = await verdict(sid, 'test', ref);
      expect(v.verdict, JSON.stringify(ref)).toBe('unsupported');
    }
    // a ref with a character that renders as nothing is refused outright (issue 24.1 attack)
    const refused = await request(srv, 'POST', `/v1/sessions/${sid}/status`, {
      token: srv.tokens.reporter,
      json: {
        state: 'done',
        events: [{ kind: 'evidence', evidence: [{ type: 'test', ref: 'npm test\u200b', result: 'passed' }] }],
      },
    });
    expect(refused.status, refused.text).toBe(400);
    expect(refused.text).toContain('renders as nothing');
  });

  it('an exact failed run wins over a later passing run with arguments', async () => {
    const sid = await session([
      [{ command: 'npm test' }, 1],
      [{ command: 'npm test --script-shell=true' }, 0],
      [{ command: 'npm test -- --passWithNoTests -t zzz' }, 0],
    ]);
    const v = await verdict(sid, 'test', 'npm test');
    expect(v).toMatchObject({ verdict: 'unsupported', matched_by: 'command' });
  });

  it('arguments name the command (a prefix match) but a pass of it with arguments is claimed by call id', async () => {
    const sid = await session([[{ command: 'npm test -- --runInBand' }, 0]]);
    const v = await verdict(sid, 'test', 'npm test');
    expect(v).toMatchObject({ verdict: 'unsupported', matched_by: 'command_prefix' });
    expect(v.reason).toContain(
      'ran `npm test -- --runInBand`, with arguments that may change what runs: name its call id',
    );
    const failed = await session([[{ command: 'npm test -- --runInBand' }, 1]]);
    expect(await verdict(failed, 'test', 'npm test', 'failed')).toMatchObject({
      verdict: 'supported',
      matched_by: 'command_prefix',
    });
  });

  // Held: a pass claimed of a command's first words, when the recorded command has arguments, is
  // unsupported (the reason says to name the call id); a failure still is.
  it('arguments that replace what runs do not support "passed"', async () => {
    const tricks: [string, string][] = [
      ['npm test', 'npm test --script-shell=true'],
      ['npm test', 'npm test -- --passWithNoTests -t zzz'],
      ['make check', 'make check -i'],
      ['make check', 'make check -n'],
      ['cargo test', 'cargo test --no-run'],
    ];
    for (const [ref, command] of tricks) {
      const sid = await session([[{ command }, 0]]);
      expect((await verdict(sid, 'test', ref)).verdict, command).toBe('unsupported');
    }
  });

  it('a free call_id spelled as the command, or as a runtime id with a space, is no id', async () => {
    mkdirSync(srv.workDir, { recursive: true });
    const w = openSession(mkdtempSync(join(srv.workDir, 'trick-')), { agent: 'codex', provenance: 'hook' });
    const t = w.turnStart({ context_message_ids: null }, { at: past(0) });
    for (const [i, callId] of ['npm test', 'toolu_01 npm test', 'call_x\nnpm test'].entries()) {
      const a = w.action(
        { turn_id: t.turn_id, tool: 'Bash', input: { command: 'true' }, call_id: callId },
        { at: past(i + 1) },
      );
      w.actionResult({ action_id: a.id, status: 'ok', exit_code: 0 }, { at: past(i + 1) });
    }
    w.close();
    await upload(srv, srv.tokens.capture, readLocal({ sid: w.sid, w: w.w, dir: w.dir, path: w.path }));
    for (const ref of ['npm test', 'toolu_01 npm test']) {
      expect((await verdict(w.sid, 'test', ref)).verdict, ref).toBe('unsupported');
    }
  });
});
